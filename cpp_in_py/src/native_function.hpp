// q.native_function: plugin functions as a CPython type with vectorcall.
// path]).
#pragma once

#include "bindings.hpp"

#include "isthmus/plugin_host.hpp"

#include <memory>
#include <string>
#include <string_view>

namespace isthmus::pymod {

/// Creates the type and adds it to the module as `native_function`.
void make_function_type(py::module_& m);
/// A native_function object calling `fn`.
py::object wrap_function(std::shared_ptr<plugin_host::function> fn);
/// Whether `h` is a native_function.
bool is_native_function(py::handle h);

// Defined in plugins.cpp, the conversions every plugin call shares:
/// Argument `i` of a call (`what` names the call in messages) as a value for parameter `p`.
/// `transient`: the value is dropped before the call returns to Python (a kernel launch's
/// arguments; Note [borrowed dlpack tensors]).
value call_arg(py::handle h, std::string_view what, size_t i, const isthmus_param* p,
               bool transient = false);
/// A plugin call's result as a Python object (several results, a 1-d cell, as a tuple).
py::object result_to_py(const value& v);

} // namespace isthmus::pymod
