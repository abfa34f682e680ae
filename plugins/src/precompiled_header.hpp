// The precompiled author layer: <isthmus/plugin.hpp> parsed and its support code compiled once
// per compiler, flags and header text, in the plugin cache (Note [precompiled plugin header]).
#pragma once

#include "compile_cache.hpp"

#include <string>
#include <vector>

namespace isthmus::plugins {

/// What a plugin compile would run, for its precompiled header.
struct pch_request {
    std::vector<std::string> cmd;   ///< the compiler command's words ($CXX)
    std::vector<std::string> flags; ///< the plugin compile's flags: the fixed ones, the user's
    std::string include_dir;        ///< the directory holding isthmus/plugin.hpp
    std::string layer_text;         ///< the author layer's text (author_layer_text)
    fs::path dir;                   ///< the cache directory
};

/// What a plugin compile adds to use the precompiled author layer.
struct precompiled_layer {
    std::string header; ///< to name with `-include`: loads the precompiled <isthmus/plugin.hpp>
                        ///< with ISTHMUS_PLUGIN_SEPARATE defined (Note [support object])
    std::string object; ///< the compiled support code, to link into the plugin
    bool empty() const { return header.empty(); }
};

/// The precompiled layer for these inputs, built first when the cache has none and a compile with
/// them ran before; empty where none is used: the first cold compile with these inputs, a
/// compiler other than GCC, ISTHMUS_PLUGIN_PCH=0, or a build that failed before.
precompiled_layer precompiled_header(const pch_request& r, interrupt_check& ic,
                                     slow_compile_reporter& rep);

} // namespace isthmus::plugins
