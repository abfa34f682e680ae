// CPU kernels: float32 <-> float16 conversion with F16C's vcvtps2ph / vcvtph2ps (8 at a time).
#include "cpu/simd/convert_f16c.hpp"

#include <immintrin.h>

#include <cstring>

// Note [F16C conversions]
// ~~~~~~~~~~~~~~~~~~~~~~~
// float16 data computes in float32 (the elementwise executor converts blocks both ways), and the
// portable conversion (float16_t in isthmus/half.hpp) takes tens of instructions per element: a
// float16 add ran at a tenth of torch's speed. x86 CPUs since 2012 (and every AVX2 one) convert 8
// values per instruction, rounding to nearest even as the portable code does, subnormals, overflow
// to inf and signed zeros included. Two things differ, and the loops fix them in the (rare) blocks
// that hold a NaN: vcvtps2ph keeps the top of a NaN's payload where the portable code writes `sign
// | 0x7e00`, and vcvtph2ps quiets a signalling NaN where the portable code keeps its bits; so both
// directions give the portable code's bits for every input (tests/core/test_convert_f16c.cpp checks
// all 65536 halves and the rounding boundaries). Like the vector math files
// (Note [isa translation units]), this file is compiled for its instruction set alone and calls no
// inline function it shares with the rest of the library; it is reached only through f16c_usable().

namespace isthmus::cpu {

namespace {

constexpr int W = 8;

// 8 floats from a row with byte stride s (contiguous or not), and back
__m256 load8(const char* p, int64_t s, int m) {
    if (s == 4 && m == W) return _mm256_loadu_ps(reinterpret_cast<const float*>(p));
    alignas(32) float v[W] = {};
    for (int k = 0; k < m; ++k) std::memcpy(&v[k], p + k * s, 4);
    return _mm256_load_ps(v);
}
__m128i load8h(const char* p, int64_t s, int m) {
    if (s == 2 && m == W) return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    alignas(16) uint16_t v[W] = {};
    for (int k = 0; k < m; ++k) std::memcpy(&v[k], p + k * s, 2);
    return _mm_load_si128(reinterpret_cast<const __m128i*>(v));
}

void to_half8(const char* src, int64_t ss, char* dst, int64_t ds, int m) {
    const __m256 x = load8(src, ss, m);
    __m128i h = _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    alignas(16) uint16_t out[W];
    _mm_store_si128(reinterpret_cast<__m128i*>(out), h);
    if (_mm256_movemask_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q))) { // a NaN: portable bits
        alignas(32) uint32_t bits[W];
        _mm256_store_ps(reinterpret_cast<float*>(bits), x);
        for (int k = 0; k < W; ++k)
            if ((bits[k] & 0x7fffffffu) > 0x7f800000u)
                out[k] = static_cast<uint16_t>(((bits[k] >> 16) & 0x8000u) | 0x7e00u);
    }
    if (ds == 2 && m == W) {
        std::memcpy(dst, out, sizeof out);
        return;
    }
    for (int k = 0; k < m; ++k) std::memcpy(dst + k * ds, &out[k], 2);
}

void to_float8(const char* src, int64_t ss, char* dst, int64_t ds, int m) {
    const __m128i h = load8h(src, ss, m);
    const __m256 x = _mm256_cvtph_ps(h);
    alignas(32) uint32_t out[W];
    _mm256_store_ps(reinterpret_cast<float*>(out), x);
    if (_mm256_movemask_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q))) { // a NaN: the half's payload
        alignas(16) uint16_t in[W];
        _mm_store_si128(reinterpret_cast<__m128i*>(in), h);
        for (int k = 0; k < W; ++k)
            if ((in[k] & 0x7c00u) == 0x7c00u && (in[k] & 0x3ffu))
                out[k] = (static_cast<uint32_t>(in[k] & 0x8000u) << 16) | 0x7f800000u |
                         (static_cast<uint32_t>(in[k] & 0x3ffu) << 13);
    }
    if (ds == 4 && m == W) {
        std::memcpy(dst, out, sizeof out);
        return;
    }
    for (int k = 0; k < m; ++k) std::memcpy(dst + k * ds, &out[k], 4);
}

} // namespace

void f16c_float_to_half(const char* src, int64_t ss, char* dst, int64_t ds, int64_t n) {
    for (int64_t i = 0; i < n; i += W)
        to_half8(src + i * ss, ss, dst + i * ds, ds, static_cast<int>(n - i < W ? n - i : W));
}

void f16c_half_to_float(const char* src, int64_t ss, char* dst, int64_t ds, int64_t n) {
    for (int64_t i = 0; i < n; i += W)
        to_float8(src + i * ss, ss, dst + i * ds, ds, static_cast<int>(n - i < W ? n - i : W));
}

} // namespace isthmus::cpu
