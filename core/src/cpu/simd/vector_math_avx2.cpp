// CPU kernels: the AVX2 vector loops of the transcendental functions (SLEEF, libmvec; with FMA).
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
    using V = __m256;
    static constexpr int W = 8;
    static V load(const void* p) { return _mm256_loadu_ps(static_cast<const float*>(p)); }
    static void store(void* p, V v) { _mm256_storeu_ps(static_cast<float*>(p), v); }
    static V splat(const void* p) {
        float x;
        std::memcpy(&x, p, sizeof x);
        return _mm256_set1_ps(x);
    }
    // float32 pow through double (Note [float32 pow through double]): the halves widened, the
    // product, the halves narrowed, and the lanes pow's shortcut cannot take (a mask vector).
    using VD = __m256d;
    using M = __m256;
    static VD lo(V v) { return _mm256_cvtps_pd(_mm256_castps256_ps128(v)); }
    static VD hi(V v) { return _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)); }
    static V join(VD l, VD h) { return _mm256_set_m128(_mm256_cvtpd_ps(h), _mm256_cvtpd_ps(l)); }
    static VD mul(VD a, VD b) { return _mm256_mul_pd(a, b); }
    static M pow_special(V a, V b) {
        const V inf = _mm256_set1_ps(__builtin_inff());
        const V abs_b = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), b);
        const V ok = _mm256_and_ps(_mm256_and_ps(_mm256_cmp_ps(a, _mm256_setzero_ps(), _CMP_GT_OQ),
                                                 _mm256_cmp_ps(a, inf, _CMP_LT_OQ)),
                                   _mm256_cmp_ps(abs_b, inf, _CMP_LT_OQ));
        return _mm256_xor_ps(ok, _mm256_castsi256_ps(_mm256_set1_epi32(-1)));
    }
    static bool any(M m) { return _mm256_movemask_ps(m) != 0; }
    static V blend(M m, V fast, V slow) { return _mm256_blendv_ps(fast, slow, m); }
    // the exponents of Note [pow by small exponents]
    static M eq(V a, float v) { return _mm256_cmp_ps(a, _mm256_set1_ps(v), _CMP_EQ_OQ); }
    static M mask_or(M a, M b) { return _mm256_or_ps(a, b); }
    static M mask_andnot(M a, M b) { return _mm256_andnot_ps(a, b); } // b and not a
    static bool all(M m) { return _mm256_movemask_ps(m) == 0xFF; }
    static V mulf(V a, V b) { return _mm256_mul_ps(a, b); }
    static V recip(V a) { return _mm256_div_ps(_mm256_set1_ps(1.0f), a); }
    // pow(x, 0.5): sqrt with pow's -0 -> +0 and -inf -> +inf
    static V half(V a) {
        const V s = _mm256_add_ps(_mm256_sqrt_ps(a), _mm256_setzero_ps());
        return blend(eq(a, -__builtin_inff()), s, _mm256_set1_ps(__builtin_inff()));
    }
};

