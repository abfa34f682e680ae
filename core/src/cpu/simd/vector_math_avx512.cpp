// CPU kernels: the AVX-512 vector loops of the transcendental functions (SLEEF, libmvec).
// GCC 12's avx512fintrin.h builds _mm512_set1_*, min, max, shifts and conversions on an
// "undefined" vector it then reports as (maybe-)uninitialised (a false positive of the header,
// not of this file).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>
#include <sleef.h>

#include <cstring>

#include "cpu/vector_math.hpp"

namespace isthmus::cpu::vmath {
namespace {

template <class T>
struct lanes;

template <>
struct lanes<float> {
    using V = __m512;
    static constexpr int W = 16;
    static V load(const void* p) { return _mm512_loadu_ps(p); }
    static void store(void* p, V v) { _mm512_storeu_ps(p, v); }
    static V splat(const void* p) {
        float x;
        std::memcpy(&x, p, sizeof x);
        return _mm512_set1_ps(x);
    }
    // float32 pow through double (Note [float32 pow through double]): the halves widened, the
    // product, the halves narrowed, and the lanes pow's shortcut cannot take (a lane mask).
    using VD = __m512d;
    using M = __mmask16;
    static VD lo(V v) { return _mm512_cvtps_pd(_mm512_castps512_ps256(v)); }
    static VD hi(V v) {
        return _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    }
    static V join(VD l, VD h) {
        const __m512d low = _mm512_castps_pd(_mm512_castps256_ps512(_mm512_cvtpd_ps(l)));
        return _mm512_castpd_ps(_mm512_insertf64x4(low, _mm256_castps_pd(_mm512_cvtpd_ps(h)), 1));
    }
    static VD mul(VD a, VD b) { return _mm512_mul_pd(a, b); }
    static M pow_special(V a, V b) {
        const V inf = _mm512_set1_ps(__builtin_inff());
        const M ok = _mm512_cmp_ps_mask(a, _mm512_setzero_ps(), _CMP_GT_OQ) &
                     _mm512_cmp_ps_mask(a, inf, _CMP_LT_OQ) &
                     _mm512_cmp_ps_mask(_mm512_abs_ps(b), inf, _CMP_LT_OQ);
        return static_cast<M>(~ok);
    }
    static bool any(M m) { return m != 0; }
    static V blend(M m, V fast, V slow) { return _mm512_mask_blend_ps(m, fast, slow); }
    // the exponents of Note [pow by small exponents]
    static M eq(V a, float v) { return _mm512_cmp_ps_mask(a, _mm512_set1_ps(v), _CMP_EQ_OQ); }
    static M mask_or(M a, M b) { return static_cast<M>(a | b); }
    static M mask_andnot(M a, M b) { return static_cast<M>(~a & b); } // b and not a
    static bool all(M m) { return m == 0xFFFF; }
    static V mulf(V a, V b) { return _mm512_mul_ps(a, b); }
    static V recip(V a) { return _mm512_div_ps(_mm512_set1_ps(1.0f), a); }
    // pow(x, 0.5): sqrt with pow's -0 -> +0 and -inf -> +inf
    static V half(V a) {
        const V s = _mm512_add_ps(_mm512_sqrt_ps(a), _mm512_setzero_ps());
        return blend(eq(a, -__builtin_inff()), s, _mm512_set1_ps(__builtin_inff()));
    }
};

template <>
struct lanes<double> {
    using V = __m512d;
    static constexpr int W = 8;
    static V load(const void* p) { return _mm512_loadu_pd(p); }
    static void store(void* p, V v) { _mm512_storeu_pd(p, v); }
    static V splat(const void* p) {
        double x;
        std::memcpy(&x, p, sizeof x);
        return _mm512_set1_pd(x);
    }
    // the operations of the float64 pow kernel (simd/pow_kernel.hpp): AVX-512F only
    using I = __m512i;
    using M = __mmask8;
    static V set(double x) { return _mm512_set1_pd(x); }
    static I iset(uint64_t x) { return _mm512_set1_epi64(static_cast<long long>(x)); }
    static I bits(V v) { return _mm512_castpd_si512(v); }
    static V from_bits(I i) { return _mm512_castsi512_pd(i); }
    static V add(V a, V b) { return _mm512_add_pd(a, b); }
    static V sub(V a, V b) { return _mm512_sub_pd(a, b); }
    static V mul(V a, V b) { return _mm512_mul_pd(a, b); }
    static V fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
    static V neg(V a) { return from_bits(_mm512_xor_si512(bits(a), iset(1ull << 63))); }
    static V min(V a, V b) { return _mm512_min_pd(a, b); }
    static V max(V a, V b) { return _mm512_max_pd(a, b); }
    static V abs(V a) { return _mm512_abs_pd(a); }
    static I iadd(I a, I b) { return _mm512_add_epi64(a, b); }
    static I isub(I a, I b) { return _mm512_sub_epi64(a, b); }
    static I iand(I a, I b) { return _mm512_and_si512(a, b); }
    static I ior(I a, I b) { return _mm512_or_si512(a, b); }
    template <int N>
    static I srl(I a) {
        return _mm512_srli_epi64(a, N);
    }
    template <int N>
    static I sll(I a) {
        return _mm512_slli_epi64(a, N);
    }
    // t[idx] for a 16-entry table, from two registers (no gather)
    static V lookup16(const double* t, I idx) {
        return _mm512_permutex2var_pd(_mm512_load_pd(t), idx, _mm512_load_pd(t + 8));
    }
    static M ge(V a, V b) { return _mm512_cmp_pd_mask(a, b, _CMP_GE_OQ); }
    static M gt(V a, V b) { return _mm512_cmp_pd_mask(a, b, _CMP_GT_OQ); }
    static M lt(V a, V b) { return _mm512_cmp_pd_mask(a, b, _CMP_LT_OQ); }
    static M eq(V a, V b) { return _mm512_cmp_pd_mask(a, b, _CMP_EQ_OQ); }
    static M mask_and(M a, M b) { return static_cast<M>(a & b); }
    static M mask_or(M a, M b) { return static_cast<M>(a | b); }
    static M mask_not(M a) { return static_cast<M>(~a); }
    static bool any(M m) { return m != 0; }
    static bool all(M m) { return m == 0xFF; }
    static V blend(M m, V fast, V slow) { return _mm512_mask_blend_pd(m, fast, slow); }
    static V div(V a, V b) { return _mm512_div_pd(a, b); }
    static V sqrt(V a) { return _mm512_sqrt_pd(a); }
};

// sqrt is the instruction (correctly rounded, as libm's); rsqrt divides by it, as the libm loop.
struct sqrt_v {
    static __m512 f(__m512 a) { return _mm512_sqrt_ps(a); }
    static __m512d f(__m512d a) { return _mm512_sqrt_pd(a); }
};
struct rsqrt_v {
    static __m512 f(__m512 a) { return _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_sqrt_ps(a)); }
    static __m512d f(__m512d a) { return _mm512_div_pd(_mm512_set1_pd(1.0), _mm512_sqrt_pd(a)); }
};

} // namespace
} // namespace isthmus::cpu::vmath

