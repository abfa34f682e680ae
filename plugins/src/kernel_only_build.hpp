// A kernel-only C++ source's builds: the quick build compile_string returns first and the
// optimised build that replaces it (Note [compile tiers] in compile_tiers.cpp).
#pragma once

#include "compile_command.hpp"

#include <memory>
#include <string>
#include <vector>

namespace isthmus::plugin_host {

/// One C++ build of a kernel-only source (See Note [compile tiers]).
struct kernel_only_build {
    compile_setup setup;
    precompiled_layer layer;
    std::string text; // the compiled text
    fs::path dir;     // the cache directory
    std::string stem; // <name>-<key>
    std::string ext;  // ".cpp"
    std::string meta_extra;
    std::vector<std::string> tier_flags;
    std::string tier_header;
    bool background = false;  // See Note [background compiles yield]
    bool direct_link = false; // See Note [direct links for quick builds]
};

/// Runs the build `b` under its entry's lock, unless another process installed the entry
/// meanwhile; false when the compiler failed (nothing is installed; its messages in `output`).
bool build_kernel_only(const kernel_only_build& b, interrupt_check& ic, slow_compile_reporter& rep,
                       std::string& output);

/// See Note [compile tiers]: the quick build of a kernel-only C++ source (`key` is the optimised
/// build's key, `b` its build, `layer` the precompiled layer's request), with the optimised build
/// queued; nullptr when there is no quick build to give (no precompiled kernel half, or the source
/// does not compile against it: the caller's compile then takes over, with its messages).
std::shared_ptr<library> quick_tier(const std::string& name, const std::string& source,
                                    const compile_options& opts, const fnv& key,
                                    const kernel_only_build& b, const pch_request& layer);

} // namespace isthmus::plugin_host
