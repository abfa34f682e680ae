// parallel_do on the CPU: how a launch's positions are cut into blocks for the calling thread and
// the OpenMP threads.
#pragma once

#include "call_context.hpp"

#include "isthmus/interrupt.hpp"
#include "isthmus/plugin_abi.h"
#include "isthmus/plugin_host.hpp"

#include <atomic>
#include <cstdint>

namespace isthmus::plugin_host::detail {

/// Runs positions [0, total) of `base` through kernel `k`'s CPU launcher with the marshalled
/// arguments `vals`; each block takes the launcher of the build `k` runs from at that moment
/// (Note [compile tiers]). `k.cpu_cost_hint()` is what earlier launches of `k` measured
/// (nanoseconds per position on one thread, 0 when unknown); the launch reads it to plan and
/// stores what it measured. A failure is recorded in `ctx` and cancels the blocks not yet
/// started; `ic` cancels them when the host asks (the caller raises). See Note [CPU launch
/// plan].
void launch_cpu_blocks(const kernel& k, call_context& ctx, const isthmus_range& base, int64_t total,
                       const isthmus_value* vals, int32_t nvals, interrupt_check& ic);

} // namespace isthmus::plugin_host::detail
