// One C++ or CUDA compile's command line, and a built plugin's place in the cache: what the
// compiler driver (compiler.cpp) and the kernel-only builds (kernel_only_build.cpp) share.
#pragma once

#include "compile_cache.hpp"
#include "isthmus/plugin_host.hpp"
#include "precompiled_header.hpp"

#include <memory>
#include <string>
#include <vector>

namespace isthmus::plugin_host {

/// What a C++ or CUDA compile runs: the compiler command, its fixed flags, the user's.
struct compile_setup {
    std::vector<std::string> cmd;   // the compiler command (words): nvcc, or the C++ compiler
    std::vector<std::string> fixed; // its fixed flags
    std::vector<std::string> flags; // compile_options::flags
    std::string inc;                // the author layer's include directory
    bool cuda = false;
    bool nvrtc = false;
};

/// The command line that compiles `src` into `out` against layer `l` (its kernel half when `lean`),
/// with `extra` flags after the user's and `tier_header` included after the layer (the quick
/// build's -O1 and isthmus/plugin/quick_build.hpp: Note [compile tiers]); with `object_only`, into
/// an object that the caller links (See Note [direct links for quick builds]).
std::vector<std::string> compile_command(const compile_setup& c, const precompiled_layer& l,
                                         bool lean, const fs::path& src, const fs::path& out,
                                         const std::vector<std::string>& extra = {},
                                         const std::string& tier_header = {},
                                         bool object_only = false);

/// Seals the compiler's output `tmp_so` and installs it as `so` with its `meta` (written last).
void install_entry(const fs::path& tmp_so, const fs::path& so, const fs::path& meta,
                   const std::string& extra);

/// The cached library at `so` when `valid()` says its entry is complete, else nullptr (also when it
/// vanished between the check and the load: `python -m isthmus.cache clear` in another process).
/// Throws when the directory is refused (Note [cache trust model]) or the library does not load.
template <typename Valid>
std::shared_ptr<library> cached_entry(const fs::path& dir, const fs::path& so, Valid valid) {
    if (!cache_dir_ready(dir, false) || !valid()) return nullptr;
    try {
        return load(so.string());
    } catch (const isthmus::error&) {
        if (lstat_problem(so).empty()) throw; // a real load error, not a vanished entry
    }
    return nullptr;
}

} // namespace isthmus::plugin_host
