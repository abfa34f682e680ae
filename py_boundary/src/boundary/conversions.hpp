// Values across the Python boundary: numbers, lists, arrays and qvalues in; values back out.
#pragma once

#include "boundary/arrays.hpp"

#include "isthmus/tensor.hpp"
#include "isthmus/value.hpp"

#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <string>

namespace isthmus::boundary {

namespace py = pybind11;

/// A Python number (bool, int, float, complex, NumPy scalar) as a scalar, converted to `dt`
/// when given. Python floats become scalar_dtype() and complex numbers cscalar_dtype().
scalar scalar_from_py(py::handle obj, std::optional<dtype> dt);
/// A Python number read exactly (float64, complex128, ints, bool) at the `scalar` precision:
/// floats as scalar_dtype(), complex numbers as cscalar_dtype(), others unchanged.
scalar at_scalar_precision(const scalar& exact);
/// True for NumPy scalars (np.float64, np.int32, ...; not Python's own numbers).
bool is_numpy_scalar(py::handle obj);
/// True for Python numbers and NumPy scalars (not 0-d arrays).
bool is_py_number(py::handle obj);
/// What an inbound conversion may do with an object's memory, and for which entry point.
struct inbound {
    copy_policy copy = copy_policy::if_needed; ///< always: memory of its own; never: share or fail
    std::optional<dtype> dt = std::nullopt;    ///< the dtype wanted (a conversion copies)
    const char* fn = "isthmus";                ///< the entry point, named in messages
    /// The value is dropped before control returns to Python (a kernel launch's argument):
    /// tensor_from_dlpack's `transient`.
    bool transient = false;
};
/// The one inbound conversion (Note [inbound rule], the table in docs/boundary.md): any Python
/// object to a runtime value, sharing memory where the rule says so.
value value_in(py::handle obj, const inbound& in);
/// value_in for places that need a tensor: numbers become 0-d tensors; None, strings, cells and
/// objects raise TypeError naming `in.fn`. A tensor qvalue is returned itself (no copy).
tensor tensor_in(py::handle obj, const inbound& in);
/// `q.value(obj, dtype)`: a new value holding a copy of `obj` (qvalue, number, string, list,
/// NumPy array or anything np.asarray accepts).
value value_from_py(py::handle obj, std::optional<dtype> dt);
/// `q.asvalue(obj)`: value_in with copies only where needed (the qvalue itself, arrays shared).
value asvalue(py::handle obj);
/// The value of `item` for an assignment into a tensor of dtype `target`: Python numbers
/// converted exactly to `target` (OverflowError when out of range), anything else as asvalue.
value assigned_value(py::handle item, dtype target);
/// An integer argument (anything with __index__, not bool): type_error otherwise, and
/// overflow_error naming `fn` and `what` when it does not fit in int64.
int64_t int64_from_py(py::handle obj, const char* fn, const char* what);
/// A str argument as UTF-8: type_error for other types, value_error naming `fn` and `what` for
/// text with a lone surrogate (no UTF-8 form) or a NUL character (C APIs would cut it there).
std::string text_from_py(py::handle obj, const char* fn, const char* what);
/// `A.to_py()`: a NumPy array copy (tensors), a NumPy scalar (scalars), str, None or a nested
/// list (cells).
py::object to_py(const value& v);
/// The single element of a tensor as a scalar of the tensor's dtype.
scalar scalar_from_tensor(const tensor& t);
/// Sizes given as varargs (`zeros(2, 3)`) or one sequence (`zeros([2, 3])`, `zeros((2, 3))`).
shape_t sizes_from_args(const py::args& args, const char* fn);
/// One non-negative size (Python int or anything with __index__).
int64_t size_from_py(py::handle obj, const char* fn);

} // namespace isthmus::boundary
