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

} // namespace isthmus::boundary
