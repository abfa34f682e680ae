// One CUDA device: its stream, caching allocator, pinned staging buffers and memory resource.
#pragma once

#include "cuda/module_abi.h"
#include "isthmus/memory.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <unordered_map>

namespace isthmus::cudabk {

/// Note [current device]
/// ~~~~~~~~~~~~~~~~~~~~~
/// The calling thread's current CUDA device is the driver's current context, shared by every CUDA
/// runtime in the process (this module's static cudart, a plugin's, PyTorch's, CuPy's). Setting it
/// and leaving it set would move the same thread's next `torch.empty(..., device="cuda")` (or a
/// plugin's default) to another GPU on a multi-GPU machine. So the module sets a device only
/// through this guard, which puts the caller's device back when it goes out of scope (nothing is
/// changed when the device is already current).
class device_guard {
public:
    /// Makes `device` current (throws runtime_error naming the call when that fails).
    explicit device_guard(int device);
    /// The same without throwing (for noexcept paths): ok() says whether `device` is current.
    device_guard(int device, std::nothrow_t) noexcept;
    ~device_guard();
    device_guard(const device_guard&) = delete;
    device_guard& operator=(const device_guard&) = delete;
    bool ok() const noexcept { return ok_; }

private:
    int previous_ = -1;
    int device_;
    bool ok_ = false;
};

/// The memory source new device blocks come from (nullptr: cudaMalloc and the cache), for every
/// device (Note [device memory source] in module_abi.h).
void set_device_memory_source(const isthmus_cuda_memory_source* source) noexcept;
const isthmus_cuda_memory_source* device_memory_source() noexcept;

/// Makes `to` wait (on the GPU; the host does not wait) for the work queued on `from` so far:
/// an event created on `from_device` (the device `from` belongs to; for the default-stream
/// handles 1 and 2, the device whose default stream is meant) is recorded on `from` and waited
/// for on `to`, then destroyed (the driver frees it once the wait is satisfied).
void stream_after(int from_device, cudaStream_t from, cudaStream_t to);

/// Note [caching allocator]
/// ~~~~~~~~~~~~~~~~~~~~~~~~
/// cudaMalloc and cudaFree are slow and cudaFree synchronises the device, so freed blocks are kept
/// in a per-device free list (sizes rounded: 512 bytes below 1 MiB, 2 MiB above) and handed out
/// again. Every kernel and copy of a device runs on the device's one stream, so a block freed by
/// the host while queued work still reads it is only reused by work queued later on the same
/// stream: stream order makes reuse safe without events. When cudaMalloc fails, or the cap set by
/// set_memory_limit would be passed, the cache is released (after a stream synchronisation) and the
/// allocation retried once; if it still fails, allocate returns nullptr and the storage layer
/// evicts unlocked copies to the CPU and asks again (Note [eviction retries] in
/// core/src/storage.cpp).
///
/// With a memory source set (Note [device memory source] in module_abi.h), new blocks come from
/// the source instead, unrounded and uncached; each block remembers where it came from and goes
/// back there. The limit and the figures cover both kinds.
class caching_allocator {
public:
    explicit caching_allocator(int device) : device_(device) {}
    ~caching_allocator() = default; // blocks are left to process exit (the context goes too)
    void* allocate(size_t nbytes, cudaStream_t stream) noexcept;
    void deallocate(void* p, cudaStream_t stream) noexcept;
    /// Frees the cached blocks (after waiting for `stream`); returns the bytes released.
    size_t release_cache(cudaStream_t stream) noexcept;
    void set_limit(size_t bytes) noexcept;
    size_t allocated() const noexcept;
    size_t cached() const noexcept;
    size_t limit() const noexcept;
    size_t mallocs() const noexcept;

private:
    struct block {
        size_t size;                              // rounded (cudaMalloc) or as asked (a source)
        const isthmus_cuda_memory_source* source; // nullptr: cudaMalloc, cached when freed
    };
    void* allocate_from(const isthmus_cuda_memory_source* source, size_t nbytes,
                        cudaStream_t stream) noexcept;
    size_t release_cache_locked(cudaStream_t stream) noexcept;
    int device_;
    mutable std::mutex mu_;
    std::multimap<size_t, void*> free_;     // rounded size -> block
    std::unordered_map<void*, block> live_; // block -> its size and origin
    size_t allocated_ = 0, cached_ = 0, limit_ = SIZE_MAX, mallocs_ = 0;
};

/// A CUDA device as seen by the runtime: registered as memory resource cuda_resource(n).
class device final : public memory_resource {
public:
    explicit device(int ordinal);
    ~device() override;

    resource_id id() const noexcept override { return cuda_resource(ordinal_); }
    std::string name() const override { return "cuda:" + std::to_string(ordinal_); }
    bool host_accessible() const noexcept override { return false; }
    void* allocate(size_t nbytes) noexcept override;
    void deallocate(void* p, size_t nbytes) noexcept override;
    void copy_from_host(void* dst, const void* src, size_t nbytes) override;
    void copy_to_host(void* dst, const void* src, size_t nbytes) override;
    void copy_within(void* dst, const void* src, size_t nbytes) override;
    bool copy_from_peer(void* dst, const memory_resource& src_res, const void* src,
                        size_t nbytes) override;
    void synchronize() override;

    int ordinal() const noexcept { return ordinal_; }
    /// The device's one stream: every kernel and copy of this device is queued on it.
    cudaStream_t stream() const noexcept { return stream_; }
    /// Makes this device current on the calling thread and leaves it so; prefer a device_guard,
    /// which restores the caller's device (Note [current device]).
    void activate() const;
    caching_allocator& allocator() noexcept { return alloc_; }
    /// A temporary device buffer for a kernel's scratch space (freed into the cache, which
    /// stream order makes safe); throws memory_error when none can be had.
    void* scratch(size_t nbytes);
    void free_scratch(void* p) noexcept { alloc_.deallocate(p, stream_); }

private:
    // Note [pinned staging]
    // ~~~~~~~~~~~~~~~~~~~~~
    // Transfers between pageable host memory and the device go through two page-locked buffers,
    // used in turn: while the DMA engine moves one chunk, the CPU fills (or drains) the other.
    // Pageable memory cannot be DMA'd directly; this is what the driver would do too, but here the
    // chunks overlap and the host buffer is free on return.
    static constexpr size_t stage_bytes = size_t{16} << 20;
    void ensure_staging();

    int ordinal_;
    cudaStream_t stream_ = nullptr;
    caching_allocator alloc_;
    std::mutex stage_mu_;
    void* stage_[2] = {nullptr, nullptr};
    cudaEvent_t stage_done_[2] = {nullptr, nullptr};
};

} // namespace isthmus::cudabk
