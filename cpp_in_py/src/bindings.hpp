// Shared declarations of the Python module's binding files: runtime state, conversions, binders.
#pragma once

#include "isthmus/config.hpp"
#include "isthmus/dtype.hpp"
#include "isthmus/error.hpp"
#include "isthmus/memory.hpp"
#include "isthmus/storage.hpp"
#include "isthmus/tensor.hpp"
#include "isthmus/value.hpp"

#include <pybind11/pybind11.h>

#include <optional>
#include <string>

namespace isthmus::pymod {

namespace py = pybind11;

// ---- runtime state (module.cpp) ----

/// Throws runtime_error naming `what` unless init() was called (and destroy() was not since).
void require_init(const char* what);
/// True between init() and destroy().
bool initialized() noexcept;

// ---- dtypes (conversions.cpp) ----

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

// ---- values (conversions.cpp) ----

/// The `numpy` module (imported once).
py::module_& numpy();
/// The name of an object's type, for messages ("float", "list").
inline std::string type_name(py::handle obj) {
    return Py_TYPE(obj.ptr())->tp_name;
}
/// True for qvalue instances.
bool is_qvalue(py::handle obj);
/// A Python number (bool, int, float, complex, NumPy scalar) as a scalar, converted to `dt`
/// when given. Python floats become scalar_dtype() and complex numbers cscalar_dtype().
scalar scalar_from_py(py::handle obj, std::optional<dtype> dt);
/// True for Python numbers and NumPy scalars (not 0-d arrays).
bool is_py_number(py::handle obj);
/// `q.value(obj, dtype)`: a new value holding a copy of `obj` (qvalue, number, string, list,
/// NumPy array or anything np.asarray accepts).
value value_from_py(py::handle obj, std::optional<dtype> dt);
/// `q.asvalue(obj)`: the qvalue itself, a zero-copy tensor for arrays, else value_from_py.
value asvalue(py::handle obj);
/// `A.to_py()`: a NumPy array copy (tensors), a NumPy scalar (scalars), str, None or a nested
/// list (cells).
py::object to_py(const value& v);
/// The single element of a tensor as a scalar of the tensor's dtype.
scalar scalar_from_tensor(const tensor& t);
/// Sizes given as varargs (`zeros(2, 3)`) or one sequence (`zeros([2, 3])`, `zeros((2, 3))`).
shape_t sizes_from_args(const py::args& args, const char* fn);
/// One non-negative size (Python int or anything with __index__).
int64_t size_from_py(py::handle obj, const char* fn);

// ---- NumPy exchange (buffer.cpp) ----

/// How tensor_from_array treats copies (NumPy 2's `copy=` keyword: True, None, False).
enum class copy_policy { always, if_needed, never };
/// A tensor from a NumPy array: zero-copy (wrapping the array, which is kept alive) when the
/// layout allows and `policy` is not always; a new tensor of dtype `dt` otherwise.
tensor tensor_from_array(py::handle array, copy_policy policy,
                         std::optional<dtype> dt = std::nullopt);
/// A new NumPy array holding a copy of `t`.
py::object array_copy(const tensor& t);

// ---- ops (operators.cpp) ----

/// `t[key]` for keys with index arrays or masks (NumPy's advanced indexing; a copy).
py::object advanced_getitem(const tensor& t, py::handle key);
/// `t[key] = item` for keys with index arrays or masks.
void advanced_setitem(const tensor& t, py::handle key, py::handle item);

// ---- errors (errors.cpp) ----

/// Sets the Python error for a C++ exception (isthmus errors as in Note [error mapping], pybind11
/// errors as pybind11 would); for C callbacks (buffer protocol) that must return -1.
void set_python_error(std::exception_ptr p) noexcept;

// ---- binders, one per file ----

void bind_errors(py::module_& m);
void bind_qvalue(py::module_& m);
void bind_buffer(py::module_& m);
void bind_functions(py::module_& m);
void bind_operators(py::module_& m);
void bind_plugins(py::module_& m);

} // namespace isthmus::pymod
