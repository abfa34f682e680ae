// Internal: Philox4x32-10, the counter-based generator behind random numbers on CPU and GPU.
#pragma once

#include <cstdint>

// Note [one philox]
// ~~~~~~~~~~~~~~~~~
// The CPU kernels (cpu/random.cpp) and the CUDA kernels (cuda/random.cuh) draw element for element
// from the same stream, which makes the GPU's uniforms and integers bit-identical to the CPU's;
// both take the rounds and constants from this header (callable on the device under nvcc) so that
// they cannot drift apart.
#if defined(__CUDACC__)
#define ISTHMUS_PHILOX_HD __host__ __device__
#else
#define ISTHMUS_PHILOX_HD
#endif

namespace isthmus::philox {

inline constexpr uint32_t m0 = 0xD2511F53u;
inline constexpr uint32_t m1 = 0xCD9E8D57u;
inline constexpr uint32_t w0 = 0x9E3779B9u;
inline constexpr uint32_t w1 = 0xBB67AE85u;

/// One Philox4x32-10 block (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
/// SC'11; the Random123 reference): 128 random bits from a 128-bit counter and a 64-bit key.
ISTHMUS_PHILOX_HD inline void block(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int r = 0; r < 10; ++r) {
        const uint64_t p0 = static_cast<uint64_t>(m0) * c0;
        const uint64_t p1 = static_cast<uint64_t>(m1) * c2;
        const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
        const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
        c1 = static_cast<uint32_t>(p1);
        c3 = static_cast<uint32_t>(p0);
        c0 = n0;
        c2 = n2;
        k0 += w0;
        k1 += w1;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

} // namespace isthmus::philox
