// The CUDA toolchain a plugin build uses: where nvcc is, which architectures, their -gencode
// flags, whether NVRTC compiles a source, and the device code files it leaves in the cache.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace isthmus::plugin_host {

/// True for an existing regular file the process may execute.
bool executable(const std::string& p);
/// nvcc: $ISTHMUS_NVCC, else $CUDACXX (when set, only that one is tried), else $CUDA_HOME/bin,
/// $CUDA_PATH/bin, /usr/local/cuda/bin, PATH. Throws compile_error naming every place looked at.
std::string find_nvcc(const std::string& what);
/// The architectures to build for, from $ISTHMUS_CUDA_ARCH ("90", "80;90", "80,90", "sm_90");
/// value_error for anything else.
std::vector<std::string> cuda_archs(const std::string& what);
/// -gencode flags: SASS for each architecture, PTX for the last.
std::vector<std::string> gencode_flags(const std::vector<std::string>& archs);

struct compile_options;
/// The message of a failed device pass, with a hint where NVRTC met host code.
std::string nvrtc_failure(const std::string& what, const std::string& log);
/// Whether CUDA source compiles through NVRTC (Note [NVRTC plugins] in nvrtc_compile.cpp).
bool use_nvrtc(const std::string& source, const compile_options& opts, const std::string& what);
/// NVRTC's identity for the cache key: its resolved path, size and mtime.
std::string nvrtc_identity();
/// The device code files of an NVRTC entry (field name, path): <stem>.sm_XY.cubin per
/// architecture, <stem>.ptx.
std::vector<std::pair<std::string, std::filesystem::path>>
device_files(const std::filesystem::path& dir, const std::string& stem,
             const std::vector<std::string>& archs);
/// Whether the device files are trusted and have the sizes the .meta records.
bool device_files_valid(const std::filesystem::path& meta,
                        const std::vector<std::pair<std::string, std::filesystem::path>>& files);

} // namespace isthmus::plugin_host
