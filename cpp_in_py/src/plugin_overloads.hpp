// The overloads of plugin functions and kernels as Python records (signatures.py, stubgen).
#pragma once

#include "bindings.hpp"

#include "isthmus/plugin_host.hpp"

namespace isthmus::pymod {

/// native_function.overloads: one dict per overload (name, signature, doc, result, params;
/// each param: name, kind, dtype, ndim, vec_len, flags, type_name, type).
py::tuple function_overloads(const plugin_host::function& fn);
/// native_kernel.overloads: the kernel as one such dict, plus pos_ndim (the position's rank).
py::tuple kernel_overloads(const plugin_host::kernel& k);

} // namespace isthmus::pymod
