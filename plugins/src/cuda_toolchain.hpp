// The CUDA toolchain a plugin build uses: where nvcc is, which architectures, their -gencode flags.
#pragma once

#include <string>
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

} // namespace isthmus::plugin_host
