// The qvalue type seen from the boundary: its instance layout, is an object a qvalue, the value
// it holds, new qvalues, and pybind11's conversion of isthmus::value through them.
#pragma once

#include "isthmus/error.hpp"
#include "isthmus/tensor.hpp"
#include "isthmus/value.hpp"

#include <pybind11/pybind11.h>

#include <string>

namespace isthmus::boundary {

namespace py = pybind11;

/// A qvalue instance (Note [qvalue type]): a CPython object holding one runtime value.
struct qvalue_object {
    PyObject_HEAD value v; ///< constructed by qvalue_of / tp_new, destroyed by tp_dealloc
    PyObject* weakrefs;    ///< the weak reference list (the exports' pins use weakrefs)
};

/// The qvalue type object, or null before the module made it (an embedding program may
/// convert values before `isthmus` is imported: then nothing is a qvalue yet).
PyTypeObject* qvalue_type() noexcept;
/// Records the type the module made (once, at import; Note [qvalue type]).
void set_qvalue_type(PyTypeObject* type) noexcept;

/// The name of an object's type, for messages ("float", "list").
inline std::string type_name(py::handle obj) {
    return Py_TYPE(obj.ptr())->tp_name;
}
/// True for qvalue instances (an exact type check and a pointer compare).
inline bool is_qvalue(py::handle obj) {
    PyTypeObject* t = qvalue_type();
    return t && Py_TYPE(obj.ptr()) == t;
}
/// The value a qvalue object holds (no copy), or nullptr when `obj` is not a qvalue.
inline value* qvalue_ptr(py::handle obj) {
    return is_qvalue(obj) ? &reinterpret_cast<qvalue_object*>(obj.ptr())->v : nullptr;
}

/// The value inside qvalue `obj` (no copy); type_error for anything else.
inline value& qvalue_ref(py::handle obj) {
    value* p = qvalue_ptr(obj);
    if (!p) ISTHMUS_THROW(type_error, "expected a qvalue, got a ", type_name(obj));
    return *p;
}

/// A new qvalue holding `v` (no copy of its data): the one place qvalues are made. Throws
/// runtime_error before the module made the type.
py::object qvalue_of(value v);

/// How a tensor result leaves (Note [outbound rule]).
enum class result_form {
    tensor,       ///< a tensor qvalue, whatever its rank
    scalar_if_0d, ///< a scalar qvalue for a 0-d result (NumPy's scalars), else a tensor qvalue
};
/// The qvalue for an op's tensor result `r` in form `f`.
py::object result_out(tensor r, result_form f);

} // namespace isthmus::boundary

namespace pybind11::detail {

/// pybind11 converts isthmus::value through the qvalue type (Note [qvalue type]): an argument
/// is the value inside a qvalue (by reference: methods see and change the object's own value),
/// a result becomes a new qvalue. Every file that binds functions taking or returning values
/// includes this header (through bindings.hpp or the boundary's headers).
template <>
struct type_caster<isthmus::value> {
    static constexpr auto name = const_name("qvalue");
    template <typename T>
    using cast_op_type = pybind11::detail::cast_op_type<T>;

    bool load(handle src, bool /*convert*/) {
        ptr_ = isthmus::boundary::qvalue_ptr(src);
        return ptr_ != nullptr;
    }
    operator isthmus::value*() { return ptr_; }
    operator isthmus::value&() {
        if (!ptr_) throw reference_cast_error();
        return *ptr_;
    }
    static handle cast(const isthmus::value& v, return_value_policy, handle) {
        return isthmus::boundary::qvalue_of(v).release();
    }
    static handle cast(isthmus::value&& v, return_value_policy, handle) {
        return isthmus::boundary::qvalue_of(std::move(v)).release();
    }
    static handle cast(const isthmus::value* v, return_value_policy, handle) {
        if (!v) return none().release();
        return isthmus::boundary::qvalue_of(*v).release();
    }

private:
    isthmus::value* ptr_ = nullptr;
};

} // namespace pybind11::detail
