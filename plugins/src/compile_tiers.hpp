// Compile tiers: the background worker that builds a quick plugin's optimised tier and moves its
// kernels onto it (Note [compile tiers] in compile_tiers.cpp).
#pragma once

#include "isthmus/plugin_host.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace isthmus::plugin_host {

/// Whether extra compiler flags keep a quick build's results identical to the optimised one's,
/// so that a compile with them may be tiered: only -D, -U, -I, -isystem, -W*, -w and -g* flags.
/// See Note [compile tiers].
bool tierable_flags(const std::vector<std::string>& flags);

/// Whether $ISTHMUS_COMPILE_TIERS allows tiers (anything but "0").
bool tiers_enabled();

/// The background builds' interrupt poll: true once the process exits (See Note [compile tiers]).
bool background_stop() noexcept;

/// Queues the optimised build of the quick library `quick`: `build` runs on the background
/// worker and returns the optimised library (or throws); its kernels then replace `quick`'s,
/// which follow them (kernel::abi). A failure is reported as a compile notice and `quick` stays
/// as it is. Does nothing when `quick` already has a build queued, running or done. `what` is
/// the build as stop_background_builds hands it over.
void build_optimised_later(const std::shared_ptr<library>& quick,
                           std::function<std::shared_ptr<library>()> build, pending_build what);

} // namespace isthmus::plugin_host
