// CUDA devices: the caching allocator, pinned staging transfers and the memory resource.
#include "cuda/device.hpp"
#include "cuda/check.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

namespace isthmus::cudabk {

namespace {

size_t round_size(size_t n) {
    constexpr size_t small = 512, large = size_t{2} << 20;
    if (n == 0) n = 1;
    if (n <= (size_t{1} << 20)) return (n + small - 1) / small * small;
    return (n + large - 1) / large * large;
}

std::atomic<const isthmus_cuda_memory_source*> g_source{nullptr};

} // namespace

void set_device_memory_source(const isthmus_cuda_memory_source* source) noexcept {
    g_source.store(source, std::memory_order_release);
}

const isthmus_cuda_memory_source* device_memory_source() noexcept {
    return g_source.load(std::memory_order_acquire);
}

// ---- current device and stream order ----

device_guard::device_guard(int device, std::nothrow_t) noexcept : device_(device) {
    if (cudaGetDevice(&previous_) != cudaSuccess) {
        cudaGetLastError();
        previous_ = -1;
    }
    if (previous_ == device_) {
        ok_ = true;
        return;
    }
    ok_ = cudaSetDevice(device_) == cudaSuccess;
    if (!ok_) cudaGetLastError();
}

device_guard::device_guard(int device) : device_guard(device, std::nothrow) {
    if (!ok_) ISTHMUS_CUDA_CHECK(cudaSetDevice(device_)); // again, for the error and its message
}

device_guard::~device_guard() {
    if (previous_ >= 0 && previous_ != device_ && cudaSetDevice(previous_) != cudaSuccess)
        cudaGetLastError();
}

void stream_after(int from_device, cudaStream_t from, cudaStream_t to) {
    if (from == to) return;
    const device_guard on(from_device);
    cudaEvent_t ev = nullptr;
    ISTHMUS_CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    const cudaError_t rec = cudaEventRecord(ev, from);
    const cudaError_t wait = rec == cudaSuccess ? cudaStreamWaitEvent(to, ev, 0) : rec;
    cudaEventDestroy(ev); // released by the driver once the recorded work completes
    ISTHMUS_CUDA_CHECK(wait);
}

// ---- caching allocator ----

void* caching_allocator::allocate(size_t nbytes, cudaStream_t stream) noexcept {
    if (const isthmus_cuda_memory_source* source = device_memory_source())
        return allocate_from(source, nbytes, stream);
    const size_t size = round_size(nbytes);
    std::lock_guard lk(mu_);
    // A cached block of this size, or up to a quarter larger (never a much larger block).
    if (auto it = free_.lower_bound(size); it != free_.end() && it->first <= size + size / 4) {
        void* p = it->second;
        const size_t got = it->first;
        free_.erase(it);
        cached_ -= got;
        allocated_ += got;
        live_.emplace(p, block{got, nullptr});
        return p;
    }
    for (int attempt = 0; attempt < 2; ++attempt) {
        if (attempt == 1 && release_cache_locked(stream) == 0) break;
        if (allocated_ + cached_ + size > limit_) {
            if (attempt == 0) continue; // release the cache and check again
            break;
        }
        void* p = nullptr;
        const device_guard on(device_, std::nothrow);
        if (!on.ok()) return nullptr;
        if (cudaMalloc(&p, size) == cudaSuccess) {
            ++mallocs_;
            allocated_ += size;
            live_.emplace(p, block{size, nullptr});
            return p;
        }
        cudaGetLastError(); // out of memory is not sticky; clear it
    }
    return nullptr;
}

// A block from a memory source (Note [device memory source]): the limit holds for it too, and
// the cache is released first when the limit would be passed.
void* caching_allocator::allocate_from(const isthmus_cuda_memory_source* source, size_t nbytes,
                                       cudaStream_t stream) noexcept {
    const size_t size = nbytes == 0 ? 1 : nbytes;
    std::lock_guard lk(mu_);
    if (allocated_ + cached_ + size > limit_) release_cache_locked(stream);
    if (allocated_ + cached_ + size > limit_) return nullptr;
    const device_guard on(device_, std::nothrow);
    if (!on.ok()) return nullptr;
    void* p = source->allocate(source->ctx, size, device_, stream);
    if (!p) return nullptr;
    allocated_ += size;
    live_.emplace(p, block{size, source});
    return p;
}

void caching_allocator::deallocate(void* p, cudaStream_t stream) noexcept {
    if (!p) return;
    std::lock_guard lk(mu_);
    auto it = live_.find(p);
    if (it == live_.end()) return; // not ours: nothing safe to do
    const block b = it->second;
    live_.erase(it);
    allocated_ -= b.size;
    if (b.source) { // back to the source that gave it, in the stream's order
        const device_guard on(device_, std::nothrow);
        b.source->deallocate(b.source->ctx, p, b.size, device_, stream);
        return;
    }
    free_.emplace(b.size, p);
    cached_ += b.size;
}

size_t caching_allocator::release_cache(cudaStream_t stream) noexcept {
    std::lock_guard lk(mu_);
    return release_cache_locked(stream);
}

size_t caching_allocator::release_cache_locked(cudaStream_t stream) noexcept {
    if (free_.empty()) return 0;
    const device_guard on(device_, std::nothrow);
    cudaStreamSynchronize(stream); // queued work may still use a cached block's last owner data
    size_t released = 0;
    for (auto& [size, p] : free_) {
        cudaFree(p);
        released += size;
    }
    cudaGetLastError();
    free_.clear();
    cached_ = 0;
    return released;
}

void caching_allocator::set_limit(size_t bytes) noexcept {
    std::lock_guard lk(mu_);
    limit_ = bytes;
}
size_t caching_allocator::allocated() const noexcept {
    std::lock_guard lk(mu_);
    return allocated_;
}
size_t caching_allocator::cached() const noexcept {
    std::lock_guard lk(mu_);
    return cached_;
}
size_t caching_allocator::limit() const noexcept {
    std::lock_guard lk(mu_);
    return limit_;
}
size_t caching_allocator::mallocs() const noexcept {
    std::lock_guard lk(mu_);
    return mallocs_;
}

// ---- device ----

device::device(int ordinal) : ordinal_(ordinal), alloc_(ordinal) {
    const device_guard on(ordinal_); // the stream belongs to this device
    ISTHMUS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

device::~device() {
    // Registered devices live until process exit, when the CUDA context may be gone already:
    // nothing is released here (the driver reclaims everything with the process).
}

void device::activate() const {
    ISTHMUS_CUDA_CHECK(cudaSetDevice(ordinal_));
}

void* device::allocate(size_t nbytes) noexcept {
    return alloc_.allocate(nbytes, stream_);
}

void device::deallocate(void* p, size_t) noexcept {
    alloc_.deallocate(p, stream_);
}

void* device::scratch(size_t nbytes) {
    void* p = alloc_.allocate(nbytes, stream_);
    ISTHMUS_CHECK(p != nullptr, memory_error, name(), ": could not allocate ", nbytes,
                  " bytes of scratch space for a kernel");
    return p;
}

void device::ensure_staging() {
    if (stage_[0]) return;
    for (int i = 0; i < 2; ++i) {
        ISTHMUS_CUDA_CHECK(cudaHostAlloc(&stage_[i], stage_bytes, cudaHostAllocPortable));
        ISTHMUS_CUDA_CHECK(cudaEventCreateWithFlags(&stage_done_[i], cudaEventDisableTiming));
    }
}

void device::copy_from_host(void* dst, const void* src, size_t nbytes) {
    if (nbytes == 0) return;
    const device_guard on(ordinal_);
    std::lock_guard lk(stage_mu_);
    ensure_staging();
    auto* d = static_cast<char*>(dst);
    const auto* s = static_cast<const char*>(src);
    for (size_t off = 0, i = 0; off < nbytes; off += stage_bytes, ++i) {
        const size_t n = std::min(stage_bytes, nbytes - off);
        const int b = static_cast<int>(i % 2);
        // The buffer's previous DMA must be done before it is refilled.
        ISTHMUS_CUDA_CHECK(cudaEventSynchronize(stage_done_[b]));
        std::memcpy(stage_[b], s + off, n);
        ISTHMUS_CUDA_CHECK(cudaMemcpyAsync(d + off, stage_[b], n, cudaMemcpyHostToDevice, stream_));
        ISTHMUS_CUDA_CHECK(cudaEventRecord(stage_done_[b], stream_));
    }
    // The source is free now (it was copied into the staging buffers); later device work is
    // ordered after the DMA on the stream, and the next transfer waits for the buffers' events.
}

void device::copy_to_host(void* dst, const void* src, size_t nbytes) {
    if (nbytes == 0) return;
    const device_guard on(ordinal_);
    std::lock_guard lk(stage_mu_);
    ensure_staging();
    auto* d = static_cast<char*>(dst);
    const auto* s = static_cast<const char*>(src);
    const size_t chunks = (nbytes + stage_bytes - 1) / stage_bytes;
    auto issue = [&](size_t i) {
        const size_t off = i * stage_bytes, n = std::min(stage_bytes, nbytes - off);
        const int b = static_cast<int>(i % 2);
        ISTHMUS_CUDA_CHECK(cudaMemcpyAsync(stage_[b], s + off, n, cudaMemcpyDeviceToHost, stream_));
        ISTHMUS_CUDA_CHECK(cudaEventRecord(stage_done_[b], stream_));
    };
    issue(0);
    for (size_t i = 0; i < chunks; ++i) {
        if (i + 1 < chunks) issue(i + 1); // the next chunk moves while this one is drained
        const int b = static_cast<int>(i % 2);
        ISTHMUS_CUDA_CHECK(cudaEventSynchronize(stage_done_[b]));
        const size_t off = i * stage_bytes, n = std::min(stage_bytes, nbytes - off);
        std::memcpy(d + off, stage_[b], n);
    }
}

void device::copy_within(void* dst, const void* src, size_t nbytes) {
    if (nbytes == 0) return;
    const device_guard on(ordinal_);
    ISTHMUS_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice, stream_));
}

bool device::copy_from_peer(void* dst, const memory_resource& src_res, const void* src,
                            size_t nbytes) {
    const auto* other = dynamic_cast<const device*>(&src_res);
    if (!other) return false;
    if (nbytes == 0) return true;
    // Note [peer copies]
    // ~~~~~~~~~~~~~~~~~~
    // The copy is queued on this device's stream, ordered both ways with the source device's stream
    // through events (the host never waits): after the source's queued writes, and before anything
    // the source queues later (a write to the source copy once it is unlocked must not overtake the
    // read).
    stream_after(other->ordinal(), other->stream(), stream_);
    {
        const device_guard on(ordinal_);
        ISTHMUS_CUDA_CHECK(
            cudaMemcpyPeerAsync(dst, ordinal_, src, other->ordinal(), nbytes, stream_));
    }
    stream_after(ordinal_, stream_, other->stream());
    return true;
}

void device::synchronize() {
    const device_guard on(ordinal_);
    ISTHMUS_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

} // namespace isthmus::cudabk
