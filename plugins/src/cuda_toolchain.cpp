// The CUDA toolchain a plugin build uses: where nvcc is, which architectures, their -gencode
// flags, whether NVRTC compiles a source, and the device code files it leaves in the cache.
#include "cuda_toolchain.hpp"

#include "compile_cache.hpp"
#include "isthmus/error.hpp"
#include "isthmus/plugin_host.hpp"
#include "nvrtc_compile.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

namespace isthmus::plugin_host {

namespace fs = std::filesystem;

bool executable(const std::string& p) {
    std::error_code ec;
    return !p.empty() && fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

// Finds nvcc: $ISTHMUS_NVCC, else $CUDACXX (when set, only that one is tried), else
// $CUDA_HOME/bin/nvcc, $CUDA_PATH/bin/nvcc, /usr/local/cuda/bin/nvcc, nvcc on PATH. Throws
// compile_error naming every place it looked.
std::string find_nvcc(const std::string& what) {
    std::string looked;
    auto note = [&](const std::string& where, const std::string& why) {
        looked += "\n  " + where + ": " + why;
    };
    for (const char* var : {"ISTHMUS_NVCC", "CUDACXX"}) {
        const char* v = std::getenv(var);
        if (!v || !*v) {
            note(std::string("$") + var, "not set");
            continue;
        }
        const std::string found = find_in_path(v);
        if (executable(found)) return found;
        note(std::string("$") + var + "=" + v, "not an executable file");
        throw compile_error(what + ": the CUDA compiler named by $" + var + " (" + v +
                                ") was not found",
                            "looked at:" + looked);
    }
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
        const char* v = std::getenv(var);
        if (!v || !*v) {
            note(std::string("$") + var + "/bin/nvcc", "not set");
            continue;
        }
        const std::string p = (fs::path(v) / "bin" / "nvcc").string();
        if (executable(p)) return p;
        note(p, "not found");
    }
    if (executable("/usr/local/cuda/bin/nvcc")) return "/usr/local/cuda/bin/nvcc";
    note("/usr/local/cuda/bin/nvcc", "not found");
    const std::string on_path = find_in_path("nvcc");
    if (executable(on_path)) return on_path;
    note("nvcc on $PATH", "not found");
    throw compile_error(what + ": no CUDA compiler (nvcc) found; install the CUDA toolkit or set "
                               "$ISTHMUS_NVCC",
                        "looked at:" + looked);
}

// The architectures to build for, from $ISTHMUS_CUDA_ARCH ("90", "80;90", "80,90", "sm_90").
std::vector<std::string> cuda_archs(const std::string& what) {
    const char* env = std::getenv("ISTHMUS_CUDA_ARCH");
    std::string spec = env && *env ? env : "90";
    for (char& c : spec)
        if (c == ';' || c == ',') c = ' ';
    std::vector<std::string> archs;
    for (std::string a : split_words(spec)) {
        if (a.rfind("sm_", 0) == 0 || a.rfind("compute_", 0) == 0) a = a.substr(a.find('_') + 1);
        const bool digits =
            !a.empty() && a.size() <= 4 && std::all_of(a.begin(), a.end(), [](char c) {
                return std::isdigit(static_cast<unsigned char>(c)) || c == 'a';
            });
        ISTHMUS_CHECK(
            digits, value_error, what,
            ": $ISTHMUS_CUDA_ARCH must list architectures such as \"90\" or \"80;90\", got \"",
            env ? env : "", "\"");
        archs.push_back(a);
    }
    ISTHMUS_CHECK(!archs.empty(), value_error, what, ": $ISTHMUS_CUDA_ARCH lists no architecture");
    return archs;
}

// -gencode flags: SASS for each architecture, PTX for the last.
std::vector<std::string> gencode_flags(const std::vector<std::string>& archs) {
    std::vector<std::string> f;
    for (const auto& a : archs) {
        f.push_back("-gencode");
        f.push_back("arch=compute_" + a + ",code=sm_" + a);
    }
    f.push_back("-gencode");
    f.push_back("arch=compute_" + archs.back() + ",code=compute_" + archs.back());
    return f;
}

// The message of a failed device pass, with a hint where NVRTC met host code.
std::string nvrtc_failure(const std::string& what, const std::string& log) {
    std::string m = what + ": NVRTC failed to compile the device code";
    if (log.find("host functions are not allowed") != std::string::npos ||
        log.find("open source file") != std::string::npos)
        m += " (NVRTC compiles the code outside ISTHMUS_PLUGIN as device code: put host-only "
             "code and #includes inside #ifndef ISTHMUS_DEVICE_PASS, or compile with "
             "cuda_compiler=\"nvcc\")";
    return m;
}

// Whether CUDA source compiles through NVRTC (Note [NVRTC plugins] in nvrtc_compile.cpp).
bool use_nvrtc(const std::string& source, const compile_options& opts, const std::string& what) {
    std::string choice = opts.cuda_compiler;
    if (choice.empty())
        if (const char* v = std::getenv("ISTHMUS_CUDA_COMPILER"); v && *v) choice = v;
    for (char& c : choice) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (choice.empty()) choice = "auto";
    if (choice == "nvcc") return false;
    ISTHMUS_CHECK(choice == "auto" || choice == "nvrtc", value_error, what,
                  ": unknown CUDA compiler \"", choice,
                  "\" (expected \"auto\", \"nvrtc\" or \"nvcc\")");
    const bool lambda = has_extended_lambda(source);
    if (choice == "auto")
        return declares_device_entries(source) && !lambda && !find_nvrtc().library.empty();
    if (lambda)
        throw compile_error(what + ": NVRTC cannot compile extended lambda kernels ([] ISTHMUS_HD "
                                   "(...)); declare the kernels with ISTHMUS_KERNEL, or compile "
                                   "with cuda_compiler=\"nvcc\"",
                            "");
    if (find_nvrtc().library.empty())
        throw compile_error(what + ": NVRTC was not found; install it (pip install "
                                   "nvidia-cuda-nvrtc, or the CUDA toolkit) or set $ISTHMUS_NVRTC",
                            "looked at:" + find_nvrtc().looked);
    return true;
}

// NVRTC's identity for the cache key: the library's resolved path, size and mtime (Note
// [finding NVRTC] in nvrtc_compile.cpp: the library is not opened for a cache hit).
std::string nvrtc_identity() {
    std::error_code ec;
    const fs::path real = fs::canonical(find_nvrtc().library, ec);
    struct stat st {};
    ::stat(real.c_str(), &st);
    return real.string() + "|" + std::to_string(st.st_size) + "|" + std::to_string(st.st_mtime);
}

// The device code files of an NVRTC entry: <stem>.sm_XY.cubin per architecture, <stem>.ptx.
std::vector<std::pair<std::string, fs::path>>
device_files(const fs::path& dir, const std::string& stem, const std::vector<std::string>& archs) {
    std::vector<std::pair<std::string, fs::path>> f;
    for (const auto& a : archs)
        f.emplace_back("cubin_sm_" + a, dir / (stem + ".sm_" + a + ".cubin"));
    f.emplace_back("ptx", dir / (stem + ".ptx"));
    return f;
}

// Whether the device files are trusted (Note [cache trust model]) and have the sizes the
// .meta records.
bool device_files_valid(const fs::path& meta,
                        const std::vector<std::pair<std::string, fs::path>>& files) {
    const auto fields = read_meta(meta);
    for (const auto& [field, path] : files)
        if (!size_recorded(path, fields, field + "_size")) return false;
    return true;
}

} // namespace isthmus::plugin_host
