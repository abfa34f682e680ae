// NVRTC for compile_string(lang="cuda"): finding the library, the device pass, compiling it.
#include "nvrtc_compile.hpp"

#include "isthmus/plugin_host.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cctype>
#include <cstdlib>
#include <mutex>
#include <regex>

namespace isthmus::plugin_host {

namespace fs = std::filesystem;

// Note [NVRTC plugins]
// ~~~~~~~~~~~~~~~~~~~~
// nvcc spends most of a CUDA plugin's cold compile in its front ends and host compiler (unsharp.cu:
// 7.6 s with the support object), while NVRTC, the runtime compiler, turns the same device code
// into a cubin in about 0.4 s and needs no toolkit at run time (PyPI's nvidia-cuda-nvrtc is
// enough). It compiles device code only, though: no host functions at all ("host functions are not
// allowed in JIT mode"), no standard library, and no way to name a kernel instantiated on a
// lambda's closure type. So CUDA source takes two passes at once:
//   - the host pass is the plugin as C++ (g++, the precompiled layer and support object of C++
//     plugins): the ISTHMUS_PLUGIN body, the CPU launchers, and for each kernel declared with
//     ISTHMUS_KERNEL a CUDA launcher that launches NVRTC's entry through the driver (Note
//     [NVRTC launcher] in isthmus/plugin/calls.hpp);
//   - the device pass is NVRTC on the same text with the ISTHMUS_PLUGIN definition blanked
//     (Note [NVRTC device pass]) and __CUDACC_RTC__ defined, under which isthmus/plugin.hpp is
//     the device layer only (Note [device layer]) and ISTHMUS_KERNEL emits `extern "C"` entries
//     (Note [NVRTC kernel entries]); one cubin per architecture of $ISTHMUS_CUDA_ARCH and the
//     PTX of the last go into the cache beside the library.
// Which compiler a CUDA source gets (compile_options::cuda_compiler, $ISTHMUS_CUDA_COMPILER):
// "auto" (the default) takes NVRTC when it is found, the source declares kernels with
// ISTHMUS_KERNEL and has no extended lambda (`[] ISTHMUS_HD (...)`, whose device code only nvcc
// generates); otherwise nvcc, as before. "nvrtc" insists (a clear compile_error when NVRTC is
// missing or the source has an extended lambda); "nvcc" never uses NVRTC.

namespace {

using nvrtc_result = int;
using nvrtc_program = struct nvrtc_program_st*;

struct nvrtc_api {
    nvrtc_result (*version)(int*, int*);
    nvrtc_result (*create)(nvrtc_program*, const char*, const char*, int, const char* const*,
                           const char* const*);
    nvrtc_result (*compile)(nvrtc_program, int, const char* const*);
    nvrtc_result (*log_size)(nvrtc_program, size_t*);
    nvrtc_result (*log)(nvrtc_program, char*);
    nvrtc_result (*cubin_size)(nvrtc_program, size_t*);
    nvrtc_result (*cubin)(nvrtc_program, char*);
    nvrtc_result (*ptx_size)(nvrtc_program, size_t*);
    nvrtc_result (*ptx)(nvrtc_program, char*);
    nvrtc_result (*destroy)(nvrtc_program*);
    const char* (*error_string)(nvrtc_result);
};

std::mutex g_nvrtc_mu;
std::vector<std::string> g_search_dirs;
nvrtc_api g_api{};
nvrtc_found g_found;

// NVRTC opens its builtins library (libnvrtc-builtins.so.X.Y) by name, which fails when its
// directory is not on the loader's path (PyPI's wheel); loaded first, it is found by soname.
void preload_builtins(const fs::path& dir) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        const std::string n = e.path().filename().string();
        if (n.rfind("libnvrtc-builtins.so.", 0) == 0 && n.find(".alt.") == std::string::npos)
            ::dlopen(e.path().c_str(), RTLD_NOW | RTLD_GLOBAL);
    }
}

