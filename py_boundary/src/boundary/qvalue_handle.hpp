// The qvalue type seen from the boundary: is an object a qvalue, and the value it holds.
#pragma once

#include "isthmus/value.hpp"

#include <pybind11/pybind11.h>

#include <string>

namespace isthmus::boundary {

namespace py = pybind11;

/// The name of an object's type, for messages ("float", "list").
inline std::string type_name(py::handle obj) {
    return Py_TYPE(obj.ptr())->tp_name;
}
/// True for qvalue instances (false while the module has not registered the type yet).
bool is_qvalue(py::handle obj);
/// The value a qvalue object holds (no copy), or nullptr when `obj` is not a qvalue.
const value* qvalue_ptr(py::handle obj);

/// A new qvalue holding `v` (no copy of its data): the one place qvalues are made.
py::object qvalue_of(value v);

/// How a tensor result leaves (Note [outbound rule]).
enum class result_form {
    tensor,       ///< a tensor qvalue, whatever its rank
    scalar_if_0d, ///< a scalar qvalue for a 0-d result (NumPy's scalars), else a tensor qvalue
};
/// The qvalue for an op's tensor result `r` in form `f`.
py::object result_out(tensor r, result_form f);

} // namespace isthmus::boundary
