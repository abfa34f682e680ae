// The precompiled plugin header: <isthmus/plugin.hpp> parsed once per compiler, flags and header
// text, kept in the plugin cache (Note [precompiled plugin header] in precompiled_header.cpp).
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

/// The header to name with `-include` so that the compiler loads the precompiled
/// <isthmus/plugin.hpp>, built first when the cache has none for these inputs and a compile
/// with them ran before; "" where none is used: the first cold compile with these inputs, a
/// compiler other than GCC, ISTHMUS_PLUGIN_PCH=0, or a build that failed before.
std::string precompiled_header(const pch_request& r, interrupt_check& ic,
                               slow_compile_reporter& rep);

} // namespace isthmus::plugins