#define ISTHMUS_VM_ISA avx512f
#define ISTHMUS_VM_SF f16
#define ISTHMUS_VM_SD d8
#define ISTHMUS_VM_VF __m512
#define ISTHMUS_VM_VD __m512d
#define ISTHMUS_VM_TABLE avx512_table
#define ISTHMUS_VM_MV_F(FN) _ZGVeN16v_##FN##f
#define ISTHMUS_VM_MV_D(FN) _ZGVeN8v_##FN
#define ISTHMUS_VM_MV_F2(FN) _ZGVeN16vv_##FN##f
#define ISTHMUS_VM_MV_D2(FN) _ZGVeN8vv_##FN
// The faster library per function and type on AVX-512 (Note [vector math sources]; measured on
// a Zen 4, 1M elements in the cache, docs/ops.md): X(fn, SLEEF's accuracy, float32, float64).
// clang-format off
#define ISTHMUS_VM_UNARY_SOURCES(X) \
    X(exp, _u10, sleef, mvec) X(exp2, _u10, sleef, mvec) X(log, _u35, sleef, sleef) \
    X(log2, _u35, sleef, sleef) X(log10, _u10, mvec, mvec) X(expm1, _u10, mvec, mvec) \
    X(log1p, _u10, mvec, mvec) X(cbrt, _u35, mvec, mvec) X(sin, _u35, sleef, sleef) \
    X(cos, _u35, sleef, sleef) X(tan, _u35, sleef, mvec) X(asin, _u35, sleef, sleef) \
    X(acos, _u35, sleef, sleef) X(atan, _u35, sleef, mvec) X(sinh, _u35, mvec, mvec) \
    X(cosh, _u35, mvec, mvec) X(tanh, _u35, mvec, sleef) X(asinh, _u10, mvec, mvec) \
    X(acosh, _u10, mvec, mvec) X(atanh, _u10, mvec, mvec) X(erf, _u10, mvec, mvec) \
    X(erfc, _u15, mvec, mvec)
#define ISTHMUS_VM_BINARY_SOURCES(X) X(atan2, _u35, sleef, sleef) X(pow, _u10, sleef, sleef)
// clang-format on
#include "cpu/simd/vector_math_loops.hpp"
