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

/// Note [export release order]
/// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
/// When a consumer lets go of exported device memory (a DLPack deleter, a
/// `__cuda_array_interface__` exporter's death), its last kernels reading it may still be queued on
/// its stream, while isthmus may free the storage at once and hand the block to its next allocation
/// (the caching allocator reuses blocks in isthmus's stream order only). So isthmus's stream first
/// waits (an event, no host wait) for the stream this returns: the DLPack consumer's stream
/// (nullptr after stream=-1: the consumer took charge of ordering), or for the array interface,
/// which names no consumer stream, the legacy default stream (its work also waits for every
/// blocking stream: PyTorch's and CuPy's default streams are covered, work on non-blocking streams
/// must be synchronised by the user). The consumer stream must still exist when the tensor is
/// released, which DLPack consumers that use the stream they named guarantee; 2 (the per-thread
/// default stream) means the releasing thread's.
inline void* release_wait_stream(bool dlpack, void* consumer_stream) {
    return dlpack ? consumer_stream : reinterpret_cast<void*>(legacy_default_stream);
}

/// A stream from a DLPack exchange table's current_work_stream (Note [dlpack exchange api]):
/// producers report their default stream as 0 (torch's `cuda_stream` of the default stream),
/// which for them is the legacy default stream; isthmus's wait functions read a null handle as
/// the legacy default stream too, but say so explicitly (1), whatever the module was compiled
/// for. Other values are cudaStream_t handles.
inline void* exchange_producer_stream(void* reported) {
    return reported ? reported : reinterpret_cast<void*>(legacy_default_stream);
}

/// How an imported CUDA tensor goes back to its producer when isthmus lets go of it.
struct import_hand_back {
    bool host_waits;       ///< the host waits for isthmus's stream before the deleter runs
    void* producer_stream; ///< otherwise this stream waits (an event) for isthmus's stream
};

/// Note [import hand-back]
/// ~~~~~~~~~~~~~~~~~~~~~~~
/// DLPack gives the memory back through the deleter and has no way to hand a stream back with it,
/// yet isthmus's kernels reading or writing an imported tensor may still be queued when the last
/// view dies, and the producer may reuse or read the memory at once. When the import came through
/// an exchange table, the producer's work stream at import time is known (torch's current stream:
/// the one isthmus's stream waited for before using the data); that stream is made to wait for
/// isthmus's stream through an event, so the producer's later work (torch reading what a plugin
/// kernel wrote, overwriting what an op read, its allocator reusing the block) is ordered after
/// isthmus's, as if the call had run on torch's current stream, and the host never waits. That
/// stream must still exist at release, which torch's streams (taken from its pool, never destroyed)
/// do. Other imports (a producer's `__dlpack__`, bare capsules) name no stream to hand back on: the
/// host waits for isthmus's stream (a stream sync, not a device sync) before the deleter runs.
inline import_hand_back hand_back_plan(std::optional<void*> exchange_stream) {
    if (!exchange_stream) return {true, nullptr};
    return {false, exchange_producer_stream(*exchange_stream)};
}

} // namespace isthmus::boundary
