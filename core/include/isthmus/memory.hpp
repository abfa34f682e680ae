// Memory resources: the PyQuasar manual's MEMRESOURCE numbering, the resource interface, the
// registry.
#pragma once

#include "isthmus/export.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace isthmus {

/// Identifies a memory resource. Numbering follows the PyQuasar seed: DEVICE0 + n is device n,
/// DEVICE1 is the CPU, DEVICE2 is CUDA device 0, DEVICE3 CUDA device 1, and so on.
using resource_id = int;

/// The configuration's default compute device (resolved through `default_resource()`).
inline constexpr resource_id MEMRESOURCE_DEVICE0 = 0;
inline constexpr resource_id MEMRESOURCE_DEVICE1 = 1;
inline constexpr resource_id MEMRESOURCE_DEVICE2 = 2;
inline constexpr resource_id MEMRESOURCE_DEVICE3 = 3;
inline constexpr resource_id MEMRESOURCE_DEVICE4 = 4;
/// Host memory.
inline constexpr resource_id MEMRESOURCE_CPU = MEMRESOURCE_DEVICE1;
/// The first CUDA device.
inline constexpr resource_id MEMRESOURCE_SINGLE_CUDA = MEMRESOURCE_DEVICE2;
/// Exists for the PyQuasar manual's API; every use raises not_implemented_error.
inline constexpr resource_id MEMRESOURCE_SINGLE_OPENCL = 0x4000;
/// The highest resource id the registry accepts.
inline constexpr resource_id max_resource_id = 64;

/// The resource id of CUDA device `n`.
constexpr resource_id cuda_resource(int n) {
    return MEMRESOURCE_DEVICE2 + n;
}

/// A place bytes can live: host memory, a CUDA device, or a test double.
/// Implementations must be thread-safe. `allocate` returns nullptr (never throws) when the
/// resource is full, so the storage layer can evict unlocked copies and retry.
class ISTHMUS_API memory_resource {
public:
    virtual ~memory_resource();
    /// The resource's id (its slot in the registry).
    virtual resource_id id() const noexcept = 0;
    /// A short name for messages: "cpu", "cuda:0", "fake:2".
    virtual std::string name() const = 0;
    /// True when the CPU can dereference pointers of this resource directly.
    virtual bool host_accessible() const noexcept = 0;
    /// Allocates `nbytes` (nbytes may be 0; then a unique non-null pointer or nullptr on failure).
    virtual void* allocate(size_t nbytes) noexcept = 0;
    /// Frees a block returned by allocate.
    virtual void deallocate(void* p, size_t nbytes) noexcept = 0;
    /// Copies host -> this resource. Completes before returning, as seen by later host reads.
    virtual void copy_from_host(void* dst, const void* src, size_t nbytes) = 0;
    /// Copies this resource -> host, complete on return.
    virtual void copy_to_host(void* dst, const void* src, size_t nbytes) = 0;
    /// Copies within this resource.
    virtual void copy_within(void* dst, const void* src, size_t nbytes) = 0;
    /// Copies from another resource directly when it knows how (peer copy); returns false to let
    /// the caller stage the bytes through host memory.
    virtual bool copy_from_peer(void* dst, const memory_resource& src_res, const void* src,
                                size_t nbytes);
    /// Waits until queued work that touches this resource's memory has finished.
    virtual void synchronize() {}
};

/// The registry of memory resources, indexed by resource_id. The CPU is always present.
/// Backends (CUDA) and tests register more.
ISTHMUS_API memory_resource& get_resource(resource_id id);
/// Like get_resource but returns nullptr when no resource has that id.
ISTHMUS_API memory_resource* find_resource(resource_id id) noexcept;
/// Registers a resource under its id(); throws value_error when the id is taken or invalid.
ISTHMUS_API void register_resource(std::shared_ptr<memory_resource> res);
/// Removes a resource. Storages that still hold copies there keep the resource object alive.
ISTHMUS_API void unregister_resource(resource_id id);
/// The resolved id for MEMRESOURCE_DEVICE0 (the configured default device); CPU initially.
ISTHMUS_API resource_id default_resource() noexcept;
ISTHMUS_API void set_default_resource(resource_id id);
/// Maps MEMRESOURCE_DEVICE0 to the default device, checks the id exists; throws otherwise
/// (not_implemented_error for OpenCL, value_error for an unknown id).
ISTHMUS_API resource_id resolve_resource(resource_id id);
/// The shared_ptr that owns a registered resource (storages hold it to outlive unregistering).
ISTHMUS_API std::shared_ptr<memory_resource> resource_handle(resource_id id);

/// What the caching host allocator holds (Note [host block cache] in core/src/host_cache.cpp).
struct host_cache_stats {
    size_t cached_bytes = 0; ///< bytes in free blocks kept for reuse
    size_t limit_bytes = 0;  ///< the most it keeps (ISTHMUS_HOST_CACHE_MB, default 1 GiB)
    size_t hits = 0;         ///< allocations served from the cache
    size_t misses = 0;       ///< allocations that went to the system
};
/// The host allocator's cache figures.
ISTHMUS_API host_cache_stats host_cache_info() noexcept;
/// Returns every cached free host block to the system; returns the bytes released.
ISTHMUS_API size_t empty_host_cache() noexcept;
/// Sets the most bytes the host cache keeps (0: no caching); empties it when above the new limit.
ISTHMUS_API void set_host_cache_limit(size_t bytes) noexcept;

/// Copies bytes between any two resources (staging through host memory when neither side has a
/// direct path).
ISTHMUS_API void copy_bytes(memory_resource& dst_res, void* dst, memory_resource& src_res,
                            const void* src, size_t nbytes);

} // namespace isthmus
