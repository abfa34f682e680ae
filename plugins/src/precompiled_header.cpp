// The precompiled author layer in the plugin cache (Note [precompiled plugin header]).
#include "precompiled_header.hpp"

#include "compiler_runs.hpp"

#include "isthmus/plugin_abi.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <tuple>

namespace isthmus::plugin_host {

// Note [precompiled plugin header]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Parsing <isthmus/plugin.hpp> and the standard headers under it (90k lines) is 1.4-1.6 s of
// every cold compile on the development machine; GCC loads a precompiled header (.gch) of it in
// a few tens of milliseconds. The author layer's non-template code is compiled once beside it
// (Note [support object] in isthmus/plugin/base.hpp), which took another 0.75 s of every compile.
// The cache keeps one pair per key: the compiler's identity and command, the plugin compile's
// flags less the link-only ones (GCC refuses a .gch built with other code-generation options,
// and -D flags change what the header means), the author layer's text, the ABI version and the
// target. Its files share the stem isthmus-pch-<key>:
//   .hpp          two lines: `#define ISTHMUS_PLUGIN_SEPARATE 1`, `#include <isthmus/plugin.hpp>`
//   .hpp.gch      the precompiled header, written to a temporary name and renamed into place
//   .lean.hpp     the same with `#define ISTHMUS_PLUGIN_LEAN 1`: the kernel half of the layer
//   .lean.hpp.gch its precompiled header, for kernel-only compiles (See Note [kernel-only
//                 plugins] in compiler.cpp)
//   .support.cpp  the same two lines and `#include <isthmus/plugin/support_code.hpp>`
//   .o            its object: the support code, compiled with the plugin flags beside the .gch
//   .meta         the .gch's size and hash, as a plugin's .meta records the .so's, the .o's
//                 size (`object_size`) and the lean .gch's (`lean_size`); written last, so a
//                 .meta means all three are complete
//   .lock         held while they are built (the same flock as a plugin entry's)
//   .failed       the compiler's output when a build failed: later compiles do not retry it
//   .seen         written by the first cold compile with this key, which builds nothing
// A plugin compile adds `-include isthmus-pch-<key>.hpp` and links the .o: GCC takes the .gch
// beside the header when the .gch is valid for the compile and otherwise reads the two-line
// header, so a stale or foreign .gch costs time, never correctness. Only the sizes are checked
// against the .meta on each compile (hashing 60 MB would cost what the header saves). The pair
// is built by the second cold compile with a key, not the first: building it takes about as long
// as a plugin's compile and 60 MB, which a one-off compile into a fresh cache (a CI job, a
// test's temporary cache) never earns back, while the second compile marks a user iterating on
// a kernel. Clang gets the same pair (Note [precompiled headers under Clang]); a compiler that says
// it is neither compiles the layer inline, as a CMake-built plugin does. ISTHMUS_PLUGIN_PCH=0
// turns both off. The pair for a plain compile (the default compiler, no
// extra flags) also comes prebuilt with the library, so even the first compile has it (Note
// [prebuilt plugin layer]); the key therefore leaves out the include directory, whose text it has.

// Note [prebuilt plugin layer]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Building the layer lazily cost a new user 10 s for the first two kernels (4.0 s without it, 5.9 s
// for the one that builds it; then 0.95 s each). So the build runs it as well: the build-time step
// plugins/prebuilt/isthmus_plugin_layer.cpp calls prebuild_plugin_layer, which asks compiler.cpp
// for exactly the request a plain C++ compile_string makes (the same function computes both, so the
// compiler, flags and key cannot drift apart) and builds it eagerly into
// <build>/plugins/isthmus-plugin-layer/; CMake installs that folder beside the library
// (<libdir>/isthmus-plugin-layer/, or isthmus/isthmus-plugin-layer/ in a wheel). A compile looks
// there before its cache, by the same key: any difference in the compiler (command, path, size,
// mtime), the flags (a user's -D, -O0), the author layer's text, the ABI version or the CPU (a
// wheel built elsewhere) is another key, and the lazy build in the cache stays the fallback. The
// folder is read only, never written or locked, and gets the cache's trust checks (Note [cache
// trust model] in compile_cache.cpp): the folder owned by this user or root and not writable by
// others, the .hpp, .gch, .o and .meta regular files of this user or root, not writable by group or
// others, with one link, and the .gch and .o of the sizes the .meta records; a layer that fails
// any of them is passed over, never used. $ISTHMUS_PLUGIN_LAYER_DIR names another folder to search
// instead (a path that does not exist: none).

// Note [precompiled headers under Clang]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Clang's `-include X.hpp` loads X.hpp.pch, else X.hpp.gch, when one exists, so its layer keeps
// GCC's file names and everything else of Note [precompiled plugin header]; the header is built
// with `-Xclang -fno-pch-timestamp`, so it records its inputs' sizes and not their times (a
// reinstall of the same headers keeps it valid), and with `-fpch-instantiate-templates`, so the
// templates the layer's headers use are instantiated once in the header instead of at the end of
// every plugin's translation unit (a file that only includes the layer: 0.30 -> 0.04 s of clang;
// a saxpy kernel 0.75 -> 0.57 s of CPU, the sanitizer gate's instrumented one 0.78 -> 0.65 s;
// GCC has no such option, See Note [where a kernel compile's time goes]). The difference: where GCC
// passes over a .gch that does not fit and reads the two-line header, Clang stops with a fatal
// error ("... has been modified since the precompiled header was built") when an input changed,
// e.g. the standard library's headers after a package upgrade that left the compiler itself as it
// was. So such a layer is `strict`: a compile whose output says Clang refused the precompiled
// header runs again without the layer, and a layer in the cache is marked `.failed`, so later
// compiles do not try it (`python -m isthmus.cache clear` lets the next ones build it afresh); a
// prebuilt one is read only: each compile pays the retry until the library is rebuilt or
// reinstalled. The sanitizer gate's instrumented plugin compile (clang 16, ASan+UBSan, -O0)
// took 3.96 s inline and 0.71 s with the layer on the 2-core development machine; a plain clang++
// -O3 saxpy 4.7 s and 0.8 s.

namespace {

bool disabled() {
    const char* v = std::getenv("ISTHMUS_PLUGIN_PCH");
    return v && std::string(v) == "0";
}

enum class family { other, gcc, clang };

// Which compiler `cmd --version` says it is (asked once per command and process).
family family_of(const std::vector<std::string>& cmd, const fs::path& dir, interrupt_check& ic,
                 slow_compile_reporter& rep) {
    static std::mutex mu;
    static std::map<std::vector<std::string>, family> known;
    {
        std::lock_guard lk(mu);
        if (auto it = known.find(cmd); it != known.end()) return it->second;
    }
    std::vector<std::string> argv = cmd;
    argv.push_back("--version");
    std::string out;
    const int rc = run_compiler(argv, dir / "isthmus-pch-version.log", out, ic, rep);
    family f = family::other;
    if (rc == 0 && out.find("clang version") != std::string::npos)
        f = family::clang;
    else if (rc == 0 && out.find("clang") == std::string::npos &&
             out.find("Free Software Foundation") != std::string::npos)
        f = family::gcc;
    std::lock_guard lk(mu);
    known[cmd] = f;
    return f;
}

// The .gch and the .o are trusted and have the sizes the .meta records (Note [cache trust
// model] in compile_cache.cpp: size_recorded and read_meta refuse a symlink, another user's
// file, a file writable by others).
bool sizes_match(const fs::path& gch, const fs::path& object, const fs::path& lean_gch,
                 const std::map<std::string, std::string>& fields) {
    return size_recorded(gch, fields, "size") && size_recorded(object, fields, "object_size") &&
           size_recorded(lean_gch, fields, "lean_size");
}
bool sizes_match(const fs::path& gch, const fs::path& object, const fs::path& lean_gch,
                 const fs::path& meta) {
    return sizes_match(gch, object, lean_gch, read_meta(meta));
}

// Whether a compiler wrote its output into the empty file created for it: a regular file now
// holding something (seal checks the rest).
bool written(const fs::path& p) {
    struct stat st {};
    return ::lstat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

// A mark (.seen, .failed) that this user left: a planted one counts as absent.
bool marked(const fs::path& p) {
    return lstat_problem(p).empty();
}

// Writes a mark; where another user's file holds its name in a shared directory (which the
// mark cannot replace) the layer is merely not built.
void mark(const fs::path& p, const std::string& text) {
    try {
        write_atomically(p, text);
    } catch (const runtime_error&) {
    }
}

bool link_only(const std::string& flag) {
    return flag == "-shared" || flag.rfind("-Wl,", 0) == 0 || flag.rfind("-fuse-ld=", 0) == 0;
}

// The layer `stem` in a folder of prebuilt_layer_dirs, when one there passes the trust checks
// (Note [prebuilt plugin layer]); empty when none does.
precompiled_layer prebuilt(const std::string& stem) {
    for (const fs::path& d : prebuilt_layer_dirs()) {
        struct stat st {};
        if (d.empty() || ::stat(d.c_str(), &st) != 0 || !dir_distrust(st).empty()) continue;
        const fs::path hpp = d / (stem + ".hpp"), object = d / (stem + ".o"),
                       lean = d / (stem + ".lean.hpp");
        if (!lstat_problem(hpp).empty() || !lstat_problem(lean).empty()) continue;
        const auto fields = read_meta(d / (stem + ".meta"));
        if (sizes_match(d / (stem + ".hpp.gch"), object, d / (stem + ".lean.hpp.gch"), fields)) {
            // the .meta says which compiler built it: See Note [precompiled headers under Clang]
            const auto family = fields.find("family");
            return {hpp.string(),
                    object.string(),
                    lean.string(),
                    {},
                    family != fields.end() && family->second == "clang"};
        }
    }
    return {};
}

} // namespace

bool refused_precompiled_header(const precompiled_layer& layer, const std::string& out) {
    // Clang names the file it refuses ("... since the precompiled header '<x>.hpp.gch' was
    // built", "malformed or corrupted AST file '<x>.hpp.gch'"): a user's error never names it
    return layer.strict && (out.find(layer.header + ".gch") != std::string::npos ||
                            out.find(layer.lean_header + ".gch") != std::string::npos);
}

void mark_layer_failed(const precompiled_layer& layer, const std::string& out) {
    if (!layer.failed_mark.empty()) mark(layer.failed_mark, out);
}

std::vector<fs::path> prebuilt_layer_dirs() {
    if (const char* d = std::getenv("ISTHMUS_PLUGIN_LAYER_DIR")) return {fs::path(d)};
    static const std::vector<fs::path> dirs = [] {
        std::vector<fs::path> v;
        Dl_info info{};
        if (::dladdr(reinterpret_cast<void*>(&prebuilt_layer_dirs), &info) && info.dli_fname)
            v.push_back(fs::path(info.dli_fname).parent_path() / "isthmus-plugin-layer");
#ifdef ISTHMUS_PLUGIN_PREBUILT_DIR
        v.emplace_back(ISTHMUS_PLUGIN_PREBUILT_DIR);
#endif
        return v;
    }();
    return dirs;
}

precompiled_layer precompiled_header(const pch_request& r, interrupt_check& ic,
                                     slow_compile_reporter& rep) {
    if (disabled() || r.cmd.empty()) return {};
    std::vector<std::string> flags;
    for (const auto& f : r.flags)
        if (!link_only(f)) flags.push_back(f);
    fnv key;
    key.add("pch-4");
    for (const auto& w : r.cmd) key.add(w);
    key.add(compiler_identity(r.cmd.front()));
    for (const auto& f : flags) key.add(f);
    key.add(r.layer_text);
    key.add(std::to_string(ISTHMUS_PLUGIN_ABI_VERSION));
    key.add(target_identity());
    const std::string stem = "isthmus-pch-" + key.hex();
    if (!r.eager)
        if (precompiled_layer p = prebuilt(stem); !p.empty()) return p;
    const family fam = family_of(r.cmd, r.dir, ic, rep);
    if (fam == family::other) return {};
    const fs::path hpp = r.dir / (stem + ".hpp"), gch = r.dir / (stem + ".hpp.gch"),
                   lean = r.dir / (stem + ".lean.hpp"), lean_gch = r.dir / (stem + ".lean.hpp.gch"),
                   support = r.dir / (stem + ".support.cpp"), object = r.dir / (stem + ".o"),
                   meta = r.dir / (stem + ".meta"), failed = r.dir / (stem + ".failed");
    const precompiled_layer layer{hpp.string(), object.string(), lean.string(), failed.string(),
                                  fam == family::clang};
    std::error_code ec;
    auto complete = [&] {
        return sizes_match(gch, object, lean_gch, meta) && lstat_problem(hpp).empty() &&
               lstat_problem(lean).empty();
    };
    if (marked(failed)) return {}; // a failed build, or a layer Clang refused since
    if (complete()) return layer;
    const fs::path seen = r.dir / (stem + ".seen");
    if (!r.eager && !marked(seen)) {
        mark(seen, "");
        return {};
    }

    file_lock lock(r.dir / (stem + ".lock"), ic, rep);
    if (complete()) return layer;
    if (marked(failed)) return {};
    // The headers and the object build at once (a core each, where the machine has two): the
    // object does not use the header's .gch, which does not exist yet.
    const std::string separate =
        "#define ISTHMUS_PLUGIN_SEPARATE 1\n#include <isthmus/plugin.hpp>\n";
    try {
        write_atomically(hpp, separate);
        write_atomically(lean, "#define ISTHMUS_PLUGIN_LEAN 1\n" + separate);
        write_atomically(support, separate + "#include <isthmus/plugin/support_code.hpp>\n");
    } catch (const runtime_error&) { // another user's file holds a name: no layer, no failure
        return {};
    }
    // the compilers' outputs: fresh names, created empty first (Note [cache trust model])
    const fs::path gch_tmp = make_temp(gch).path, object_tmp = make_temp(object).path,
                   lean_tmp = make_temp(lean_gch).path;
    std::vector<std::string> argv = r.cmd;
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.push_back("-I" + r.include_dir);
    std::vector<compiler_run> runs(3);
    for (const auto& [run, header, out] :
         {std::tuple{&runs[0], &hpp, &gch_tmp}, std::tuple{&runs[2], &lean, &lean_tmp}}) {
        run->argv = argv;
        if (fam == family::clang) // Note [precompiled headers under Clang]
            for (const char* a : {"-Xclang", "-fno-pch-timestamp", "-fpch-instantiate-templates"})
                run->argv.push_back(a);
        for (const auto& a : {std::string("-x"), std::string("c++-header"), header->string(),
                              std::string("-o"), out->string()})
            run->argv.push_back(a);
    }
    runs[0].log = r.dir / (stem + ".log");
    runs[2].log = r.dir / (stem + ".lean.log");
    runs[1].argv = argv;
    for (const auto& a :
         {std::string("-c"), support.string(), std::string("-o"), object_tmp.string()})
        runs[1].argv.push_back(a);
    runs[1].log = r.dir / (stem + ".o.log");
    const fs::path* outputs[] = {&gch_tmp, &object_tmp, &lean_tmp};
    auto remove_outputs = [&] {
        for (const fs::path* f : outputs) fs::remove(*f, ec);
    };
    try {
        run_compilers(runs, ic, rep);
    } catch (...) { // nothing of the build stays; `.seen` does, so the next cold compile builds it
        remove_outputs();
        for (const auto& f : {hpp, lean, support}) fs::remove(f, ec);
        throw;
    }
    for (size_t k = 0; k < runs.size(); ++k)
        if (runs[k].status != 0 || !written(*outputs[k])) {
            remove_outputs();
            mark(failed, runs[k].output);
            return {};
        }
    try {
        const auto [size, hash] = seal(gch_tmp); // Note [cache trust model]
        const uintmax_t object_size = seal(object_tmp).first;
        const uintmax_t lean_size = seal(lean_tmp).first;
        install(gch_tmp, gch);
        install(object_tmp, object);
        install(lean_tmp, lean_gch);
        write_atomically(meta, meta_text(size, hash,
                                         "compiler " + r.cmd.front() + "\nkind pch\nobject_size " +
                                             std::to_string(object_size) + "\nlean_size " +
                                             std::to_string(lean_size) + "\nfamily " +
                                             (fam == family::clang ? "clang" : "gcc") + "\n"));
    } catch (const runtime_error&) { // another user's file holds a name: no layer, no failure
        remove_outputs();
        return {};
    }
    return layer;
}

} // namespace isthmus::plugin_host
