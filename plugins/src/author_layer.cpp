// The author layer a plugin compiles against: where its headers are, their text (for cache keys),
// and whether a source can compile against its kernel half (Note [kernel-only plugins]).
#include "author_layer.hpp"

#include "compile_cache.hpp"
#include "isthmus/error.hpp"
#include "isthmus/plugin_host.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <map>
#include <mutex>

namespace isthmus::plugin_host {

namespace fs = std::filesystem;

// Note [where a kernel compile's time goes]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A saxpy kernel's compile_string on the 2-core development machine (g++ 12, -O3), by measurement
// (-ftime-report, -E | wc -l, timing each step alone), and what was done about each part:
//   - parsing <isthmus/plugin.hpp>: 87k preprocessed lines, 75k of them the standard headers
//     under isthmus/plugin/core.hpp (<complex> alone is 52k: it brings <sstream>), 1.4-1.6 s:
//     the precompiled header (Note [precompiled plugin header]);
//   - the layer's non-template code, 0.75 s: the support object (Note [support object]);
//   - building those two, 3.5-6 s, once per cache: now at build time (Note [prebuilt plugin
//     layer]), so a new user's first two kernels no longer pay 4.0 s and 5.9 s;
//   - the link, 0.3 s with GNU ld: 0.12-0.16 s with gold (Note [gold for plugin links]).
// What a kernel still costs (0.8-0.9 s of CPU with all of the above): about 0.2 s instantiating
// the standard library's templates that its headers leave pending (a TU that only includes the
// precompiled header and defines nothing pays it: GCC instantiates them at the end of every TU, it
// cannot save them in the .gch), about 0.2 s instantiating the kernel's launcher, argument and
// module-builder templates, and 0.45 s of the optimiser, of which -O1 would save 0.2 s (so a quick
// first tier would gain a quarter, not the 5x to Quadrants' 0.1 s). The next steps, in order: a
// kernel header that includes no <complex>/<memory>/<string> (the kernel TU then pays neither the
// pending instantiations nor the builder templates), then tiers. What the pending instantiations
// come from, measured with a precompiled header of one standard header each and an empty TU
// (g++ 12, -std=c++20, user CPU of the TU): <complex> 0.16 s, <atomic> 0.12 s (C++20's waiting
// functions), <memory> 0.12 s, <fstream> 0.14 s, <sstream> 0.11 s, <string> 0.09 s, <cmath>
// 0.04 s; <vector>, <map>, <deque>, <tuple>, <array>, <algorithm>, <type_traits> none; the whole
// layer 0.25 s (they overlap). Clang instantiates them in the header itself (See Note
// [precompiled headers under Clang]). The saxpy kernel's TU taken apart by what it instantiates
// (2026-12-02, user CPU of cc1plus at -O3 with the layer, best of three): nothing 0.16 s, only
// fast_kernel_loop<F> 0.23 s, all of kernel_impl<F> (the checked loop, the argument conversions
// and their error paths) 0.34 s, the whole plugin with its m.kernel registration 0.53-0.56 s. A
// hand-written TU with the same loop over two structs of pointer and strides and no standard
// header compiles and links in 0.10 s of wall time, and `#include <cmath>` alone adds 0.3 s
// unless it is precompiled (then 0.07 s). Hence the kernel half of the layer (See Note
// [kernel-only plugins]): the saxpy plugin 0.25-0.3 s of cc1plus, the whole g++ command 0.32-0.39
// s of wall time (2026-12-02). What remains is the kernel's own templates: a TU with the kernel
// half's precompiled header and nothing else 0.09 s of wall time, the plugin macro without a
// kernel 0.11 s, and the saxpy kernel adds 0.15-0.2 s of instantiating and optimising its
// launcher (no one part of it: dropping the checked loop or the strided loop saves nothing
// measurable); -O1 would save 0.05-0.1 s, and clang++ 16 with its own precompiled kernel half
// takes as long as g++. Where a kernel's time goes now, on a faster VM of the same 2-core AMD
// EPYC (2026-12-02, where Quadrants' new kernel takes 0.045-0.06 s and g++'s saxpy compile_string
// 0.21-0.23 s): clang's -ftime-trace of the saxpy TU against its precompiled kernel half puts 66 ms
// in instantiating the launcher's templates (the front end 86 ms in all), 29 ms in the function
// passes, 29 ms in code generation and the rest of the 133 ms back end in the module passes (the
// inliner); the fast loop is 12 of the 28 ms of function passes, the checked loop 4, kernel_impl
// 4, the registration code 6. A compiler kept in the process was measured and left out:
// Clang 16's driver and front end built as a module of the library (against Debian's
// libclang-cpp16), run in a child forked from the host per compile (so a compiler crash, a Ctrl-C
// and LLVM's fatal errors stay out of the user's process) did what clang++ does without its exec
// and relocation: 0.21-0.22 s per new kernel against g++'s 0.23 s in the same process, a 5-9%
// gain for Clang's development packages (60 MB of downloads). Clang's incremental interpreter
// (clang-repl 16 with the kernel half as a precompiled header) took about 0.12 s per kernel, but it
// hands its IR to the JIT without the -O3 pipeline, the part a kernel's speed needs. Neither
// starting the compiler nor parsing the layer is the cost any more: the kernel's own instantiation
// and optimisation is, in either compiler, so the next steps are fewer and shallower templates per
// kernel (the launcher's tuple and binding machinery) and a quick first tier whose -O3 build
// replaces it. Two cuts so far, each measured with g++ in alternating processes against a copy of
// the headers before it: the converted arguments without std::tuple (See Note [converted arguments
// without std::tuple]), 0.23-0.25 -> 0.21-0.22 s, and <cmath>'s special functions out of the kernel
// half (See Note [cmath in kernel-only compiles]), 0.21-0.24 -> 0.18-0.20 s. The saxpy TU's g++
// command in parts (2026-12-03, the same VM): -fsyntax-only 35 ms, the -O3 back end 100-125 ms
// (-O1 55-65 ms, -O2 about 85 ms; the checked loop about 15 ms of it, the strided loop 10 ms), the
// link 20 ms with gold (lld 30 ms, GNU ld 40-60 ms, -pipe no change); a TU of the plugin macro
// alone 30 ms. So no flag or linker reaches twice Quadrants' 0.05 s per new kernel. What the edit
// loop waits for now is a quick -O1 build with a launcher of one loop, its -O3 build replacing it
// in the background (See Note [compile tiers]): 0.14-0.16 s where the -O3 compile took 0.18-0.24 s.
// Its link is gold's own run against stubs of the runtime libraries, 7-9 ms (See Note [direct
// links for quick builds]).

// Note [kernel-only plugins]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// Most of a small kernel's compile went to what the author layer's full header costs every
// translation unit, whatever the plugin uses (Note [where a kernel compile's time goes]): GCC
// instantiates the templates that <string>, <complex>, <memory> and the like leave pending at the
// end of every TU (a TU of the precompiled header alone: 0.2-0.26 s of CPU), and a kernel
// registered through the full module builder instantiated its strings, vectors and shared_ptrs.
// So the layer has a kernel half that uses none of those headers: isthmus/plugin/base.hpp (the
// support macros, the running call, the real dtype codes, the device layer), arg_convert.hpp (the
// conversions and descriptions of numbers, views, vec), kernel_cpu.hpp (the CPU launcher),
// kernel_cuda.hpp (the NVRTC launcher of ISTHMUS_KERNEL entries) and module_base.hpp
// (module_base: kernel registration and the descriptor, its state behind a pointer that the
// support object owns). The full layer is built on it: module derives from module_base,
// get_arg hands the types beyond the basic ones to values.hpp, so kernels run the same code in
// both. With ISTHMUS_PLUGIN_LEAN defined (and ISTHMUS_PLUGIN_SEPARATE: its non-template code is the
// support object's), isthmus/plugin.hpp is that half alone and `ip::module` is module_base.
// compile_string compiles a C++ source, or the host pass of CUDA source that NVRTC compiles,
// against it first (the layer's .lean.hpp.gch beside the full one, Note [precompiled plugin
// header]) unless the source uses what only the full layer has
// (`.def(`, `.type<`, generic code); a source that fails there for any other reason (a
// std::string, ip::tensor, a user's error) is compiled again with the full layer, whose output is
// what a failure reports, so a kernel-only compile changes what compiles into what, never whether
// or with which messages. The .meta says which layer built the plugin (`layer kernel-only`,
// `full`, `none`). Measured on the 2-core development machine (g++ 12, -O3, saxpy; user CPU of
// cc1plus): a TU of the precompiled header alone 0.22-0.26 s full, 0.06 s kernel-only; the saxpy
// plugin 0.86-0.92 s full, 0.25-0.29 s kernel-only.

// The text of the headers a compiled plugin includes: plugin_abi.h, plugin.hpp and its parts
// in isthmus/plugin/ (in name order), for the cache key (Note [plugin cache]).
std::string author_layer_text(const std::string& include_dir) {
    const fs::path dir = fs::path(include_dir) / "isthmus";
    std::string text = read_file(dir / "plugin_abi.h") + read_file(dir / "plugin.hpp");
    std::vector<fs::path> parts;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir / "plugin", ec))
        if (e.path().extension() == ".hpp") parts.push_back(e.path());
    std::sort(parts.begin(), parts.end());
    for (const auto& p : parts) text += read_file(p);
    return text;
}