template <>
struct lanes<double> {
    using V = __m256d;
    static constexpr int W = 4;
    static V load(const void* p) { return _mm256_loadu_pd(static_cast<const double*>(p)); }
    static void store(void* p, V v) { _mm256_storeu_pd(static_cast<double*>(p), v); }
    static V splat(const void* p) {
        double x;
        std::memcpy(&x, p, sizeof x);
        return _mm256_set1_pd(x);
    }
    // the operations of the float64 pow kernel (simd/pow_kernel.hpp): masks are vectors
    using I = __m256i;
    using M = __m256d;
    static V set(double x) { return _mm256_set1_pd(x); }
    static I iset(uint64_t x) { return _mm256_set1_epi64x(static_cast<long long>(x)); }
    static I bits(V v) { return _mm256_castpd_si256(v); }
    static V from_bits(I i) { return _mm256_castsi256_pd(i); }
    static V add(V a, V b) { return _mm256_add_pd(a, b); }
    static V sub(V a, V b) { return _mm256_sub_pd(a, b); }
    static V mul(V a, V b) { return _mm256_mul_pd(a, b); }
    static V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
    static V neg(V a) { return _mm256_xor_pd(a, _mm256_set1_pd(-0.0)); }
    static V min(V a, V b) { return _mm256_min_pd(a, b); }
    static V max(V a, V b) { return _mm256_max_pd(a, b); }
    static V abs(V a) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), a); }
    static I iadd(I a, I b) { return _mm256_add_epi64(a, b); }
    static I isub(I a, I b) { return _mm256_sub_epi64(a, b); }
    static I iand(I a, I b) { return _mm256_and_si256(a, b); }
    static I ior(I a, I b) { return _mm256_or_si256(a, b); }
    template <int N>
    static I srl(I a) {
        return _mm256_srli_epi64(a, N);
    }
    template <int N>
    static I sll(I a) {
        return _mm256_slli_epi64(a, N);
    }
    // t[idx] for a 16-entry table
    static V lookup16(const double* t, I idx) { return _mm256_i64gather_pd(t, idx, 8); }
    static M ge(V a, V b) { return _mm256_cmp_pd(a, b, _CMP_GE_OQ); }
    static M gt(V a, V b) { return _mm256_cmp_pd(a, b, _CMP_GT_OQ); }
    static M lt(V a, V b) { return _mm256_cmp_pd(a, b, _CMP_LT_OQ); }
    static M eq(V a, V b) { return _mm256_cmp_pd(a, b, _CMP_EQ_OQ); }
    static M mask_and(M a, M b) { return _mm256_and_pd(a, b); }
    static M mask_or(M a, M b) { return _mm256_or_pd(a, b); }
    static M mask_not(M a) { return _mm256_xor_pd(a, from_bits(_mm256_set1_epi64x(-1))); }
    static bool any(M m) { return _mm256_movemask_pd(m) != 0; }
    static bool all(M m) { return _mm256_movemask_pd(m) == 0xF; }
    static V blend(M m, V fast, V slow) { return _mm256_blendv_pd(fast, slow, m); }
    static V div(V a, V b) { return _mm256_div_pd(a, b); }
    static V sqrt(V a) { return _mm256_sqrt_pd(a); }
};

// sqrt is the instruction (correctly rounded, as libm's); rsqrt divides by it, as the libm loop.
struct sqrt_v {
    static __m256 f(__m256 a) { return _mm256_sqrt_ps(a); }
    static __m256d f(__m256d a) { return _mm256_sqrt_pd(a); }
};
struct rsqrt_v {
    static __m256 f(__m256 a) { return _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_sqrt_ps(a)); }
    static __m256d f(__m256d a) { return _mm256_div_pd(_mm256_set1_pd(1.0), _mm256_sqrt_pd(a)); }
};

} // namespace
} // namespace isthmus::cpu::vmath

#define ISTHMUS_VM_ISA avx2
#define ISTHMUS_VM_SF f8
#define ISTHMUS_VM_SD d4
#define ISTHMUS_VM_VF __m256
#define ISTHMUS_VM_VD __m256d
#define ISTHMUS_VM_TABLE avx2_table
#define ISTHMUS_VM_MV_F(FN) _ZGVdN8v_##FN##f
#define ISTHMUS_VM_MV_D(FN) _ZGVdN4v_##FN
#define ISTHMUS_VM_MV_F2(FN) _ZGVdN8vv_##FN##f
#define ISTHMUS_VM_MV_D2(FN) _ZGVdN4vv_##FN
// The faster library per function and type on AVX2 (Note [vector math sources]; measured on a
// Zen 4 running the AVX2 code, 1M elements in the cache, docs/ops.md): X(fn, SLEEF's accuracy,
// float32, float64).
// clang-format off
#define ISTHMUS_VM_UNARY_SOURCES(X) \
    X(exp, _u10, sleef, mvec) X(exp2, _u10, sleef, mvec) X(log, _u35, mvec, sleef) \
    X(log2, _u35, mvec, mvec) X(log10, _u10, mvec, mvec) X(expm1, _u10, mvec, mvec) \
    X(log1p, _u10, mvec, mvec) X(cbrt, _u35, sleef, mvec) X(sin, _u35, mvec, mvec) \
    X(cos, _u35, mvec, mvec) X(tan, _u35, sleef, mvec) X(asin, _u35, sleef, sleef) \
    X(acos, _u35, sleef, sleef) X(atan, _u35, mvec, mvec) X(sinh, _u35, mvec, mvec) \
    X(cosh, _u35, mvec, mvec) X(tanh, _u35, mvec, mvec) X(asinh, _u10, mvec, mvec) \
    X(acosh, _u10, mvec, mvec) X(atanh, _u10, mvec, mvec) X(erf, _u10, mvec, mvec) \
    X(erfc, _u15, mvec, mvec)
#define ISTHMUS_VM_BINARY_SOURCES(X) X(atan2, _u35, sleef, mvec) X(pow, _u10, sleef, sleef)
// clang-format on
#include "cpu/simd/vector_math_loops.hpp"
