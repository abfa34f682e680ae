// NumPy arrays across the Python boundary: a tensor from an array (zero-copy where it can) and
// back.
#pragma once

#include "isthmus/tensor.hpp"

#include <pybind11/pybind11.h>

#include <optional>

namespace isthmus::boundary {

namespace py = pybind11;

/// How imports treat copies (NumPy 2's and DLPack's `copy=` keyword: True, None, False).
enum class copy_policy { always, if_needed, never };
/// `copy=` of function `fn` as a policy: True always, None if_needed, False never; type_error
/// for anything else.
copy_policy copy_policy_of(py::handle copy, const char* fn);
/// A tensor from a NumPy array: zero-copy (wrapping the array, which is kept alive) when the
/// layout allows and `policy` is not always; a new tensor of dtype `dt` otherwise.
tensor tensor_from_array(py::handle array, copy_policy policy,
                         std::optional<dtype> dt = std::nullopt);
/// np.asarray(obj, copy=...) with NumPy 2's meaning on NumPy 1 and 2.
py::object asarray_with_copy(py::handle obj, copy_policy policy);
/// A new NumPy array holding a copy of `t`.
py::object array_copy(const tensor& t);

} // namespace isthmus::boundary
