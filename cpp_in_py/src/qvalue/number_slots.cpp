// qvalue's arithmetic operators as CPython number slots (the fast path of `a + b` and friends).
#include "qvalue/qvalue.hpp"

namespace isthmus::pymod {

// Note [number slots]
// ~~~~~~~~~~~~~~~~~~~
// qvalue's arithmetic operators are the number slots of its own type (Note [qvalue type]), plain
// functions calling the operator code: `a + b` costs no lookup of `__add__` / `__radd__` and no
// argument dispatch. The methods (`__add__`, ...) stay in the class for explicit calls
// (`a.__add__(b)`), for NumPy's deferral check (`__array_priority__` with a reflected method
// present) and for help(); adding them resets the slots to CPython's generic wrappers, so the slots
// are set here after every binder. A slot receives the operands in expression order whichever of
// them is the qvalue (CPython calls `type(b)->nb_add(a, b)` for the reflected case), which is
// exactly apply_binary's order. Comparisons go through the methods (rich comparison also handles
// strings and cells).

namespace {

template <class F>
PyObject* guarded(F&& f) noexcept {
    try {
        return f().release().ptr();
    } catch (...) {
        set_python_error(std::current_exception());
        return nullptr;
    }
}

template <binary_op OP>
PyObject* nb_binary(PyObject* a, PyObject* b) noexcept {
    return guarded([&] { return apply_binary(OP, a, b); });
}

template <binary_op OP>
PyObject* nb_inplace(PyObject* self, PyObject* other) noexcept {
    return guarded([&] { return apply_inplace(OP, self, other); });
}

// pow(a, b, m) with a modulus is not defined for qvalues: Python raises its TypeError.
PyObject* nb_power(PyObject* a, PyObject* b, PyObject* m) noexcept {
    if (m != Py_None) Py_RETURN_NOTIMPLEMENTED;
    return nb_binary<binary_op::pow>(a, b);
}

PyObject* nb_inplace_power(PyObject* self, PyObject* other, PyObject* m) noexcept {
    if (m != Py_None) Py_RETURN_NOTIMPLEMENTED;
    return nb_inplace<binary_op::pow>(self, other);
}

PyObject* nb_matmul(PyObject* a, PyObject* b) noexcept {
    return guarded([&] { return apply_matmul(a, b); });
}

template <unary_op OP>
PyObject* nb_unary(PyObject* a) noexcept {
    return guarded([&] {
        const value* v = qvalue_ptr(a); // a unary slot is only called on qvalues
        return v ? apply_unary(OP, *v) : not_implemented();
    });
}

} // namespace

void install_number_slots(py::handle cls) {
    auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
    ISTHMUS_ASSERT(type->tp_flags & Py_TPFLAGS_HEAPTYPE, "qvalue is not a heap type");
    PyNumberMethods& nb = reinterpret_cast<PyHeapTypeObject*>(type)->as_number;
    ISTHMUS_ASSERT(type->tp_as_number == &nb, "qvalue's number methods are not its own");
    // each arithmetic slot and its in-place form (pow and matmul take other signatures)
#define ISTHMUS_SLOTS(SLOT, OP)                                                                    \
    nb.nb_##SLOT = nb_binary<binary_op::OP>;                                                       \
    nb.nb_inplace_##SLOT = nb_inplace<binary_op::OP>;
    ISTHMUS_SLOTS(add, add)
    ISTHMUS_SLOTS(subtract, sub)
    ISTHMUS_SLOTS(multiply, mul)
    ISTHMUS_SLOTS(true_divide, div)
    ISTHMUS_SLOTS(floor_divide, floor_div)
    ISTHMUS_SLOTS(remainder, mod)
    ISTHMUS_SLOTS(and, bit_and)
    ISTHMUS_SLOTS(or, bit_or)
    ISTHMUS_SLOTS(xor, bit_xor)
    ISTHMUS_SLOTS(lshift, shift_left)
    ISTHMUS_SLOTS(rshift, shift_right)
#undef ISTHMUS_SLOTS
    nb.nb_power = nb_power;
    nb.nb_inplace_power = nb_inplace_power;
    nb.nb_matrix_multiply = nb_matmul;
    nb.nb_negative = nb_unary<unary_op::neg>;
    nb.nb_absolute = nb_unary<unary_op::abs>;
    nb.nb_invert = nb_unary<unary_op::bit_not>;
    PyType_Modified(type);
}

} // namespace isthmus::pymod