// Note [plugin include dir]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// Compiled plugins include isthmus/plugin.hpp. It is looked up in $ISTHMUS_PLUGIN_INCLUDE_DIR, then
// next to the loaded libisthmus.so as installed (<prefix>/lib/libisthmus.so -> <prefix>/include),
// then in the source tree this library was built from (ISTHMUS_PLUGIN_SOURCE_INCLUDE_DIR, compiled
// in), which serves the build tree.
std::string plugin_include_dir() {
    auto has_header = [](const fs::path& d) {
        std::error_code ec;
        return fs::is_regular_file(d / "isthmus" / "plugin.hpp", ec);
    };
    if (const char* d = std::getenv("ISTHMUS_PLUGIN_INCLUDE_DIR"); d && *d && has_header(d))
        return d;
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&plugin_include_dir), &info) && info.dli_fname) {
        const fs::path lib = fs::path(info.dli_fname).parent_path();
        for (const fs::path& c : {lib / ".." / "include", lib / ".." / ".." / "include"})
            if (has_header(c)) return fs::weakly_canonical(c).string();
    }
#ifdef ISTHMUS_PLUGIN_SOURCE_INCLUDE_DIR
    if (has_header(ISTHMUS_PLUGIN_SOURCE_INCLUDE_DIR)) return ISTHMUS_PLUGIN_SOURCE_INCLUDE_DIR;
#endif
    ISTHMUS_THROW(runtime_error, "compile_string: cannot find isthmus/plugin.hpp (set "
                                 "ISTHMUS_PLUGIN_INCLUDE_DIR to the directory holding isthmus/)");
}

// The author layer's text, read once per include directory.
std::string cached_layer_text(const std::string& inc) {
    static std::mutex mu;
    static std::map<std::string, std::string> header_text;
    std::lock_guard lk(mu);
    auto it = header_text.find(inc);
    if (it == header_text.end()) it = header_text.emplace(inc, author_layer_text(inc)).first;
    return it->second;
}

// Whether a C++ source may compile against the kernel half of the layer first: it uses nothing
// that only the full layer has (See Note [kernel-only plugins]).
bool kernel_only_candidate(const std::string& source) {
    for (const char* full : {".def(", ".type<", "generic", "ISTHMUS_GENERIC"})
        if (source.find(full) != std::string::npos) return false;
    return true;
}

} // namespace isthmus::plugin_host