template <typename Fn>
bool resolve(void* h, Fn& fn, const char* name) {
    fn = reinterpret_cast<Fn>(::dlsym(h, name));
    return fn != nullptr;
}

bool g_opened = false;

// Opens `lib` (a path, or a bare soname for the loader's search) and resolves the entry points;
// "" on success, else why not.
std::string open_nvrtc(const std::string& lib) {
    if (lib.find('/') != std::string::npos) preload_builtins(fs::path(lib).parent_path());
    void* h = ::dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char* why = ::dlerror();
        return why ? why : "cannot be opened";
    }
    nvrtc_api a{};
    const bool all =
        resolve(h, a.version, "nvrtcVersion") && resolve(h, a.create, "nvrtcCreateProgram") &&
        resolve(h, a.compile, "nvrtcCompileProgram") &&
        resolve(h, a.log_size, "nvrtcGetProgramLogSize") &&
        resolve(h, a.log, "nvrtcGetProgramLog") && resolve(h, a.cubin_size, "nvrtcGetCUBINSize") &&
        resolve(h, a.cubin, "nvrtcGetCUBIN") && resolve(h, a.ptx_size, "nvrtcGetPTXSize") &&
        resolve(h, a.ptx, "nvrtcGetPTX") && resolve(h, a.destroy, "nvrtcDestroyProgram") &&
        resolve(h, a.error_string, "nvrtcGetErrorString");
    if (!all) {
        ::dlclose(h);
        return "not an NVRTC library (entry points missing)";
    }
    int major = 0, minor = 0;
    a.version(&major, &minor);
    std::string path = lib;
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(a.version), &info) && info.dli_fname)
        path = info.dli_fname;
    g_api = a;
    g_opened = true;
    g_found.library = path;
    g_found.version = major * 1000 + minor * 10;
    return {};
}

// Opens the library find_nvrtc chose, once (the first compile); "" on success, else why not.
std::string ensure_open() {
    std::lock_guard lk(g_nvrtc_mu);
    if (g_opened) return {};
    if (g_found.library.empty()) return "NVRTC was not found";
    const std::string why = open_nvrtc(g_found.library);
    return why.empty() ? why : g_found.library + ": " + why;
}

} // namespace

void add_nvrtc_search_dir(const std::string& dir) {
    std::lock_guard lk(g_nvrtc_mu);
    for (const auto& d : g_search_dirs)
        if (d == dir) return;
    g_search_dirs.push_back(dir);
}

std::string nvrtc_library() {
    return find_nvrtc().library;
}

// Note [finding NVRTC]
// ~~~~~~~~~~~~~~~~~~~~
// A cached CUDA plugin's key holds NVRTC's identity, so even a cache hit finds the library; opening
// it (some 100 MB, about 6 ms) waits for the first compile. Files are located by name; only the
// last resort, the loader's own search, has to open one.
const nvrtc_found& find_nvrtc() {
    std::lock_guard lk(g_nvrtc_mu);
    if (!g_found.library.empty()) return g_found;
    g_found.looked.clear();
    auto note = [&](const std::string& where, const std::string& why) {
        g_found.looked += "\n  " + where + ": " + why;
    };
    auto is_file = [](const std::string& p) {
        std::error_code ec;
        return fs::is_regular_file(p, ec);
    };
    if (const char* v = std::getenv("ISTHMUS_NVRTC"); v && *v) {
        if (is_file(v))
            g_found.library = fs::absolute(v).string();
        else
            note(std::string("$ISTHMUS_NVRTC=") + v, "not found");
        return g_found;
    }
    note("$ISTHMUS_NVRTC", "not set");
    std::vector<std::string> dirs;
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
        if (const char* v = std::getenv(var); v && *v)
            dirs.push_back((fs::path(v) / "lib64").string());
    dirs.push_back("/usr/local/cuda/lib64");
    dirs.insert(dirs.end(), g_search_dirs.begin(), g_search_dirs.end());
    const char* names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
    for (const auto& d : dirs) {
        for (const char* n : names) {
            const std::string p = (fs::path(d) / n).string();
            if (!is_file(p)) continue;
            g_found.library = p;
            return g_found;
        }
        note(d, "no libnvrtc.so.13, .12 or .so");
    }
    for (const char* n : {"libnvrtc.so.13", "libnvrtc.so.12"}) {
        const std::string why = open_nvrtc(n);
        if (why.empty()) return g_found;
        note(std::string(n) + " on the loader's path", why);
    }
    return g_found;
}

