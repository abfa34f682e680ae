// Shared declarations of the Python module's binding files: operands, operators, binders.
#pragma once

#include "isthmus/config.hpp"
#include "isthmus/dtype.hpp"
#include "isthmus/error.hpp"
#include "isthmus/interrupt.hpp"
#include "isthmus/memory.hpp"
#include "isthmus/ops/elementwise.hpp"
#include "isthmus/ops/reduce.hpp"
#include "isthmus/storage.hpp"
#include "isthmus/tensor.hpp"
#include "isthmus/value.hpp"

#include "boundary/arrays.hpp"
#include "boundary/conversions.hpp"
#include "boundary/dlpack.hpp"
#include "boundary/dtypes.hpp"
#include "boundary/errors.hpp"
#include "boundary/gil.hpp"
#include "boundary/qvalue_handle.hpp"
#include "boundary/session.hpp"

#include <pybind11/pybind11.h>

#include <atomic>
#include <optional>
#include <string>

namespace isthmus::pymod {

namespace py = pybind11;

// Note [one boundary]
// ~~~~~~~~~~~~~~~~~~~
// The conversions between Python objects and runtime values, the qvalue type handle, the error
// mapping, the init/destroy state and the GIL sections are the Python boundary's (py_boundary/),
// shared with the embedded interpreter (py_in_cpp/); the module's files use them by their plain
// names.
using namespace ::isthmus::boundary;

// ---- shared by the module's files ----

/// Any array-like as a tensor (numbers as 0-d tensors); type_error naming `fn` otherwise.
tensor tensor_arg(py::handle obj, const char* fn);

// ---- binders, one per file (the qvalue type's own: qvalue/qvalue.hpp) ----

void bind_errors(py::module_& m);

void bind_functions(py::module_& m);
void bind_module_ops(py::module_& m);
/// q.concatenate ... q.put_along_axis: the shape and indexing functions (module_shape.cpp).
void bind_module_shape(py::module_& m);
/// A sequence of array-likes as tensors; type_error naming `fn` otherwise (module_ops.cpp).
std::vector<tensor> tensor_list(py::handle seq, const char* fn);
/// An axis argument: None or an int (module_ops.cpp).
std::optional<int64_t> optional_axis(py::handle axis, const char* fn);
/// An int argument `what` of `fn` (module_ops.cpp).
int64_t int_arg(py::handle v, const char* fn, const char* what);
/// Op results as tensor qvalues, one or a tuple of them (module_ops.cpp).
py::object tensor_result(tensor t);
py::tuple tensor_tuple(std::vector<tensor> ts);
/// q.zeros ... q.eye and the random numbers (module_creation.cpp).
void bind_module_creation(py::module_& m);
/// A list of ints (or one int) of argument `what` of function `fn` (module_ops.cpp).
shape_t int_list(py::handle v, const char* fn, const char* what);
/// A number argument (a Python or NumPy number, a scalar qvalue) (module_ops.cpp).
scalar scalar_arg(py::handle v, const char* fn, const char* what);
/// scalar_arg, with Python floats and complex numbers kept exact (float64/complex128) where
/// the value matters and the dtype is decided elsewhere (arange's bounds and step).
scalar exact_scalar_arg(py::handle v, const char* fn, const char* what);
/// grad_fn nodes, grad mode, q.autograd.grad (autograd_bindings.cpp).
void bind_autograd(py::module_& m);
void bind_plugins(py::module_& m);
void bind_placement(py::module_& m);
/// q.to(a, device, copy) and qvalue.to (placement.cpp): `a` with its data on `device`.
py::object value_to_device(py::handle a, const std::string& device, bool copy);

} // namespace isthmus::pymod
