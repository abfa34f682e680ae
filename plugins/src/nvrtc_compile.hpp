// NVRTC for compile_string(lang="cuda"): the runtime compiler, found and opened at run time.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace isthmus::plugin_host {

/// Where NVRTC was found, or why not.
struct nvrtc_found {
    std::string library; ///< the libnvrtc chosen ("" when none)
    std::string looked;  ///< every place tried and why it failed, one "\n  place: why" each
    int version = 0;     ///< major * 1000 + minor * 10, as CUDA_VERSION, once it is opened
};

/// Finds NVRTC once per process (opened by the first compile_device; Note [finding NVRTC]):
/// $ISTHMUS_NVRTC (a library path; when set, only it), else libnvrtc.so.{13,12} in
/// $CUDA_HOME/lib64, $CUDA_PATH/lib64, /usr/local/cuda/lib64, the directories added by
/// add_nvrtc_search_dir (the Python package adds PyPI's nvidia-cuda-nvrtc), and the loader's search
/// path.
const nvrtc_found& find_nvrtc();

/// One NVRTC compile of a plugin's device pass for each architecture.
struct device_build {
    std::string source;               ///< the device pass's text (device_pass_source)
    std::string program_name;         ///< shown in diagnostics: "name.cu"
    std::vector<std::string> archs;   ///< "90", "80", ...
    std::vector<std::string> options; ///< -I, -D ... (the architecture is added per compile)
};
/// What it produced: one cubin per architecture and the PTX of the last, or the log of the
/// compile that failed.
struct device_code {
    bool ok = false;
    std::string log;
    std::vector<std::string> cubins; ///< in the order of archs
    std::string ptx;
};
/// Compiles with NVRTC (find_nvrtc must have found it). Thread-safe.
device_code compile_device(const device_build& b);

/// Note [NVRTC device pass] in nvrtc_compile.cpp: `text` with every ISTHMUS_PLUGIN(...) { ... }
/// definition blanked out, line breaks kept, so NVRTC sees the namespace-scope code only.
std::string device_pass_source(const std::string& text);
/// Whether the source declares kernels with ISTHMUS_KERNEL (what NVRTC can compile).
bool declares_device_entries(const std::string& source);
/// Whether the source has an extended lambda (`[...] ISTHMUS_HD (...)`, `[...] __device__`),
/// whose device code only nvcc can generate.
bool has_extended_lambda(const std::string& source);

} // namespace isthmus::plugin_host
