// dtypes across the Python boundary: dtype arguments, NumPy dtypes, buffer format strings.
#pragma once

#include "isthmus/dtype.hpp"

#include <pybind11/pybind11.h>

#include <optional>

namespace isthmus::boundary {

namespace py = pybind11;

/// The `numpy` module (imported once).
py::module_& numpy();
/// The dtype an argument names: a string ("float32", "f4", "bfloat16", ...), a numpy.dtype, a
/// NumPy scalar type or a Python type (float -> float64, as NumPy). Throws type_error.
dtype dtype_from_py(py::handle obj);
/// dtype_from_py, or nullopt for None.
std::optional<dtype> optional_dtype(py::handle obj);
/// The dtype of a NumPy array or numpy.dtype object; throws type_error for dtypes isthmus lacks
/// (object, strings, datetimes, longdouble, ...).
dtype dtype_from_numpy(const py::handle& np_dtype);
/// The numpy.dtype of `dt`; throws type_error for bfloat16, which NumPy has no dtype for.
py::object numpy_dtype(dtype dt);
/// What `A.dtype` shows: the numpy.dtype, or the string "bfloat16".
py::object dtype_attr(dtype dt);
/// The buffer-protocol format string of `dt` (struct module syntax); bfloat16 throws type_error.
const char* buffer_format(dtype dt);

} // namespace isthmus::boundary
