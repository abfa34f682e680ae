// The caching host allocator behind the CPU memory resource: freed blocks are kept for reuse.
#pragma once

#include <cstddef>

namespace isthmus::detail {

/// Allocates `nbytes` of 64-byte aligned host memory, from the cache when a block of the same
/// size class is free. nullptr when the system is out of memory (after flushing the cache).
void* host_allocate(size_t nbytes) noexcept;
/// Returns a block from host_allocate(nbytes) to the cache (or to the system when the cache is
/// full or the block too large to keep).
void host_deallocate(void* p, size_t nbytes) noexcept;

} // namespace isthmus::detail
