// The author layer a plugin compiles against: its headers' text and the kernel-only test.
#pragma once

#include <string>

namespace isthmus::plugin_host {

/// The text of the headers a compiled plugin includes (plugin_abi.h, plugin.hpp, its parts), for
/// cache keys (Note [plugin cache] in compiler.cpp).
std::string author_layer_text(const std::string& include_dir);
/// author_layer_text, read once per include directory.
std::string cached_layer_text(const std::string& include_dir);
/// Whether a C++ source may compile against the kernel half of the layer first (See Note
/// [kernel-only plugins] in author_layer.cpp).
bool kernel_only_candidate(const std::string& source);

} // namespace isthmus::plugin_host
