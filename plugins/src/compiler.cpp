// The compiler driver: compile_string / compile_file into a content-keyed, locked plugin cache.
#include "isthmus/plugin_host.hpp"

#include "author_layer.hpp"
#include "compile_cache.hpp"
#include "compile_command.hpp"
#include "compile_notice.hpp"
#include "compile_tiers.hpp"
#include "compiler_runs.hpp"
#include "cuda_toolchain.hpp"
#include "isthmus/interrupt.hpp"
#include "kernel_only_build.hpp"
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
        kernel_only_build b;
        b.setup = setup;
        b.text = text;
        b.dir = dir;
        b.stem = stem;
        b.ext = ext;
        b.meta_extra = "compiler " + cmd.front() + "\nlayer kernel-only\n";
        if (auto lib = quick_tier(name, source, opts, key, b,
                                  *layer_request(false, cmd, fixed, opts, inc, layer, dir)))
            return lib;
    }

    cache_dir_ready(dir, true);
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
            // a failed or stopped compile leaves no entry behind (the lock file stays: Note
            // [plugin cache])
            removed_unless_kept cleanup({tmp_so, src});
            precompiled_layer pch;
            if (auto r = layer_request(cuda && !nvrtc, cmd, fixed, opts, inc, layer, dir))
                pch = precompiled_header(*r, ic, rep);
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
                // See Note [kernel-only plugins]
                lean =
                    (!cuda || nvrtc) && !pch.lean_header.empty() && kernel_only_candidate(source);
                if (lean) {
                    rc = run_compiler(command(pch, true), dir / (stem + ".log"), output, ic, rep);
                    lean = rc == 0;
                }
                if (!lean) {
                    rc = run_compiler(command(pch, false), dir / (stem + ".log"), output, ic, rep);
                    // a stale layer, not the source: See Note [precompiled headers under
                    // Clang]
                    if (rc != 0 && refused_precompiled_header(pch, output)) {
                        mark_layer_failed(pch, output);
                        pch = {};
                        rc = run_compiler(command({}, false), dir / (stem + ".log"), output, ic,
                                          rep);
                    }
                }
            }
            if (rc != 0 || (dev && !dev->ok)) {
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
            cleanup.keep(src);
            if (dev) { // the device code first: the library is looked for last
                for (size_t k = 0; k < device.size(); ++k) {
                    const std::string& bytes = k < dev->cubins.size() ? dev->cubins[k] : dev->ptx;
                    write_atomically(device[k].second, bytes);
                    extra += device[k].first + "_size " + std::to_string(bytes.size()) + "\n";
                }
            }
            install_entry(tmp_so, so, meta, extra);
            cleanup.keep_all();
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
