// OpenMP parallel regions that keep working in a process forked after OpenMP ran (openmp_region).
#pragma once

#include "isthmus/export.hpp"

#include <memory>
#include <type_traits>

namespace isthmus {

namespace detail {

/// True on the thread that called fork(), in the child process: the OpenMP thread pool that
/// thread knew died with the parent's other threads. See Note [OpenMP after fork].
ISTHMUS_API bool openmp_pool_is_stale() noexcept;

/// Runs fn(ctx) on a thread of the child that owns a fresh OpenMP pool, and waits for it;
/// an exception fn throws is rethrown here.
ISTHMUS_API void run_on_fresh_openmp_pool(void (*fn)(void*), void* ctx);

} // namespace detail

/// Runs `region()`, code that opens OpenMP parallel regions, where its threads exist: right
/// here, except on the thread of a forked child whose pool is stale, where the region runs on
/// a helper thread with a pool of its own (the calling thread waits). Every parallel region of
/// the library goes through it; C++ hosts that fork may use it for their own regions.
/// See Note [OpenMP after fork].
template <class F>
void openmp_region(F&& region) {
    if (!detail::openmp_pool_is_stale()) [[likely]] {
        region();
        return;
    }
    using fn_t = std::remove_reference_t<F>;
    detail::run_on_fresh_openmp_pool(
        [](void* p) { (*static_cast<fn_t*>(p))(); },
        const_cast<void*>(static_cast<const void*>(std::addressof(region))));
}

} // namespace isthmus
