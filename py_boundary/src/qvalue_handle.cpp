// The qvalue type seen from the boundary: is an object a qvalue, and the value it holds.
#include "boundary/qvalue_handle.hpp"

#include "boundary/conversions.hpp"

#include "isthmus/error.hpp"
#include "isthmus/storage.hpp"

#include <atomic>
#include <new>

namespace isthmus::boundary {

// Note [qvalue type]
// ~~~~~~~~~~~~~~~~~~
// qvalue is a CPython type the project owns (made by the module, cpp_in_py/src/qvalue/type.cpp),
// not a pybind11 class: its instances hold the value inline (qvalue_object), so reading an operand
// is a type compare and a field address, and making a result is one tp_alloc and a placement new,
// with no binding library's instance registry in between. pybind11 still binds the methods and
// module functions: its caster for isthmus::value (qvalue_handle.hpp) goes through this layout, so
// `const value&` parameters and `value` results work as before. One scheme, then: the type's
// slots (construction, lifetime, the number and buffer slots, where speed or CPython asks for a
// slot) are set in C, every other attribute is a pybind11 function bound through qvalue_class;
// all of them are defined in cpp_in_py/src/qvalue/ (listed in its qvalue.hpp), and the few
// written in Python in isthmus/_qvalue_python.py.
namespace {
std::atomic<PyTypeObject*> g_type{nullptr};
} // namespace

PyTypeObject* qvalue_type() noexcept {
    return g_type.load(std::memory_order_acquire);
}

void set_qvalue_type(PyTypeObject* type) noexcept {
    g_type.store(type, std::memory_order_release);
}

py::object qvalue_of(value v) {
    PyTypeObject* t = qvalue_type();
    ISTHMUS_CHECK(t, runtime_error,
                  "a runtime value cannot become a qvalue before the isthmus module is imported");
    PyObject* o = t->tp_alloc(t, 0); // zeroed, a new reference
    if (!o) throw py::error_already_set();
    auto* q = reinterpret_cast<qvalue_object*>(o);
    new (&q->v) value(std::move(v));
    q->weakrefs = nullptr;
    return py::reinterpret_steal<py::object>(o);
}

// Note [outbound rule]
// ~~~~~~~~~~~~~~~~~~~~
// Runtime values leave for Python through one of three doors (docs/boundary.md, "The outbound
// rule"): op results as qvalues (result_out: a tensor qvalue, or a scalar qvalue where NumPy gives
// a scalar: ops whose operands were all scalars, full reductions, an integer for every dimension),
// values handed to Python code as native objects (plugin results and C++ to_py: Python numbers,
// str, None; tensors as qvalues or, for C++ hosts, NumPy arrays over the same memory), and explicit
// copies (A.to_py()).
// Note [device 0-d results]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// A 0-d result that is valid only on a device (a full reduction of a GPU value) stays a 0-d tensor
// there, as CuPy and torch keep theirs: a scalar lives on the host, so making one would wait for
// the GPU and copy on every reduction of a device pipeline. float(), int(), bool(), .item() and
// NumPy read it when asked.
py::object result_out(tensor r, result_form f) {
    // A 0-d result that requires grad stays a tensor (loss.backward() needs it).
    if (f == result_form::scalar_if_0d && r.dim() == 0 && !r.requires_grad() &&
        (!r.storage() || r.storage()->valid_on(MEMRESOURCE_CPU)))
        return qvalue_of(value(scalar_from_tensor(r)));
    return qvalue_of(value(std::move(r)));
}

} // namespace isthmus::boundary
