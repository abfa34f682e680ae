// CPU kernels: the AVX2 vector loops of the transcendental functions (SLEEF's avx2 set, with FMA).
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
#include "cpu/simd/vector_math_loops.hpp"
