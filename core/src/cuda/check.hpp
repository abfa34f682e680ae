// CUDA and cuBLAS error checks that name the failing call, the file and the line.
#pragma once

#include "isthmus/error.hpp"

#include <cuda_runtime.h>

namespace isthmus::cudabk {

/// Throws runtime_error (memory_error for an out-of-memory code) for a failed CUDA call.
[[noreturn]] void throw_cuda(cudaError_t rc, const char* call, const char* file, int line);
/// True when ISTHMUS_CUDA_SYNC=1: every kernel launch waits for its kernel, so an error in it
/// is reported at that launch instead of at the next synchronisation.
bool sync_each_launch() noexcept;
/// Checks the launch just made on `stream` (and waits for it under ISTHMUS_CUDA_SYNC=1).
void check_launch(cudaStream_t stream, const char* kernel, const char* file, int line);

} // namespace isthmus::cudabk

/// Checks a CUDA runtime call: on failure throws with the call's text, the file and the line.
#define ISTHMUS_CUDA_CHECK(call)                                                                   \
    do {                                                                                           \
        const cudaError_t isthmus_rc_ = (call);                                                    \
        if (isthmus_rc_ != cudaSuccess)                                                            \
            ::isthmus::cudabk::throw_cuda(isthmus_rc_, #call, __FILE__, __LINE__);                 \
    } while (0)

/// Checks a kernel launch (configuration errors now, execution errors under ISTHMUS_CUDA_SYNC=1).
#define ISTHMUS_CUDA_LAUNCHED(stream, kernel)                                                      \
    ::isthmus::cudabk::check_launch((stream), (kernel), __FILE__, __LINE__)
