// CUDA error reporting: messages with the failing call, file and line (see check.hpp).
#include "cuda/check.hpp"

#include <cstdlib>
#include <cstring>

namespace isthmus::cudabk {

void throw_cuda(cudaError_t rc, const char* call, const char* file, int line) {
    cudaGetLastError(); // clear a non-sticky error so later calls are not blamed for it
    const char* base = std::strrchr(file, '/');
    const std::string where = std::string(base ? base + 1 : file) + ":" + std::to_string(line);
    const std::string msg = detail::concat("CUDA error ", cudaGetErrorName(rc), " (",
                                           cudaGetErrorString(rc), ") in ", call, " at ", where);
    if (rc == cudaErrorMemoryAllocation) throw memory_error(msg);
    throw runtime_error(msg + (sync_each_launch()
                                   ? std::string()
                                   : std::string("; errors of asynchronous kernels surface at the "
                                                 "next synchronisation: run with "
                                                 "ISTHMUS_CUDA_SYNC=1 to report them at their "
                                                 "launch")));
}

bool sync_each_launch() noexcept {
    static const bool on = [] {
        const char* e = std::getenv("ISTHMUS_CUDA_SYNC");
        return e && *e && std::strcmp(e, "0") != 0;
    }();
    return on;
}

void check_launch(cudaStream_t stream, const char* kernel, const char* file, int line) {
    cudaError_t rc = cudaGetLastError();
    if (rc == cudaSuccess && sync_each_launch()) rc = cudaStreamSynchronize(stream);
    if (rc != cudaSuccess) throw_cuda(rc, (std::string("kernel ") + kernel).c_str(), file, line);
}

} // namespace isthmus::cudabk
