// The compiler driver: compile_string / compile_file into a content-keyed, locked plugin cache.
#include "isthmus/plugin_host.hpp"

#include "author_layer.hpp"
#include "compile_cache.hpp"
#include "compile_notice.hpp"
#include "compile_tiers.hpp"
#include "compiler_runs.hpp"
#include "cuda_toolchain.hpp"
#include "isthmus/interrupt.hpp"
#include "nvrtc_compile.hpp"
#include "precompiled_header.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <sys/stat.h>
#include <thread>

namespace isthmus::plugin_host {

namespace fs = std::filesystem;

// Note [plugin cache]
// ~~~~~~~~~~~~~~~~~~~
// compile_string keys its output by a 64-bit FNV-1a hash of
//   - the source text and the plugin name,
//   - the compiler flags (the fixed ones below plus compile_options::flags),
//   - the compiler's identity: its resolved path, file size and modification time (cheap to
//     read on every call, unlike running `g++ --version`; an upgraded compiler is a new file),
//   - ISTHMUS_PLUGIN_ABI_VERSION and the text of plugin_abi.h, plugin.hpp and the author
//     layer's parts in isthmus/plugin/ (author_layer_text),
//   - the target: the machine name (uname -m) and the CPU model and feature flags from
//     /proc/cpuinfo, since the code is built with -march=native.
// The cache holds <name>-<key>.cpp (the compiled source), .so, and .meta (size and hash of the
// .so). A cached .so is used only when its .meta matches it, so a truncated or corrupted file is
// rebuilt, never loaded; and only when it, its .meta and the directory pass the trust checks of
// Note [cache trust model] in compile_cache.cpp (the directory may be shared and hostile: a
// symlink, another user's file, a file writable by others is rebuilt, never loaded or written
// through). Builds run under an exclusive flock on <name>-<key>.lock, write to fresh temporary
// names and rename into place (.so first, .meta last), so two processes compiling the same
// source at once both succeed and a reader never sees a half-written file.

namespace {

// A toolchain that links libstdc++ statically must not export it from the plugin (Note [static
// libstdc++] in core/CMakeLists.txt).
#define ISTHMUS_PRIVATE_RUNTIME "--exclude-libs=libstdc++.a:libsupc++.a:libgcc.a:libgcc_eh.a"

// Note [one rounding per operation]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// -ffp-contract=off: GCC's default (fast, outside ISO mode) fuses a*b+c into one fma rounding
// wherever the target has FMA, at -O2 and above. A kernel's results then depended on the machine
// (-march=native: with or without FMA), on the optimisation level (the quick and optimised
// builds of Note [compile tiers] would differ in the last bit) and differed from NumPy's and
// torch's CPU arithmetic, which round each operation. Off, each operation rounds once, as
// written, as Numba does by default; std::fma still compiles to the instruction. Measured on the
// kernel benchmark's kernels (bench/kernels.py) on the development machine: saxpy, the 3x3 blur
// and the row sum within noise (blur 1.52 -> 1.66 ms, saxpy 3.3 -> 3.5 ms, row sum 8.6 ms).
constexpr const char* k_fixed_flags[] = {
    "-std=c++20", "-O3",     "-ffp-contract=off",   "-march=native",
    "-fPIC",      "-shared", "-fvisibility=hidden", "-Wl," ISTHMUS_PRIVATE_RUNTIME};

// Note [gold for plugin links]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Linking a plugin (its object, the support object, libstdc++) took GNU ld (bfd) 0.3 s of wall time
// on the 2-core development machine and gold 0.12-0.16 s: an eighth of a kernel's compile once the
// precompiled layer is there (Note [precompiled plugin header]). So a C++ plugin links with gold
// where `ld.gold` is on PATH (binutils ships it; GCC and Clang find it the same way); elsewhere
// the default linker. The flag is part of the plugin's key, not of the layer's (it is link-only).
// The output is the same kind of library: the same dynamic exports as GNU ld's (the entry point and
// libstdc++'s weak template instantiations; gold adds the _edata/_end markers), the same
// --exclude-libs.

// The C++ compile's fixed flags: k_fixed_flags, then -fuse-ld=gold where gold is found (Note [gold
// for plugin links]).
const std::vector<std::string>& cxx_fixed_flags() {
    static const std::vector<std::string> flags = [] {
        std::vector<std::string> f(std::begin(k_fixed_flags), std::end(k_fixed_flags));
        if (!find_in_path("ld.gold").empty()) f.emplace_back("-fuse-ld=gold");
        return f;
    }();
    return flags;
}

// Note [support object in CUDA plugins]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// nvcc cannot load GCC's precompiled header, but the plugin's host side can link the author layer's
// support object (Note [support object]), which nvcc's front ends then skip: unsharp.cu took 10.2 s
// of nvcc cold and 7.5 s with it (cudafe++ 2.8 -> 2.2 s, cicc 2.2 -> 1.9 s, the host g++ 4.3 -> 2.6
// s). The object is the C++ layer of nvcc's default host compiler (`g++`) with the C++ plugins'
// fixed flags, so a C++ compile with g++ and no extra flags shares it; the layout of every type the
// support code touches is the same with and without __CUDACC__ (that macro only adds device
// attributes and launchers). Like the C++ layer it comes prebuilt with the library (See Note
// [prebuilt plugin layer]), else the second cold compile that would use it builds it.

// Note [CUDA plugins]
// ~~~~~~~~~~~~~~~~~~~
// CUDA source whose kernels are declared with ISTHMUS_KERNEL compiles through NVRTC and the C++
// compiler (Note [NVRTC plugins] in nvrtc_compile.cpp); other CUDA source (extended lambda
// kernels), or any with cuda_compiler="nvcc", through nvcc. nvcc links the CUDA runtime statically
// (its default), so the plugin needs only the driver at run time, like libisthmus_cuda.so; the host
// hands it a stream of the primary context, which every runtime in the process shares. Flags:
// C++20, extended lambdas (`[] __host__ __device__` kernel bodies), relaxed constexpr (std::
// constexpr helpers in device code), PIC and hidden visibility for the host side, and SASS for each
// architecture in $ISTHMUS_CUDA_ARCH (default "90": H100/H200) plus PTX of the last one, which the
// driver compiles for newer GPUs.
constexpr const char* k_nvcc_flags[] = {"-std=c++20",
                                        "-O3",
                                        "-shared",
                                        "-Xcompiler",
                                        "-fPIC",
                                        "-Xcompiler",
                                        "-fvisibility=hidden",
                                        "-Xcompiler",
                                        "-march=native",
                                        "-Xlinker",
                                        ISTHMUS_PRIVATE_RUNTIME,
                                        "--extended-lambda",
                                        "--expt-relaxed-constexpr"};

std::string sanitize(const std::string& name) {
    std::string s;
    for (char c : name)
        s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') ? c : '_';
    if (s.empty()) s = "plugin";
    return s.substr(0, 64);
}

} // namespace

std::string compiler() {
    const char* cxx = std::getenv("CXX");
    return cxx && *cxx ? std::string(cxx) : std::string("g++");
}

std::string cache_dir(const compile_options& opts) {
    if (!opts.cache_dir.empty()) return opts.cache_dir;
    if (const char* d = std::getenv("ISTHMUS_CACHE_DIR"); d && *d) return d;
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
        return (fs::path(x) / "isthmus").string();
    const char* home = std::getenv("HOME");
    ISTHMUS_CHECK(home && *home, runtime_error,
                  "compile_string: no cache directory (set ISTHMUS_CACHE_DIR or HOME)");
    return (fs::path(home) / ".cache" / "isthmus").string();
}

namespace {

enum class language { cxx, cuda };

language language_of(const std::string& spelled, const std::string& what) {
    std::string l;
    for (char c : spelled) l += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (l.empty() || l == "c++" || l == "cpp" || l == "cxx") return language::cxx;
    if (l == "cuda" || l == "cu") return language::cuda;
    ISTHMUS_THROW(value_error, what, ": unknown language \"", spelled,
                  "\" (expected \"c++\" or \"cuda\")");
}

// The request for the precompiled layer a compile uses (nullopt: none): the C++ path's for C++
// (Note [precompiled plugin header]); for CUDA, the layer of nvcc's host compiler g++ with the
// C++ fixed flags, whose support object it links (Note [support object in CUDA plugins]).
std::optional<pch_request> layer_request(bool cuda, const std::vector<std::string>& cmd,
                                         const std::vector<std::string>& fixed,
                                         const compile_options& opts, const std::string& inc,
                                         const std::string& layer_text, const fs::path& dir) {
    if (!cuda) {
        std::vector<std::string> flags = fixed;
        flags.insert(flags.end(), opts.flags.begin(), opts.flags.end());
        return pch_request{cmd, std::move(flags), inc, layer_text, dir};
    }
    if (find_in_path("g++").empty()) return std::nullopt;
    return pch_request{{"g++"}, cxx_fixed_flags(), inc, layer_text, dir};
}

// What a C++ or CUDA compile runs: the compiler command, its fixed flags, the user's.
struct compile_setup {
    std::vector<std::string> cmd;   // the compiler command (words): nvcc, or the C++ compiler
    std::vector<std::string> fixed; // its fixed flags
    std::vector<std::string> flags; // compile_options::flags
    std::string inc;                // the author layer's include directory
    bool cuda = false;
    bool nvrtc = false;
};

// The command line that compiles `src` into `out` against layer `l` (its kernel half when `lean`),
// with `extra` flags after the user's and `tier_header` included after the layer (the quick
// build's -O1 and isthmus/plugin/quick_build.hpp: Note [compile tiers]).
std::vector<std::string> compile_command(const compile_setup& c, const precompiled_layer& l,
                                         bool lean, const fs::path& src, const fs::path& out,
                                         const std::vector<std::string>& extra = {},
                                         const std::string& tier_header = {}) {
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
    argv.push_back(src.string());
    if (c.nvrtc) argv.push_back("-xnone");
    if (!l.empty()) argv.push_back(l.object); // Note [support object]
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

// The cached library at `so` when `valid()` says its entry is complete, else nullptr (also when it
// vanished between the check and the load: `python -m isthmus.cache clear` in another process).
// Throws when the directory is refused (Note [cache trust model]) or the library does not load.
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

// One C++ build of a kernel-only source under the entry's lock, unless another process
// installed the entry meanwhile; false when the compiler failed (nothing is installed). See Note
// [compile tiers].
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
    bool background = false; // See Note [background compiles yield]
};

bool build_kernel_only(const kernel_only_build& b, interrupt_check& ic, slow_compile_reporter& rep,
                       std::string& output) {
    const fs::path so = b.dir / (b.stem + ".so"), meta = b.dir / (b.stem + ".meta");
    cache_dir_ready(b.dir, true);
    file_lock lock(b.dir / (b.stem + ".lock"), ic, rep);
    if (entry_problem(so, meta).empty()) return true;
    const fs::path src = b.dir / (b.stem + b.ext);
    write_atomically(src, b.text);
    const fs::path tmp_so = make_temp(so).path;
    std::error_code ec;
    int rc = 0;
    try {
        rc = run_compiler(
            compile_command(b.setup, b.layer, true, src, tmp_so, b.tier_flags, b.tier_header),
            b.dir / (b.stem + ".log"), output, ic, rep, b.background);
        if (rc == 0) install_entry(tmp_so, so, meta, b.meta_extra);
    } catch (...) {
        fs::remove(tmp_so, ec);
        fs::remove(src, ec);
        throw;
    }
    if (rc != 0) {
        fs::remove(tmp_so, ec);
        fs::remove(src, ec);
    }
    return rc == 0;
}

// See Note [compile tiers]: the quick build of a kernel-only C++ source (`key` is the optimised
// build's key, `b` its build, `layer` the precompiled layer's request), with the optimised build
// queued; nullptr when there is no quick build to give (no precompiled kernel half, or the source
// does not compile against it: the caller's compile then takes over, with its messages).
std::shared_ptr<library> quick_tier(const std::string& name, const std::string& source,
                                    const compile_options& opts, const fnv& key,
                                    const kernel_only_build& b, const pch_request& layer) {
    fnv quick_key = key;
    quick_key.add("tier quick");
    kernel_only_build q = b;
    q.stem = b.stem.substr(0, b.stem.rfind('-') + 1) + quick_key.hex();
    q.tier_flags = {"-O1"};
    q.tier_header = "isthmus/plugin/quick_build.hpp"; // See Note [the quick build's launcher]
    q.meta_extra += "tier quick\n";
    const fs::path qso = b.dir / (q.stem + ".so");
    const fs::path qmeta = b.dir / (q.stem + ".meta");
    std::shared_ptr<library> lib =
        cached_entry(b.dir, qso, [&] { return entry_problem(qso, qmeta).empty(); });
    if (!lib) {
        interrupt_check ic; // Note [interruptible compiles]
        slow_compile_reporter rep(
            compile_notice{name, "C++", b.setup.cmd.front(), qso.string(), false, {}});
        cache_dir_ready(b.dir, true);
        q.layer = precompiled_header(layer, ic, rep);
        if (q.layer.lean_header.empty()) return nullptr;
        std::string output;
        if (!build_kernel_only(q, ic, rep, output)) return nullptr;
        lib = load(qso.string());
    }
    build_optimised_later(
        lib,
        [b, layer, name] {
            interrupt_check ic(&background_stop); // not the host's poll: nobody waits for it
            kernel_only_build o = b;
            o.background = true;
            slow_compile_reporter rep(compile_notice{name,
                                                     "C++",
                                                     o.setup.cmd.front(),
                                                     (o.dir / (o.stem + ".so")).string(),
                                                     false,
                                                     {}},
                                      true);
            o.layer = precompiled_header(layer, ic, rep);
            ISTHMUS_CHECK(!o.layer.lean_header.empty(), runtime_error,
                          "the precompiled author layer is gone");
            std::string output;
            if (!build_kernel_only(o, ic, rep, output))
                throw compile_error("the compiler (" + o.setup.cmd.front() + ") failed", output);
            return load((o.dir / (o.stem + ".so")).string());
        },
        pending_build{name, source, opts.flags, b.dir.string()});
    return lib;
}

std::shared_ptr<library> compile_source(const std::string& name, const std::string& source,
                                        const compile_options& opts, language lang) {
    const std::string what = "compile_string(\"" + name + "\")";
    ISTHMUS_CHECK(!name.empty(), value_error, "compile_string: the name must not be empty");
    // Flags and paths reach the compiler and the file system as C strings, which end at a NUL.
    for (const auto& f : opts.flags)
        ISTHMUS_CHECK(f.find('\0') == std::string::npos, value_error, what,
                      ": a compiler flag contains a NUL byte");
    ISTHMUS_CHECK(opts.cache_dir.find('\0') == std::string::npos, value_error, what,
                  ": the cache directory contains a NUL byte");
    const bool cuda = lang == language::cuda;
    const bool nvrtc = cuda && use_nvrtc(source, opts, what);
    std::vector<std::string> archs; // CUDA architectures
    if (cuda) archs = cuda_archs(what);
    std::vector<std::string> cmd;   // the compiler command (words): nvcc, or the C++ compiler
    std::vector<std::string> fixed; // its fixed flags
    if (cuda && !nvrtc) {
        cmd.push_back(find_nvcc(what));
        fixed.assign(std::begin(k_nvcc_flags), std::end(k_nvcc_flags));
        for (auto& f : gencode_flags(archs)) fixed.push_back(std::move(f));
    } else {
        cmd = split_words(compiler());
        ISTHMUS_CHECK(!cmd.empty(), runtime_error, "compile_string: CXX is empty");
        fixed = cxx_fixed_flags();
    }
    const std::string inc = plugin_include_dir();
    const fs::path dir = cache_dir(opts);

    // The compiled text: the author header, then the user's source with its own line numbers.
    const std::string stem_name = sanitize(name);
    const std::string ext = cuda ? ".cu" : ".cpp";
    const std::string text =
        "#include <isthmus/plugin.hpp>\n#line 1 \"" + stem_name + ext + "\"\n" + source + "\n";

    fnv key;
    key.add(name);
    key.add(cuda ? "cuda" : "c++");
    key.add(text);
    for (const auto& f : fixed) key.add(f);
    for (const auto& f : opts.flags) key.add(f);
    for (const auto& w : cmd) key.add(w);
    key.add(compiler_identity(cmd.front()));
    if (nvrtc) {
        key.add("nvrtc");
        key.add(nvrtc_identity());
        for (const auto& a : archs) key.add(a);
    } else if (cuda && !find_in_path("g++").empty())
        key.add(compiler_identity("g++")); // nvcc's host compiler
    key.add(std::to_string(ISTHMUS_PLUGIN_ABI_VERSION));
    const std::string layer = cached_layer_text(inc);
    key.add(layer);
    key.add(target_identity());

    const std::string stem = stem_name + "-" + key.hex();
    const fs::path so = dir / (stem + ".so"), meta = dir / (stem + ".meta");
    const auto device =
        nvrtc ? device_files(dir, stem, archs) : std::vector<std::pair<std::string, fs::path>>{};
    auto entry_valid = [&] {
        return entry_problem(so, meta).empty() &&
               (device.empty() || device_files_valid(meta, device));
    };
    // The fast path: no lock, no compiler. An entry removed between the check and the load
    // (`python -m isthmus.cache clear` in another process) falls through to the locked path.
    // A refused directory throws here (Note [cache trust model]).
    if (auto lib = cached_entry(dir, so, entry_valid)) return lib;
    const compile_setup setup{cmd, fixed, opts.flags, inc, cuda, nvrtc};
    // See Note [compile tiers].
    if (!cuda && opts.tiered && tiers_enabled() && tierable_flags(opts.flags) &&
        kernel_only_candidate(source)) {
        const kernel_only_build b{
            setup, {}, text, dir, stem, ext, "compiler " + cmd.front() + "\nlayer kernel-only\n",
            {}};
        if (auto lib = quick_tier(name, source, opts, key, b,
                                  *layer_request(false, cmd, fixed, opts, inc, layer, dir)))
            return lib;
    }

    cache_dir_ready(dir, true);
    std::error_code ec;
    {
        interrupt_check ic; // Note [interruptible compiles]
        const std::string compiler_name = nvrtc ? cmd.front() + " and NVRTC" : cmd.front();
        slow_compile_reporter rep(
            compile_notice{name, cuda ? "CUDA" : "C++", compiler_name, so.string(), false, {}});
        file_lock lock(dir / (stem + ".lock"), ic, rep);
        if (!entry_valid()) {
            const fs::path src = dir / (stem + ext);
            write_atomically(src, text);
            // the compiler's output: a fresh name, created empty first (Note [cache trust model])
            const fs::path tmp_so = make_temp(so).path;
            precompiled_layer pch;
            try {
                if (auto r = layer_request(cuda && !nvrtc, cmd, fixed, opts, inc, layer, dir))
                    pch = precompiled_header(*r, ic, rep);
            } catch (...) { // a Ctrl-C while the layer builds: no entry stays
                fs::remove(tmp_so, ec);
                fs::remove(src, ec);
                throw;
            }
            auto command = [&](const precompiled_layer& l, bool lean) {
                return compile_command(setup, l, lean, src, tmp_so);
            };
            std::string output;
            int rc = 0;
            bool lean = false;              // compiled against the kernel half of the layer
            std::optional<device_code> dev; // See Note [NVRTC plugins]: the device pass runs beside
            {
                std::jthread device_pass;
                if (nvrtc) {
                    device_build b{device_pass_source(text),
                                   stem_name + ext,
                                   archs,
                                   {"-I" + inc, "-DISTHMUS_DEVICE_PASS=1"}};
                    for (const auto& f : opts.flags) // macros and include paths reach both passes
                        if (f.rfind("-D", 0) == 0 || f.rfind("-U", 0) == 0 || f.rfind("-I", 0) == 0)
                            b.options.push_back(f);
                    device_pass = std::jthread([&dev, b = std::move(b)] {
                        try {
                            dev = compile_device(b);
                        } catch (const std::exception& e) { // (out of memory): it failed
                            dev = device_code{false, e.what(), {}, {}};
                        }
                    });
                }
                try {
                    // See Note [kernel-only plugins]
                    lean = (!cuda || nvrtc) && !pch.lean_header.empty() &&
                           kernel_only_candidate(source);
                    if (lean) {
                        rc = run_compiler(command(pch, true), dir / (stem + ".log"), output, ic,
                                          rep);
                        lean = rc == 0;
                    }
                    if (!lean) {
                        rc = run_compiler(command(pch, false), dir / (stem + ".log"), output, ic,
                                          rep);
                        // a stale layer, not the source: See Note [precompiled headers under
                        // Clang]
                        if (rc != 0 && refused_precompiled_header(pch, output)) {
                            mark_layer_failed(pch, output);
                            pch = {};
                            rc = run_compiler(command({}, false), dir / (stem + ".log"), output, ic,
                                              rep);
                        }
                    }
                } catch (...) {
                    fs::remove(tmp_so, ec); // what the compiler wrote before it was stopped
                    fs::remove(src, ec);
                    throw;
                }
            }
            if (rc != 0 || (dev && !dev->ok)) {
                fs::remove(tmp_so, ec); // a failed compile leaves no entry behind (the lock
                fs::remove(src, ec);    // file stays: Note [plugin cache])
                if (dev && !dev->ok) throw compile_error(nvrtc_failure(what, dev->log), dev->log);
                throw compile_error(what + ": the " + (cuda ? "CUDA" : "C++") + " compiler (" +
                                        cmd.front() + ") failed with exit code " +
                                        std::to_string(rc),
                                    output);
            }
            std::string extra = "compiler " + compiler_name + "\nlayer " +
                                (lean          ? "kernel-only"
                                 : pch.empty() ? "none"
                                               : "full") +
                                "\n";
            try {
                if (dev) { // the device code first: the library is looked for last
                    for (size_t k = 0; k < device.size(); ++k) {
                        const std::string& bytes =
                            k < dev->cubins.size() ? dev->cubins[k] : dev->ptx;
                        write_atomically(device[k].second, bytes);
                        extra += device[k].first + "_size " + std::to_string(bytes.size()) + "\n";
                    }
                }
                install_entry(tmp_so, so, meta, extra);
            } catch (...) {
                fs::remove(tmp_so, ec);
                throw;
            }
        }
    }
    return load(so.string());
}

} // namespace

std::string prebuild_plugin_layer(const fs::path& dir) {
    // the request of a plain C++ compile_string (compile_source and layer_for): See Note [prebuilt
    // plugin layer]
    const std::vector<std::string> cmd = split_words(compiler());
    ISTHMUS_CHECK(!cmd.empty(), runtime_error, "the plugin layer: CXX is empty");
    const std::string inc = plugin_include_dir();
    cache_dir_ready(dir, true);
    interrupt_check ic;
    slow_compile_reporter rep(
        compile_notice{"the plugin layer", "C++", cmd.front(), dir.string(), false, {}});
    pch_request r{cmd, cxx_fixed_flags(), inc, cached_layer_text(inc), dir};
    r.eager = true;
    const precompiled_layer layer = precompiled_header(r, ic, rep);
    const std::string stem = layer.empty() ? std::string() : fs::path(layer.header).stem().string();
    // what a compile never reads there, and other keys' layers, are not installed
    std::error_code ec;
    std::vector<fs::path> stale;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        const std::string n = e.path().filename().string();
        const bool ours = !stem.empty() && n.rfind(stem + ".", 0) == 0;
        if (!ours || n.ends_with(".lock") || n.ends_with(".support.cpp") ||
            n.ends_with(".failed") || n.ends_with(".seen"))
            stale.push_back(e.path());
    }
    for (const auto& f : stale) fs::remove(f, ec);
    return stem;
}

