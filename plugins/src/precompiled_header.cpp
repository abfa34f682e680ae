// The precompiled plugin header in the plugin cache (Note [precompiled plugin header]).
#include "precompiled_header.hpp"

#include "isthmus/plugin_abi.h"

#include <unistd.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>

namespace isthmus::plugins {

// Note [precompiled plugin header]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Parsing <isthmus/plugin.hpp> and the standard headers under it (90k lines) is 1.4-1.6 s of
// every cold compile on the development machine; GCC loads a precompiled header (.gch) of it in
// a few tens of milliseconds. The cache keeps one per key: the compiler's identity and command,
// the plugin compile's flags less the link-only ones (GCC refuses a .gch built with other
// code-generation options, and -D flags change what the header means), the author layer's text,
// the ABI version and the target. Its files share the stem isthmus-pch-<key>:
//   .hpp       one line, `#include <isthmus/plugin.hpp>`
//   .hpp.gch   the precompiled header, written to a temporary name and renamed into place
//   .meta      its size and hash, as a plugin's .meta records the .so's
//   .lock      held while it is built (the same flock as a plugin entry's)
//   .failed    the compiler's output when the build failed: later compiles do not retry it
//   .seen      written by the first cold compile with this key, which builds no header
// A plugin compile adds `-include isthmus-pch-<key>.hpp`: GCC takes the .gch beside it when the
// .gch is valid for the compile and otherwise reads the one-line header, so a stale or foreign
// .gch costs time, never correctness. Only the size is checked against the .meta on each compile
// (hashing 70 MB would cost what the header saves). The header is built by the second cold
// compile with a key, not the first: building it takes about twice a plugin's compile and 70 MB,
// which a one-off compile into a fresh cache (a CI job, a test's temporary cache) never earns
// back, while the second compile marks a user iterating on a kernel. Clang names and finds
// precompiled headers differently and gets none, as does any compiler that does not say it is GCC;
// ISTHMUS_PLUGIN_PCH=0 turns the header off.

namespace {

bool disabled() {
    const char* v = std::getenv("ISTHMUS_PLUGIN_PCH");
    return v && std::string(v) == "0";
}

// Whether `cmd --version` says GCC (asked once per command and process).
bool is_gcc(const std::vector<std::string>& cmd, const fs::path& dir, interrupt_check& ic,
            slow_compile_reporter& rep) {
    static std::mutex mu;
    static std::map<std::vector<std::string>, bool> known;
    {
        std::lock_guard lk(mu);
        if (auto it = known.find(cmd); it != known.end()) return it->second;
    }
    std::vector<std::string> argv = cmd;
    argv.push_back("--version");
    std::string out;
    const fs::path log = dir / ("isthmus-pch-version.log." + std::to_string(::getpid()));
    const int rc = run_compiler(argv, log, out, ic, rep);
    const bool gcc = rc == 0 && out.find("clang") == std::string::npos &&
                     out.find("Free Software Foundation") != std::string::npos;
    std::lock_guard lk(mu);
    known[cmd] = gcc;
    return gcc;
}

// The .gch exists and has the size its .meta records.
bool size_matches(const fs::path& gch, const fs::path& meta) {
    std::error_code ec;
    if (!fs::is_regular_file(gch, ec) || !fs::is_regular_file(meta, ec)) return false;
    std::istringstream is(read_file(meta));
    std::string magic, k1;
    uintmax_t size = 0;
    if (!(is >> magic >> k1 >> size) || magic != "isthmus-plugin-cache-1" || k1 != "size")
        return false;
    return fs::file_size(gch, ec) == size && !ec;
}

bool link_only(const std::string& flag) {
    return flag == "-shared" || flag.rfind("-Wl,", 0) == 0;
}

} // namespace

std::string precompiled_header(const pch_request& r, interrupt_check& ic,
                               slow_compile_reporter& rep) {
    if (disabled() || r.cmd.empty() || !is_gcc(r.cmd, r.dir, ic, rep)) return "";
    std::vector<std::string> flags;
    for (const auto& f : r.flags)
        if (!link_only(f)) flags.push_back(f);
    fnv key;
    key.add("pch-1");
    for (const auto& w : r.cmd) key.add(w);
    key.add(compiler_identity(r.cmd.front()));
    for (const auto& f : flags) key.add(f);
    key.add(r.include_dir);
    key.add(r.layer_text);
    key.add(std::to_string(ISTHMUS_PLUGIN_ABI_VERSION));
    key.add(target_identity());
    const std::string stem = "isthmus-pch-" + key.hex();
    const fs::path hpp = r.dir / (stem + ".hpp"), gch = r.dir / (stem + ".hpp.gch"),
                   meta = r.dir / (stem + ".meta"), failed = r.dir / (stem + ".failed");
    std::error_code ec;
    if (size_matches(gch, meta) && fs::is_regular_file(hpp, ec)) return hpp.string();
    if (fs::exists(failed, ec)) return "";
    const fs::path seen = r.dir / (stem + ".seen");
    if (!fs::exists(seen, ec)) {
        write_atomically(seen, "");
        return "";
    }

    file_lock lock(r.dir / (stem + ".lock"), ic, rep);
    if (size_matches(gch, meta) && fs::is_regular_file(hpp, ec)) return hpp.string();
    if (fs::exists(failed, ec)) return "";
    write_atomically(hpp, "#include <isthmus/plugin.hpp>\n");
    const fs::path tmp = gch.string() + ".tmp." + std::to_string(::getpid());
    std::vector<std::string> argv = r.cmd;
    argv.insert(argv.end(), flags.begin(), flags.end());
    for (const auto& a : {"-I" + r.include_dir, std::string("-x"), std::string("c++-header"),
                          hpp.string(), std::string("-o"), tmp.string()})
        argv.push_back(a);
    std::string output;
    int rc = 0;
    try {
        rc = run_compiler(argv, r.dir / (stem + ".log." + std::to_string(::getpid())), output, ic,
                          rep);
    } catch (const interrupted&) {
        fs::remove(tmp, ec);
        throw;
    }
    if (rc != 0 || !fs::is_regular_file(tmp, ec)) {
        fs::remove(tmp, ec);
        write_atomically(failed, output);
        return "";
    }
    fs::rename(tmp, gch);
    write_atomically(meta, meta_text(gch, "compiler " + r.cmd.front() + "\nkind pch\n"));
    return hpp.string();
}

} // namespace isthmus::plugins
