// What the plugin bindings share: the Python types of kernels and objects, argument conversion.
#pragma once

#include "bindings.hpp"

#include "isthmus/plugin_host.hpp"

#include <memory>
#include <string>

namespace isthmus::pymod {

/// q.native_kernel: a plugin kernel (plugin_kernels.cpp).
struct native_kernel {
    std::shared_ptr<plugin_host::kernel> k;
};

/// q.native_object: an instance of a plugin object type (plugin_objects.cpp).
struct native_object {
    std::shared_ptr<plugin_host::plugin_object> o;
};

/// q.native_event: an event of a native object.
struct native_event {
    std::shared_ptr<plugin_host::plugin_object> o;
    std::string name;
};

// Defined in plugins.cpp:
/// A Python int for messages: its digits, or its size when it is too long to print usefully.
std::string int_text(py::handle h);
/// Makes `cls` (a type whose instances only the runtime makes) refuse `cls.__new__(cls)`,
/// naming where its instances come from (Note [runtime-made types refuse __new__]).
void refuse_python_new(py::handle cls, const char* made_by);
/// A Python object as the value of a plugin argument for parameter `p` (NULL: unknown; Note
/// [plugin argument conversion]). `transient` as for call_arg.
value arg_value(py::handle h, const isthmus_param* p = nullptr, bool transient = false);
/// A Python callable as a host callable (called with the GIL taken, from any thread).
plugin_host::host_callable python_callable(py::object fn);
/// A plugin object as a q.native_object.
py::object wrap_object(std::shared_ptr<plugin_host::plugin_object> o);
/// Whether `h` is a q.native_object.
bool is_native_object(py::handle h);
/// A q.native_object as a value (its instance).
value native_object_value(py::handle h);

/// The native_kernel and checked types and parallel_do (plugin_kernels.cpp).
void bind_plugin_kernels(py::module_& m);
/// The native_object and native_event types (plugin_objects.cpp).
void bind_plugin_objects(py::module_& m);

} // namespace isthmus::pymod
