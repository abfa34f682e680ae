// qvalue's arithmetic operators as CPython number slots (the fast path of `a + b` and friends).
#include "bindings.hpp"

namespace isthmus::pymod {

// Note [number slots]: pybind11 binds `__add__` as a method, so `a + b` went through CPython's
// generic slot wrapper (a lookup of `__add__` / `__radd__` in the type's dict), pybind11's
// dispatcher (overload loop, argument casters, type-registry lookups) and the lambda: about a
// third of a 1k-element add's time. The type's number slots are set here to plain functions
// that call the same apply_* code, so the operator's semantics are those of the methods, which
// stay in the class for explicit calls (`a.__add__(b)`), for NumPy's deferral check
// (`__array_priority__` with a reflected method present) and for help(). A slot receives the
// operands in expression order whichever of them is the qvalue (CPython calls
// `type(b)->nb_add(a, b)` for the reflected case), which is exactly apply_binary's order.
// Comparisons keep pybind11's path (rich comparison also handles strings and cells).

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
    return guarded([&] { return apply_unary(OP, py::handle(a).cast<const value&>()); });
}

} // namespace

void install_number_slots(py::handle cls) {
    auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
    ISTHMUS_ASSERT(type->tp_flags & Py_TPFLAGS_HEAPTYPE, "qvalue is not a heap type");
    PyNumberMethods& nb = reinterpret_cast<PyHeapTypeObject*>(type)->as_number;
    ISTHMUS_ASSERT(type->tp_as_number == &nb, "qvalue's number methods are not its own");
    nb.nb_add = nb_binary<binary_op::add>;
    nb.nb_subtract = nb_binary<binary_op::sub>;
    nb.nb_multiply = nb_binary<binary_op::mul>;
    nb.nb_true_divide = nb_binary<binary_op::div>;
    nb.nb_floor_divide = nb_binary<binary_op::floor_div>;
    nb.nb_remainder = nb_binary<binary_op::mod>;
    nb.nb_power = nb_power;
    nb.nb_and = nb_binary<binary_op::bit_and>;
    nb.nb_or = nb_binary<binary_op::bit_or>;
    nb.nb_xor = nb_binary<binary_op::bit_xor>;
    nb.nb_lshift = nb_binary<binary_op::shift_left>;
    nb.nb_rshift = nb_binary<binary_op::shift_right>;
    nb.nb_matrix_multiply = nb_matmul;
    nb.nb_inplace_add = nb_inplace<binary_op::add>;
    nb.nb_inplace_subtract = nb_inplace<binary_op::sub>;
    nb.nb_inplace_multiply = nb_inplace<binary_op::mul>;
    nb.nb_inplace_true_divide = nb_inplace<binary_op::div>;
    nb.nb_inplace_floor_divide = nb_inplace<binary_op::floor_div>;
    nb.nb_inplace_remainder = nb_inplace<binary_op::mod>;
    nb.nb_inplace_power = nb_inplace_power;
    nb.nb_inplace_and = nb_inplace<binary_op::bit_and>;
    nb.nb_inplace_or = nb_inplace<binary_op::bit_or>;
    nb.nb_inplace_xor = nb_inplace<binary_op::bit_xor>;
    nb.nb_inplace_lshift = nb_inplace<binary_op::shift_left>;
    nb.nb_inplace_rshift = nb_inplace<binary_op::shift_right>;
    nb.nb_negative = nb_unary<unary_op::neg>;
    nb.nb_absolute = nb_unary<unary_op::abs>;
    nb.nb_invert = nb_unary<unary_op::bit_not>;
    PyType_Modified(type);
}

} // namespace isthmus::pymod
