// The precompiled author layer: <isthmus/plugin.hpp> parsed and its support code compiled once
// per compiler, flags and header text, in the plugin cache (Note [precompiled plugin header]).
#pragma once

#include "compile_cache.hpp"

#include <string>
#include <vector>

namespace isthmus::plugin_host {

/// What a plugin compile would run, for its precompiled header.
struct pch_request {
    std::vector<std::string> cmd;   ///< the compiler command's words ($CXX)
    std::vector<std::string> flags; ///< the plugin compile's flags: the fixed ones, the user's
    std::string include_dir;        ///< the directory holding isthmus/plugin.hpp
    std::string layer_text;         ///< the author layer's text (author_layer_text)
    fs::path dir;                   ///< the cache directory
    bool eager = false;             ///< build now, even on the first cold compile (the build-time
                                    ///< step: Note [prebuilt plugin layer])
};

/// What a plugin compile adds to use the precompiled author layer.
struct precompiled_layer {
    std::string header; ///< to name with `-include`: loads the precompiled <isthmus/plugin.hpp>
                        ///< with ISTHMUS_PLUGIN_SEPARATE defined (Note [support object])
    std::string object; ///< the compiled support code, to link into the plugin
    /// to name with `-include` instead of `header` for a kernel-only compile: the precompiled
    /// kernel half of the layer (ISTHMUS_PLUGIN_LEAN; Note [kernel-only plugins] in
    /// author_layer.cpp)
    std::string lean_header;
    /// Where a compile that the layer broke marks it (`.failed` in the cache; empty for a prebuilt
    /// layer, which is never written): Clang refuses a precompiled header whose inputs changed
    /// (Note [precompiled headers under Clang]) and the compile is then retried without it.
    std::string failed_mark;
    bool strict = false; ///< the compiler fails on a stale precompiled header (Clang) instead of
                         ///< reading the header text (GCC)
    bool empty() const { return header.empty(); }
};

/// Whether a failed compile's output says that Clang refused `layer`'s precompiled header (its
/// inputs changed since it was built: Note [precompiled headers under Clang]).
bool refused_precompiled_header(const precompiled_layer& layer, const std::string& compiler_output);

/// Marks a layer that a compile refused as failed, so later compiles do not use it (nothing for a
/// prebuilt layer).
void mark_layer_failed(const precompiled_layer& layer, const std::string& compiler_output);

/// The precompiled layer for these inputs: the prebuilt one installed with the library when its
/// key matches (Note [prebuilt plugin layer]), else the cache's, built first when the cache has
/// none and a compile with them ran before (or `r.eager`); empty where none is used: the first
/// cold compile with these inputs, a compiler other than GCC or Clang, ISTHMUS_PLUGIN_PCH=0, or a
/// build that failed before.
precompiled_layer precompiled_header(const pch_request& r, interrupt_check& ic,
                                     slow_compile_reporter& rep);

/// The directories searched for a prebuilt layer, in order: $ISTHMUS_PLUGIN_LAYER_DIR alone when
/// it is set, else `isthmus-plugin-layer/` beside the loaded library, then the build tree's
/// (Note [prebuilt plugin layer]).
std::vector<fs::path> prebuilt_layer_dirs();

/// Builds the layer a plain C++ compile_string (the default compiler, no extra flags) uses into
/// `dir`, removing other layers there; returns the files' stem ("" when this compiler gets none, as
/// a compiler other than GCC or Clang). The build-time step
/// (plugins/prebuilt/isthmus_plugin_layer.cpp).
std::string prebuild_plugin_layer(const fs::path& dir);

} // namespace isthmus::plugin_host
