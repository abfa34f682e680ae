// Internal: the vector loop templates and the table, included once per instruction set
// (simd/*.cpp).
//
// The including file includes <immintrin.h> and <sleef.h>, and defines for its instruction set,
// before including this header:
//   ISTHMUS_VM_ISA               SLEEF's suffix of the set (avx2, avx512f)
//   ISTHMUS_VM_SF, ISTHMUS_VM_SD SLEEF's vector infix for float and double (f16, d8)
//   ISTHMUS_VM_VF, ISTHMUS_VM_VD the vector types
//   ISTHMUS_VM_TABLE             the name of the table function this file defines
// and, in namespace isthmus::cpu::vmath (anonymous), `lanes<float>` and `lanes<double>` (the
// vector type V, its width W, load, store, splat) and the functors sqrt_v and rsqrt_v. Vector
// types are never template arguments (GCC drops their attributes there). Only internal-linkage
// code may be instantiated here (Note [isa translation units] in vector_math.cpp).

#include "cpu/vector_math.hpp"

#include <cstring>

namespace isthmus::cpu::vmath {
namespace {

// Note [vector math]: every element goes through the vector function, the tail too (padded
// into a full vector with copies of the block's first element), and strided operands are
// gathered into a small buffer first. A SLEEF lane depends on its own input only, so an
// element's result is the same whichever block, thread or position it falls in: results are
// bit-identical on any number of threads and for any layout.

/// The loop of unary functor F (F::f on vectors) on T: p[0] out, p[1] a.
template <class T, class F>
void unary_loop(char** p, const int64_t* s, int64_t n) {
    using L = lanes<T>;
    constexpr int64_t sz = sizeof(T), W = L::W;
    char* o = p[0];
    const char* a = p[1];
    const int64_t so = s[0], sa = s[1];
    int64_t i = 0;
    if (so == sz && sa == sz)
        for (; i + W <= n; i += W) L::store(o + i * sz, F::f(L::load(a + i * sz)));
    alignas(64) T in[W], out[W];
    for (; i < n; i += W) {
        const int64_t m = n - i < W ? n - i : W;
        for (int64_t k = 0; k < m; ++k) std::memcpy(&in[k], a + (i + k) * sa, sz);
        for (int64_t k = m; k < W; ++k) in[k] = in[0];
        L::store(out, F::f(L::load(in)));
        for (int64_t k = 0; k < m; ++k) std::memcpy(o + (i + k) * so, &out[k], sz);
    }
}

/// The loop of binary functor F on T: p[0] out, p[1] a, p[2] b (either may be a broadcast
/// scalar, stride 0).
template <class T, class F>
void binary_loop(char** p, const int64_t* s, int64_t n) {
    using L = lanes<T>;
    using V = typename L::V;
    constexpr int64_t sz = sizeof(T), W = L::W;
    char* o = p[0];
    const char* a = p[1];
    const char* b = p[2];
    const int64_t so = s[0], sa = s[1], sb = s[2];
    int64_t i = 0;
    if (so == sz && sa == sz && sb == sz) {
        for (; i + W <= n; i += W)
            L::store(o + i * sz, F::f(L::load(a + i * sz), L::load(b + i * sz)));
    } else if (so == sz && sa == sz && sb == 0) {
        const V bv = L::splat(b);
        for (; i + W <= n; i += W) L::store(o + i * sz, F::f(L::load(a + i * sz), bv));
    } else if (so == sz && sa == 0 && sb == sz) {
        const V av = L::splat(a);
        for (; i + W <= n; i += W) L::store(o + i * sz, F::f(av, L::load(b + i * sz)));
    }
    alignas(64) T x[W], y[W], out[W];
    for (; i < n; i += W) {
        const int64_t m = n - i < W ? n - i : W;
        for (int64_t k = 0; k < m; ++k) {
            std::memcpy(&x[k], a + (i + k) * sa, sz);
            std::memcpy(&y[k], b + (i + k) * sb, sz);
        }
        for (int64_t k = m; k < W; ++k) {
            x[k] = x[0];
            y[k] = y[0];
        }
        L::store(out, F::f(L::load(x), L::load(y)));
        for (int64_t k = 0; k < m; ++k) std::memcpy(o + (i + k) * so, &out[k], sz);
    }
}

#define ISTHMUS_VM_CAT_(a, b, c, d, e) a##b##c##d##e
#define ISTHMUS_VM_CAT(a, b, c, d, e) ISTHMUS_VM_CAT_(a, b, c, d, e)
#define ISTHMUS_VM_SLEEF(FN, T, U) ISTHMUS_VM_CAT(Sleef_, FN, T, U, ISTHMUS_VM_ISA)

// Note [vector math accuracy]: SLEEF's _u35 functions (3.5-ulp bound) where SLEEF has them, the
// _u10 ones (1.0 ulp) elsewhere: exp, expm1, log10, log1p and pow. NumPy's own SIMD loops (Intel
// SVML's algorithms) promise 4 ulp for float32 and are about twice as fast as SLEEF's _u10;
// _u35 matches both their accuracy class and their speed. sqrt is the instruction (correctly
// rounded, as libm's). docs/ops.md lists the bound of each function.
#define ISTHMUS_VM_UNARY(FN, U)                                                                    \
    struct FN##_v {                                                                                \
        static ISTHMUS_VM_VF f(ISTHMUS_VM_VF a) {                                                  \
            return ISTHMUS_VM_SLEEF(FN, ISTHMUS_VM_SF, U)(a);                                      \
        }                                                                                          \
        static ISTHMUS_VM_VD f(ISTHMUS_VM_VD a) {                                                  \
            return ISTHMUS_VM_SLEEF(FN, ISTHMUS_VM_SD, U)(a);                                      \
        }                                                                                          \
    };
#define ISTHMUS_VM_BINARY(FN, U)                                                                   \
    struct FN##_v {                                                                                \
        static ISTHMUS_VM_VF f(ISTHMUS_VM_VF a, ISTHMUS_VM_VF b) {                                 \
            return ISTHMUS_VM_SLEEF(FN, ISTHMUS_VM_SF, U)(a, b);                                   \
        }                                                                                          \
        static ISTHMUS_VM_VD f(ISTHMUS_VM_VD a, ISTHMUS_VM_VD b) {                                 \
            return ISTHMUS_VM_SLEEF(FN, ISTHMUS_VM_SD, U)(a, b);                                   \
        }                                                                                          \
    };
