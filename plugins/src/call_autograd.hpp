// Recording plugin function calls for autograd (Note [plugin calls in autograd]).
#pragma once

#include "isthmus/plugin_host.hpp"

#include <span>

namespace isthmus::plugin_host::detail {

/// Records the call `fn(args) -> result` when grad mode is on and a tensor argument requires
/// grad: a node whose backward is fn's derived vector-Jacobian product, or a node that refuses
/// backward naming fn when it has none.
void record_call(const function& fn, std::span<const value> args, const value& result);

/// Refuses, before anything runs, a launch that would write into a tensor that requires grad
/// while grad mode is on (runtime_error: in-place writes are not recorded).
void check_launch_writes(std::span<const value> args, const kernel& k);

/// Records the launch `parallel_do(dims, args, k)` when grad mode is on and a tensor it reads
/// requires grad: its one written tensor gets a node whose backward runs k's derived kernel, or a
/// node that refuses backward naming k when it has none (or writes several tensors).
void record_launch(const shape_t& dims, std::span<const value> args, const kernel& k);

} // namespace isthmus::plugin_host::detail
