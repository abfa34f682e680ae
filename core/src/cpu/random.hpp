// Internal: the Philox4x32-10 counter-based generator and the CPU random fill kernels.
#pragma once

#include "../philox.hpp" // relative: tests include this header by path
#include "isthmus/dtype.hpp"

#include <cstdint>

namespace isthmus::cpu {

inline constexpr uint32_t philox_m0 = philox::m0;
inline constexpr uint32_t philox_m1 = philox::m1;
inline constexpr uint32_t philox_w0 = philox::w0;
inline constexpr uint32_t philox_w1 = philox::w1;

/// One Philox4x32-10 block (philox.hpp): the scalar reference; the CPU kernels run a
/// vectorised batch form of the same rounds.
inline void philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
    philox::block(ctr, key, out);
}

/// Fills `n` contiguous elements of the real floating dtype `dt` at `data`: uniform in [a, b)
/// or, when `normal`, normal with mean a and standard deviation b. Element i draws from
/// Philox blocks starting at `first_block` under key `seed` (see Note [counter-based random
/// numbers]); multi-threaded with results independent of the thread count.
void random_real(dtype dt, bool normal, void* data, int64_t n, uint64_t seed, uint64_t first_block,
                 double a, double b);

/// Fills `n` contiguous elements of the real dtype `dt` with integers lo + r, r uniform in
/// [0, range) (range >= 1), two stream words per element.
void random_int(dtype dt, void* data, int64_t n, uint64_t seed, uint64_t first_block, int64_t lo,
                uint64_t range);

} // namespace isthmus::cpu