namespace {

struct program {
    nvrtc_program p = nullptr;
    ~program() {
        if (p) g_api.destroy(&p);
    }
};

std::string program_log(nvrtc_program p) {
    size_t n = 0;
    if (g_api.log_size(p, &n) != 0 || n <= 1) return {};
    std::string s(n, '\0');
    g_api.log(p, s.data());
    s.resize(n - 1);
    return s;
}

} // namespace

device_code compile_device(const device_build& b) {
    device_code out;
    if (const std::string why = ensure_open(); !why.empty()) {
        out.log = "cannot open NVRTC: " + why;
        return out;
    }
    for (size_t k = 0; k < b.archs.size(); ++k) {
        program prog;
        if (const nvrtc_result r = g_api.create(&prog.p, b.source.c_str(), b.program_name.c_str(),
                                                0, nullptr, nullptr);
            r != 0) {
            out.log = std::string("nvrtcCreateProgram failed: ") + g_api.error_string(r);
            return out;
        }
        std::vector<std::string> opts = {"-arch=sm_" + b.archs[k], "-std=c++20"};
        opts.insert(opts.end(), b.options.begin(), b.options.end());
        std::vector<const char*> argv;
        for (const auto& o : opts) argv.push_back(o.c_str());
        const nvrtc_result r = g_api.compile(prog.p, static_cast<int>(argv.size()), argv.data());
        out.log += program_log(prog.p);
        if (r != 0) {
            if (out.log.empty()) out.log = g_api.error_string(r);
            return out;
        }
        size_t n = 0;
        g_api.cubin_size(prog.p, &n);
        std::string cubin(n, '\0');
        if (n) g_api.cubin(prog.p, cubin.data());
        out.cubins.push_back(std::move(cubin));
        if (k + 1 == b.archs.size()) {
            g_api.ptx_size(prog.p, &n);
            std::string ptx(n, '\0');
            if (n) g_api.ptx(prog.p, ptx.data());
            while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
            out.ptx = std::move(ptx);
        }
    }
    out.ok = true;
    return out;
}