std::shared_ptr<library> compile_string(const std::string& name, const std::string& source,
                                        const compile_options& opts) {
    std::shared_ptr<library> lib =
        compile_source(name, source, opts, language_of(opts.language, "compile_string"));
    // The name is the plugin's identity (the cache entry, the edit loop's replacement, messages):
    // a source that declares another name is a mistake, not a rename.
    ISTHMUS_CHECK(lib->name() == name, value_error, "compile_string(\"", name,
                  "\"): the source declares the plugin \"", lib->name(), "\" (ISTHMUS_PLUGIN(",
                  lib->name(), ", m)); use one name in both places: compile_string(\"", lib->name(),
                  "\", ...) or ISTHMUS_PLUGIN(", name, ", m)");
    return lib;
}

std::shared_ptr<library> compile_file(const std::string& path, const compile_options& opts) {
    ISTHMUS_CHECK(path.find('\0') == std::string::npos, value_error,
                  "compile_file: the path contains a NUL byte");
    std::error_code ec;
    ISTHMUS_CHECK(fs::is_regular_file(path, ec), runtime_error, "compile_file: no such file \"",
                  path, "\"");
    const language lang = opts.language.empty() && fs::path(path).extension() == ".cu"
                              ? language::cuda
                              : language_of(opts.language, "compile_file");
    return compile_source(fs::path(path).stem().string(), read_file(path), opts, lang);
}

} // namespace isthmus::plugin_host