ISTHMUS_VM_UNARY(exp, _u10)
ISTHMUS_VM_UNARY(log, _u35)
ISTHMUS_VM_UNARY(log2, _u35)
ISTHMUS_VM_UNARY(log10, _u10)
ISTHMUS_VM_UNARY(expm1, _u10)
ISTHMUS_VM_UNARY(log1p, _u10)
ISTHMUS_VM_UNARY(sin, _u35)
ISTHMUS_VM_UNARY(cos, _u35)
ISTHMUS_VM_UNARY(tan, _u35)
ISTHMUS_VM_UNARY(asin, _u35)
ISTHMUS_VM_UNARY(acos, _u35)
ISTHMUS_VM_UNARY(atan, _u35)
ISTHMUS_VM_UNARY(sinh, _u35)
ISTHMUS_VM_UNARY(cosh, _u35)
ISTHMUS_VM_UNARY(tanh, _u35)
ISTHMUS_VM_BINARY(atan2, _u35)
ISTHMUS_VM_BINARY(pow, _u10)
#undef ISTHMUS_VM_UNARY
#undef ISTHMUS_VM_BINARY
#undef ISTHMUS_VM_SLEEF
#undef ISTHMUS_VM_CAT
#undef ISTHMUS_VM_CAT_

template <class F>
void set_unary(table& t, fn f) {
    t.f32[static_cast<int>(f)] = &unary_loop<float, F>;
    t.f64[static_cast<int>(f)] = &unary_loop<double, F>;
}
template <class F>
void set_binary(table& t, fn f) {
    t.f32[static_cast<int>(f)] = &binary_loop<float, F>;
    t.f64[static_cast<int>(f)] = &binary_loop<double, F>;
}

} // namespace

const table* ISTHMUS_VM_TABLE() noexcept {
    static const table t = [] {
        table r;
#define ISTHMUS_VMATH_SET_UNARY(f) set_unary<f##_v>(r, fn::f);
#define ISTHMUS_VMATH_SET_BINARY(f) set_binary<f##_v>(r, fn::f);
        ISTHMUS_VMATH_UNARY(ISTHMUS_VMATH_SET_UNARY)
        ISTHMUS_VMATH_BINARY(ISTHMUS_VMATH_SET_BINARY)
#undef ISTHMUS_VMATH_SET_UNARY
#undef ISTHMUS_VMATH_SET_BINARY
        return r;
    }();
    return &t;
}

} // namespace isthmus::cpu::vmath
