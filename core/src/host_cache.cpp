// The caching host allocator: size classes, free lists and a byte cap (Note [host block cache]).
#include "host_cache.hpp"

#include "isthmus/memory.hpp"
#include "isthmus/storage.hpp" // detail::spin_mutex

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include <sys/mman.h>

namespace isthmus {

namespace {

// Note [host block cache]
// ~~~~~~~~~~~~~~~~~~~~~~~
// Every op allocates its output, and glibc hands large blocks (above its mmap threshold) back to
// the kernel on free, so the next same-sized output is fresh memory that the kernel must fault in
// and zero page by page: a 20 MB add spent more time in page faults than in adding. Small blocks
// pay aligned_alloc's slower path each time. So, as PyTorch's CUDA allocator does for device
// memory, freed host blocks go to free lists by size class and are handed out again: classes are 4
// per doubling (256, 320, 384, 448, 512, 640, ... bytes; at most 25% slack), and the cache holds at
// most `cap` bytes (1 GiB by default, ISTHMUS_HOST_CACHE_MB overrides, 0 turns caching off).
// Anything that would exceed the cap goes back to the system. When the system refuses an allocation
// the cache is emptied and the allocation retried, so cached blocks never cause an out-of-memory
// error. empty_host_cache() returns every cached block to the system.

constexpr size_t min_class = 256;

size_t class_size(size_t n) {
    if (n <= min_class) return min_class;
    const int hi = std::bit_width(n - 1) - 1; // 2^hi < n <= 2^(hi + 1)
    const size_t base = size_t{1} << hi;
    const size_t step = base / 4;
    return base + (n - base + step - 1) / step * step;
}

size_t class_index(size_t cs) {
    if (cs <= min_class) return 0;
    const int hi = std::bit_width(cs - 1) - 1;
    const size_t base = size_t{1} << hi;
    const size_t j = (cs - base) / (base / 4); // 1..4
    return static_cast<size_t>(hi - 8) * 4 + j;
}

size_t configured_cap() {
    if (const char* env = std::getenv("ISTHMUS_HOST_CACHE_MB")) {
        char* end = nullptr;
        const unsigned long long mb = std::strtoull(env, &end, 10);
        if (end != env) return static_cast<size_t>(mb) << 20;
    }
    return size_t{1} << 30;
}

struct cache {
    detail::spin_mutex mu; // held for a list operation only (Note [storage mutex])
    std::vector<std::vector<void*>> lists = std::vector<std::vector<void*>>(256);
    size_t cached = 0;
    size_t cap = configured_cap();
    size_t hits = 0, misses = 0;
};

cache& the_cache() {
    static cache* c = new cache; // never destroyed: blocks may be freed during static teardown
    return *c;
}

void* system_allocate(size_t cs) noexcept {
    void* p = std::aligned_alloc(64, cs);
    // Note [huge pages]
    // ~~~~~~~~~~~~~~~~~
    // Like NumPy, ask for transparent huge pages on large blocks. With THP in "madvise" mode, a
    // fresh 200 MB output otherwise takes ~50k page faults.
    if (p && cs >= (size_t{1} << 22)) {
        const auto a = reinterpret_cast<uintptr_t>(p) & ~uintptr_t{4095};
        (void)madvise(reinterpret_cast<void*>(a), cs + (reinterpret_cast<uintptr_t>(p) - a),
                      MADV_HUGEPAGE);
    }
    return p;
}

} // namespace

size_t empty_host_cache() noexcept {
    cache& c = the_cache();
    std::vector<void*> blocks;
    size_t freed = 0;
    {
        std::lock_guard lk(c.mu);
        for (auto& l : c.lists) {
            blocks.insert(blocks.end(), l.begin(), l.end());
            l.clear();
        }
        freed = c.cached;
        c.cached = 0;
    }
    for (void* p : blocks) std::free(p);
    return freed;
}

host_cache_stats host_cache_info() noexcept {
    cache& c = the_cache();
    std::lock_guard lk(c.mu);
    return {c.cached, c.cap, c.hits, c.misses};
}

void set_host_cache_limit(size_t bytes) noexcept {
    cache& c = the_cache();
    {
        std::lock_guard lk(c.mu);
        c.cap = bytes;
        if (c.cached <= bytes) return;
    }
    empty_host_cache();
}

namespace detail {

void* host_allocate(size_t nbytes) noexcept {
    const size_t cs = class_size(nbytes);
    const size_t idx = class_index(cs);
    cache& c = the_cache();
    if (idx < c.lists.size()) {
        std::lock_guard lk(c.mu);
        auto& l = c.lists[idx];
        if (!l.empty()) {
            void* p = l.back();
            l.pop_back();
            c.cached -= cs;
            ++c.hits;
            return p;
        }
        ++c.misses;
    }
    void* p = system_allocate(cs);
    if (!p && empty_host_cache() > 0) p = system_allocate(cs);
    return p;
}

void host_deallocate(void* p, size_t nbytes) noexcept {
    if (!p) return;
    const size_t cs = class_size(nbytes);
    const size_t idx = class_index(cs);
    cache& c = the_cache();
    if (idx < c.lists.size()) {
        std::lock_guard lk(c.mu);
        if (c.cached + cs <= c.cap) {
            try {
                c.lists[idx].push_back(p);
                c.cached += cs;
                return;
            } catch (...) { // no memory for the list entry: give the block back instead
            }
        }
    }
    std::free(p);
}

} // namespace detail

} // namespace isthmus
