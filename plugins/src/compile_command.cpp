// One C++ or CUDA compile's command line, and installing what it built into the cache.
#include "compile_command.hpp"

namespace isthmus::plugin_host {

// The command line that compiles `src` into `out` against layer `l` (its kernel half when `lean`),
// with `extra` flags after the user's and `tier_header` included after the layer (the quick
// build's -O1 and isthmus/plugin/quick_build.hpp: Note [compile tiers]); with `object_only`, into
// an object that the caller links (See Note [direct links for quick builds]).
std::vector<std::string> compile_command(const compile_setup& c, const precompiled_layer& l,
                                         bool lean, const fs::path& src, const fs::path& out,
                                         const std::vector<std::string>& extra,
                                         const std::string& tier_header, bool object_only) {
    std::vector<std::string> argv = c.cmd;
    for (const auto& f : c.fixed) argv.push_back(f);
    for (const auto& f : c.flags) argv.push_back(f);
    for (const auto& f : extra) argv.push_back(f);
    argv.push_back("-I" + c.inc);
    if (!l.empty() && (!c.cuda || c.nvrtc)) { // Note [precompiled plugin header]
        argv.push_back("-include");
        argv.push_back(lean ? l.lean_header : l.header);
    } else if (!l.empty()) { // Note [support object in CUDA plugins]
        argv.push_back("-DISTHMUS_PLUGIN_SEPARATE=1");
    }
    if (!tier_header.empty()) {
        argv.push_back("-include");
        argv.push_back(tier_header);
    }
    if (c.nvrtc) argv.push_back("-xc++"); // the host pass of a .cu file is C++
    if (object_only) argv.push_back("-c");
    argv.push_back(src.string());
    if (c.nvrtc) argv.push_back("-xnone");
    if (!l.empty() && !object_only) argv.push_back(l.object); // Note [support object]
    argv.push_back("-o");
    argv.push_back(out.string());
    return argv;
}

// Seals the compiler's output `tmp_so` and installs it as `so` with its `meta` (written last).
void install_entry(const fs::path& tmp_so, const fs::path& so, const fs::path& meta,
                   const std::string& extra) {
    const auto [size, hash] = seal(tmp_so); // Note [cache trust model]
    install(tmp_so, so);
    write_atomically(meta, meta_text(size, hash, extra));
}

} // namespace isthmus::plugin_host
