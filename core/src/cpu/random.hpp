// Internal: the Philox4x32-10 counter-based generator and the CPU random fill kernels.
#pragma once

#include "isthmus/dtype.hpp"

#include <cstdint>

namespace isthmus::cpu {

inline constexpr uint32_t philox_m0 = 0xD2511F53u;
inline constexpr uint32_t philox_m1 = 0xCD9E8D57u;
inline constexpr uint32_t philox_w0 = 0x9E3779B9u;
inline constexpr uint32_t philox_w1 = 0xBB67AE85u;

/// One Philox4x32-10 block (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
/// SC'11; the Random123 reference): 128 random bits from a 128-bit counter and a 64-bit key.
/// The scalar reference; the kernels run a vectorised batch form of the same rounds.
inline void philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int r = 0; r < 10; ++r) {
        const uint64_t p0 = static_cast<uint64_t>(philox_m0) * c0;
        const uint64_t p1 = static_cast<uint64_t>(philox_m1) * c2;
        const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
        const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
        c1 = static_cast<uint32_t>(p1);
        c3 = static_cast<uint32_t>(p0);
        c0 = n0;
        c2 = n2;
        k0 += philox_w0;
        k1 += philox_w1;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

/// 32-bit words of the stream one element of the real dtype `dt` takes: 1 for dtypes of at
/// most 32 bits drawn as floats, 2 for float64 and for integers (64-bit draws).
int random_words(dtype dt, bool integer_draw) noexcept;

/// Philox blocks (4 words each) that `n` elements taking `words` words each consume.
inline uint64_t random_blocks(int64_t n, int words) noexcept {
    return (static_cast<uint64_t>(n) * static_cast<uint64_t>(words) + 3) / 4;
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
