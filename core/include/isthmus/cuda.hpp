// The CUDA backend from C++: whether it can run here, starting it on a device, its memory.
#pragma once

#include "isthmus/export.hpp"
#include "isthmus/memory.hpp"

#include <cstddef>
#include <string>

namespace isthmus::cuda {

/// True when the CUDA backend module loads and sees at least one device. Never throws; the
/// reason it cannot run is in unavailable_reason().
ISTHMUS_API bool available() noexcept;
/// Why available() is false ("" when it is true): the module is missing (not built, or
/// dlopen's message), or the CUDA runtime reports no driver or no device.
ISTHMUS_API std::string unavailable_reason();
/// The number of CUDA devices; throws runtime_error naming the cause when there is none.
ISTHMUS_API int device_count();
/// Loads the backend (once), registers every device as a memory resource with a compute backend
/// (cuda:N is MEMRESOURCE_DEVICE2 + N) and makes `device` the default resource
/// (MEMRESOURCE_DEVICE0). Throws runtime_error when CUDA cannot run here, value_error for a
/// device number out of range.
ISTHMUS_API void init(int device = 0);
/// Loads the backend (once) and registers every device as a memory resource with a compute
/// backend, without changing the default resource (for foreign CUDA memory met after
/// init("cpu"): DLPack and `__cuda_array_interface__` imports). Idempotent. Throws runtime_error
/// naming the cause when CUDA cannot run here.
ISTHMUS_API void ensure_registered();
/// True once init() or ensure_registered() has registered the devices.
ISTHMUS_API bool initialized() noexcept;
/// Waits for all work queued on `device` (every device for -1).
ISTHMUS_API void synchronize(int device = -1);

/// What a device's caching allocator holds.
struct memory_stats {
    size_t allocated_bytes = 0;    ///< bytes in blocks handed out to storages (any source)
    size_t cached_bytes = 0;       ///< bytes in free blocks kept for reuse
    size_t limit_bytes = 0;        ///< the cap set by set_memory_limit (SIZE_MAX: none)
    size_t device_allocations = 0; ///< cudaMalloc calls so far
};
/// The caching allocator's figures for `device`.
ISTHMUS_API memory_stats memory_info(int device);
/// Caps the bytes `device`'s allocator may hold (allocated + cached); allocations past it fail,
/// which makes the storage layer evict unlocked copies to the CPU and retry (for tests and for
/// sharing a GPU). SIZE_MAX removes the cap.
ISTHMUS_API void set_memory_limit(int device, size_t bytes);
/// Frees the cached free blocks of `device`; returns the bytes released.
ISTHMUS_API size_t empty_cache(int device);

/// Where new CUDA device memory comes from, instead of isthmus's caching allocator (Note
/// [device memory source] in core/src/cuda/module_abi.h): e.g. PyTorch's caching allocator, so
/// that two pools do not hold memory apart from each other (`q.cuda_memory_source("torch")`).
/// `allocate` is called with the device current and isthmus's stream of that device (blocks are
/// used in that stream's order), returns nullptr when it has no memory (isthmus then evicts
/// unlocked copies to the CPU and asks again) and must not throw; `deallocate` takes the block
/// back with the size asked for. Functions and ctx must stay valid for the process.
struct memory_source {
    void* (*allocate)(void* ctx, size_t nbytes, int device, void* stream) = nullptr;
    void (*deallocate)(void* ctx, void* ptr, size_t nbytes, int device, void* stream) = nullptr;
    void* ctx = nullptr;
    std::string name; ///< what memory_source_name() reports (not "isthmus")
};
/// Takes new device memory of every device from `source`; a source without functions goes back
/// to isthmus's caching allocator. Each block goes back to the source that gave it, so this may
/// be called at any time; setting a source releases isthmus's cached free blocks. Loads the
/// backend and registers the devices. Throws runtime_error when CUDA cannot run here,
/// value_error for a source with one function of the two or without a name.
ISTHMUS_API void set_memory_source(const memory_source& source);
/// "isthmus" (the built-in caching allocator) or the name of the source set.
ISTHMUS_API std::string memory_source_name();

/// The stream every kernel and copy of `device` is queued on, as a `cudaStream_t` (for launching
/// one's own kernels in order with isthmus's work: plugins, DLPack/`__cuda_array_interface__`
/// exchange). Requires init() or ensure_registered(). See Note [current device]: isthmus never
/// leaves the calling thread's current CUDA device changed (every call that sets it restores it).
ISTHMUS_API void* stream(int device);
/// Makes `device`'s stream wait (on the GPU, through an event; the host does not wait) for the
/// work queued so far on `other` (a cudaStream_t; 1 is the legacy default stream, 2 the
/// per-thread default stream, both of `device`; a handle may belong to another device). `other`
/// must exist. Requires init() or ensure_registered().
ISTHMUS_API void stream_wait_for(int device, void* other);
/// Makes `other` wait (on the GPU) for the work queued so far on `device`'s stream (`other` may
/// be a stream of any device; 1 and 2 name `device`'s default streams).
ISTHMUS_API void make_stream_wait(void* other, int device);
/// The CUDA ordinal of the device (or managed) memory at `ptr`; value_error for host memory.
ISTHMUS_API int pointer_device(const void* ptr);

} // namespace isthmus::cuda
