// The element maps of the CUDA random kernels: Philox4x32-10 blocks to uniform, normal and
// integer values, element for element as the CPU's (host-callable for tests).
#pragma once

#include "cuda/device_types.cuh"
#include "philox.hpp"

#include <cmath>

namespace isthmus::cudak {

// Note [gpu random]
// ~~~~~~~~~~~~~~~~~
// The CPU fills element e from word e * words_per_element (+ j) of the stream of Philox blocks
// first_block, first_block + 1, ... (block = word / 4, lane = word % 4), and so does each thread
// here for the elements of one block. The uniform and integer maps use exact integer steps and
// single float operations written with round-to-nearest intrinsics (no fused multiply-add, which
// the CPU build does not use either), so they are bit-identical to the CPU's; normals go through
// log/sqrt/cos/sin, whose last bit may differ from the host's libm (equal within a few ulp).
ISTHMUS_HD inline void philox(uint64_t seed, uint64_t ctr, uint32_t (&w)[4]) {
    const uint32_t c[4] = {static_cast<uint32_t>(ctr), static_cast<uint32_t>(ctr >> 32), 0, 0};
    const uint32_t k[2] = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
    isthmus::philox::block(c, k, w); // Note [one philox]
}

ISTHMUS_HD inline uint64_t word64(const uint32_t* w) {
    return static_cast<uint64_t>(w[0]) | (static_cast<uint64_t>(w[1]) << 32);
}

// Unfused, round-to-nearest float and double steps (nvcc would otherwise contract a + b * c).
ISTHMUS_HD inline float fmul_rn(float a, float b) {
#ifdef __CUDA_ARCH__
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}
ISTHMUS_HD inline float fadd_rn(float a, float b) {
#ifdef __CUDA_ARCH__
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}
ISTHMUS_HD inline double dmul_rn(double a, double b) {
#ifdef __CUDA_ARCH__
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}
ISTHMUS_HD inline double dadd_rn(double a, double b) {
#ifdef __CUDA_ARCH__
    return __dadd_rn(a, b);
#else
    return a + b;
#endif
}
ISTHMUS_HD inline uint64_t mul64hi(uint64_t a, uint64_t b) {
#ifdef __CUDA_ARCH__
    return __umul64hi(a, b);
#else
    return static_cast<uint64_t>((static_cast<unsigned __int128>(a) * b) >> 64);
#endif
}

template <kdt K>
ISTHMUS_HD inline float as_float(storage_t<K> x) {
    if constexpr (K == kdt::f32)
        return x;
    else
        return to_float(x);
}
template <kdt K>
ISTHMUS_HD inline storage_t<K> from_float(float x) {
    if constexpr (K == kdt::f32)
        return x;
    else
        return half_from_float<storage_t<K>>(x);
}

/// The float parameters of a float32/float16/bfloat16 draw (the CPU's real32).
struct real32_params {
    float fa, fb, width, hi, lo_t;
};

template <kdt K>
ISTHMUS_HD inline real32_params make_real32(double a, double b) {
    real32_params p;
    p.fa = static_cast<float>(a);
    p.fb = static_cast<float>(b);
    p.width = static_cast<float>(b - a);
    p.hi = as_float<K>(from_float<K>(p.fb));
    p.lo_t = as_float<K>(from_float<K>(p.fa));
    return p;
}

/// Elements [4 blk, 4 blk + 4) of a float32/float16/bfloat16 draw (one word each).
template <kdt K>
ISTHMUS_HD inline void real32_block(storage_t<K>* out, bool normal, int64_t n, uint64_t seed,
                                    uint64_t first_block, int64_t blk, const real32_params& p) {
    constexpr int bits = K == kdt::f16 ? 11 : (K == kdt::bf16 ? 8 : 24);
    uint32_t w[4];
    philox(seed, first_block + static_cast<uint64_t>(blk), w);
    const int64_t e0 = blk * 4;
    if (!normal) {
        const float scale = 1.0f / static_cast<float>(1u << bits);
        for (int j = 0; j < 4 && e0 + j < n; ++j) {
            const float u = fmul_rn(static_cast<float>(w[j] >> (32 - bits)), scale);
            storage_t<K> y = from_float<K>(fadd_rn(p.fa, fmul_rn(p.width, u)));
            if (!(as_float<K>(y) < p.hi)) y = from_float<K>(p.lo_t); // Note [half-open uniforms]
            out[e0 + j] = y;
        }
        return;
    }
    const float scale = 1.0f / 16777216.0f, two_pi = 6.28318530717958647692f;
    for (int j = 0; j < 4 && e0 + j < n; j += 2) { // Box-Muller on word pairs
        const float u1 = fmul_rn(static_cast<float>((w[j] >> 8) + 1), scale);
        const float u2 = fmul_rn(static_cast<float>(w[j + 1] >> 8), scale);
        const float r = sqrtf(fmul_rn(-2.0f, logf(u1)));
        const float th = fmul_rn(two_pi, u2);
        out[e0 + j] = from_float<K>(fadd_rn(p.fa, fmul_rn(p.fb, fmul_rn(r, cosf(th)))));
        if (e0 + j + 1 < n)
            out[e0 + j + 1] = from_float<K>(fadd_rn(p.fa, fmul_rn(p.fb, fmul_rn(r, sinf(th)))));
    }
}

/// Elements [2 blk, 2 blk + 2) of a float64 draw (two words each).
ISTHMUS_HD inline void real64_block(double* out, bool normal, int64_t n, uint64_t seed,
                                    uint64_t first_block, int64_t blk, double a, double b) {
    const double scale = 1.0 / 9007199254740992.0; // 2^-53
    uint32_t w[4];
    philox(seed, first_block + static_cast<uint64_t>(blk), w);
    const int64_t e0 = blk * 2;
    if (!normal) {
        const double width = dadd_rn(b, -a);
        for (int j = 0; j < 2 && e0 + j < n; ++j) {
            const double u = dmul_rn(static_cast<double>(word64(w + 2 * j) >> 11), scale);
            const double y = dadd_rn(a, dmul_rn(width, u));
            out[e0 + j] = y < b ? y : a; // Note [half-open uniforms]
        }
        return;
    }
    const double two_pi = 6.283185307179586476925;
    const double u1 = dmul_rn(static_cast<double>((word64(w) >> 11) + 1), scale);
    const double u2 = dmul_rn(static_cast<double>(word64(w + 2) >> 11), scale);
    const double r = ::sqrt(dmul_rn(-2.0, ::log(u1)));
    const double th = dmul_rn(two_pi, u2);
    out[e0] = dadd_rn(a, dmul_rn(b, dmul_rn(r, ::cos(th))));
    if (e0 + 1 < n) out[e0 + 1] = dadd_rn(a, dmul_rn(b, dmul_rn(r, ::sin(th))));
}

/// Elements [2 blk, 2 blk + 2) of an integer draw lo + [0, range) stored as kdt K.
template <kdt K>
ISTHMUS_HD inline void int_block(storage_t<K>* out, int64_t n, uint64_t seed, uint64_t first_block,
                                 int64_t blk, int64_t lo, uint64_t range) {
    uint32_t w[4];
    philox(seed, first_block + static_cast<uint64_t>(blk), w);
    for (int j = 0; j < 2 && blk * 2 + j < n; ++j) {
        const uint64_t r = mul64hi(word64(w + 2 * j), range);
        out[blk * 2 + j] =
            convert<K, kdt::i64>(static_cast<int64_t>(static_cast<uint64_t>(lo) + r));
    }
}

} // namespace isthmus::cudak
