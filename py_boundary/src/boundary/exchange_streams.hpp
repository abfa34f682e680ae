// The DLPack and CUDA-array-interface stream rules as plain functions (no Python: host-tested).
#pragma once

#include "isthmus/error.hpp"

#include <cstdint>
#include <optional>

namespace isthmus::boundary {

/// The stream handles with a fixed meaning in both protocols.
inline constexpr uintptr_t legacy_default_stream = 1, per_thread_default_stream = 2;

/// Note [dlpack streams] (dlpack.cpp), export side: `__dlpack__(stream=s)` for CUDA data names
/// the consumer's stream. Returns the stream made to wait for isthmus's stream (and waited for
/// by isthmus's stream when the consumer releases the tensor): None (nullopt) is the legacy
/// default stream, 1 and 2 the legacy and per-thread default streams, larger values
/// cudaStream_t handles; -1 gives nullptr (no synchronisation either way). 0 (ambiguous) and
/// values below -1 raise value_error.
inline void* dlpack_consumer_stream(std::optional<int64_t> s) {
    if (!s) return reinterpret_cast<void*>(legacy_default_stream);
    ISTHMUS_CHECK(*s != 0, value_error,
                  "__dlpack__: stream=0 is not allowed for CUDA data (it is ambiguous); pass None "
                  "or 1 for the legacy default stream, 2 for the per-thread default stream, a "
                  "cudaStream_t, or -1 for no synchronisation");
    ISTHMUS_CHECK(*s >= -1, value_error,
                  "__dlpack__: stream must be -1, 1, 2 or a cudaStream_t, got ", *s);
    if (*s == -1) return nullptr;
    return reinterpret_cast<void*>(static_cast<uintptr_t>(*s));
}

/// Note [cuda array interface] (cuda_array_interface.cpp), import side: the v3 "stream" entry is
/// the producer's stream, which isthmus's stream must wait for before using the data. Returns
/// it, or nullptr when the entry is absent or None (the data is ready). 0 is disallowed by the
/// protocol and negative values are no stream: value_error.
inline void* cai_producer_stream(std::optional<int64_t> s) {
    if (!s) return nullptr;
    ISTHMUS_CHECK(*s != 0, value_error,
                  "__cuda_array_interface__: stream 0 is disallowed by the protocol (it is "
                  "ambiguous); producers give None, 1, 2 or a cudaStream_t");
    ISTHMUS_CHECK(*s > 0, value_error, "__cuda_array_interface__: stream ", *s,
                  " is not a stream (expected None, 1, 2 or a cudaStream_t)");
    return reinterpret_cast<void*>(static_cast<uintptr_t>(*s));
}

/// Note [export release order]: when a consumer lets go of exported device memory (a DLPack
/// deleter, a `__cuda_array_interface__` exporter's death), its last kernels reading it may
/// still be queued on its stream, while isthmus may free the storage at once and hand the
/// block to its next allocation (the caching allocator reuses blocks in isthmus's stream
/// order only). So isthmus's stream first waits (an event, no host wait) for the stream this
/// returns: the DLPack consumer's stream (nullptr after stream=-1: the consumer took charge of
/// ordering), or for the array interface, which names no consumer stream, the legacy default
/// stream (its work also waits for every blocking stream: PyTorch's and CuPy's default streams
/// are covered, work on non-blocking streams must be synchronised by the user). The consumer
/// stream must still exist when the tensor is released, which DLPack consumers that use the
/// stream they named guarantee; 2 (the per-thread default stream) means the releasing thread's.
inline void* release_wait_stream(bool dlpack, void* consumer_stream) {
    return dlpack ? consumer_stream : reinterpret_cast<void*>(legacy_default_stream);
}

} // namespace isthmus::boundary