namespace {

bool ident_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// The index just past a comment, string or character literal starting at `i`, or `i` when
// none starts there (C++ lexing, enough to find braces: raw strings, escapes, and digit
// separators, which are quotes after a number's digits).
size_t skip_literal(const std::string& s, size_t i) {
    const size_t n = s.size();
    if (s.compare(i, 2, "//") == 0) {
        const size_t e = s.find('\n', i);
        return e == std::string::npos ? n : e;
    }
    if (s.compare(i, 2, "/*") == 0) {
        const size_t e = s.find("*/", i + 2);
        return e == std::string::npos ? n : e + 2;
    }
    if (s[i] == 'R' && i + 1 < n && s[i + 1] == '"' &&
        (i == 0 || !ident_char(s[i - 1]) || s[i - 1] == 'u' || s[i - 1] == 'U' || s[i - 1] == 'L' ||
         s[i - 1] == '8')) {
        const size_t open = s.find('(', i + 2);
        if (open == std::string::npos) return n;
        const std::string close = ")" + s.substr(i + 2, open - i - 2) + "\"";
        const size_t e = s.find(close, open);
        return e == std::string::npos ? n : e + close.size();
    }
    if (s[i] == '"' || s[i] == '\'') {
        if (s[i] == '\'' && i > 0 && ident_char(s[i - 1])) {
            size_t j = i; // the start of the token before the quote
            while (j > 0 && (ident_char(s[j - 1]) || s[j - 1] == '.' || s[j - 1] == '\'')) --j;
            if (std::isdigit(static_cast<unsigned char>(s[j]))) return i + 1; // 1'000
        }
        const char q = s[i];
        for (size_t j = i + 1; j < n; ++j) {
            if (s[j] == '\\') {
                ++j;
            } else if (s[j] == q || s[j] == '\n') {
                return j + 1;
            }
        }
        return n;
    }
    return i;
}

// The index of the bracket closing the one at `open` ('(' or '{'), npos when unbalanced.
size_t matching(const std::string& s, size_t open) {
    const char o = s[open], c = o == '(' ? ')' : '}';
    int depth = 0;
    for (size_t i = open; i < s.size();) {
        if (const size_t j = skip_literal(s, i); j != i) {
            i = j;
            continue;
        }
        if (s[i] == o) ++depth;
        if (s[i] == c && --depth == 0) return i;
        ++i;
    }
    return std::string::npos;
}

size_t skip_space(const std::string& s, size_t i) {
    while (i < s.size()) {
        if (const size_t j = skip_literal(s, i); j != i && s[i] == '/') {
            i = j;
        } else if (std::isspace(static_cast<unsigned char>(s[i]))) {
            ++i;
        } else {
            break;
        }
    }
    return i;
}

} // namespace

// Note [NVRTC device pass]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// The host part of a CUDA plugin is its ISTHMUS_PLUGIN definition (registrations, m.def lambdas on
// strings and vectors), which NVRTC cannot compile. The device pass gets the same text with each
// `ISTHMUS_PLUGIN(...) { ... }` replaced by blanks (found by a lexer that skips comments and
// literals), keeping every line break, so NVRTC's diagnostics carry the source's own line numbers.
// Other host-only code at namespace scope (helpers on std::string, #include <vector>) is the
// author's to fence with `#ifndef ISTHMUS_DEVICE_PASS`.
std::string device_pass_source(const std::string& text) {
    std::string s = text;
    static const std::string key = "ISTHMUS_PLUGIN";
    for (size_t i = 0; i < s.size();) {
        if (const size_t j = skip_literal(s, i); j != i) {
            i = j;
            continue;
        }
        if (s.compare(i, key.size(), key) != 0 || (i > 0 && ident_char(s[i - 1])) ||
            (i + key.size() < s.size() && ident_char(s[i + key.size()]))) {
            ++i;
            continue;
        }
        const size_t lp = skip_space(s, i + key.size());
        const size_t rp = lp < s.size() && s[lp] == '(' ? matching(s, lp) : std::string::npos;
        const size_t lb = rp == std::string::npos ? rp : skip_space(s, rp + 1);
        const size_t rb = lb != std::string::npos && lb < s.size() && s[lb] == '{'
                              ? matching(s, lb)
                              : std::string::npos;
        if (rb == std::string::npos) {
            i += key.size();
            continue;
        }
        for (size_t k = i; k <= rb; ++k)
            if (s[k] != '\n') s[k] = ' ';
        i = rb + 1;
    }
    return s;
}

bool declares_device_entries(const std::string& source) {
    static const std::regex re(R"(\bISTHMUS_KERNEL\s*\()");
    return std::regex_search(source, re);
}

bool has_extended_lambda(const std::string& source) {
    // a lone `]` (not the end of an attribute's `]]`) followed by an execution space
    static const std::regex re(R"((^|[^\]])\]\s*(ISTHMUS_HD|__host__|__device__)\b)");
    return std::regex_search(source, re);
}

} // namespace isthmus::plugin_host
