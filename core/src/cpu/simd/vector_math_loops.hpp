// Internal: the vector loop templates and the table, included once per instruction set
// (simd/*.cpp).
//
// The including file includes <immintrin.h> and <sleef.h>, and defines for its instruction set,
// before including this header:
//   ISTHMUS_VM_ISA               SLEEF's suffix of the set (avx2, avx512f)
//   ISTHMUS_VM_SF, ISTHMUS_VM_SD SLEEF's vector infix for float and double (f16, d8)
//   ISTHMUS_VM_VF, ISTHMUS_VM_VD the vector types
//   ISTHMUS_VM_TABLE             the name of the table function this file defines
//   ISTHMUS_VM_MV_F, ISTHMUS_VM_MV_D (and _F2, _D2 for two arguments): libmvec's name of a
//                                function for float and double on the set
//   ISTHMUS_VM_UNARY_SOURCES, ISTHMUS_VM_BINARY_SOURCES: the library of each function (Note
//                                [vector math sources])
// and, in namespace isthmus::cpu::vmath (anonymous), `lanes<float>` and `lanes<double>` (the
// vector type V, its width W, load, store, splat) and the functors sqrt_v and rsqrt_v. Vector
// types are never template arguments (GCC drops their attributes there). Only internal-linkage
// code may be instantiated here (Note [isa translation units] in vector_math.cpp).

#include "cpu/simd/pow_kernel.hpp"
#include "cpu/vector_math.hpp"

#include <cstring>

namespace isthmus::cpu::vmath {
namespace {

// Note [vector math]
// ~~~~~~~~~~~~~~~~~~
// Every element goes through the vector function, the tail too (padded into a full vector with
// copies of the block's first element), and strided operands are gathered into a small buffer
// first. A SLEEF lane depends on its own input only, so an element's result is the same whichever
// block, thread or position it falls in: results are bit-identical on any number of threads and for
// any layout.

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
        if constexpr (requires { F::splat_loop(b, o, a, n, i); })
            F::splat_loop(b, o, a, n, i); // a loop of its own for some exponents; the tail below
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

// Note [vector math sources]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// Each function on each type comes from one of two maintained vector math libraries, whichever ran
// faster on this instruction set (the measurements are in docs/ops.md, "Vectorised math"): SLEEF
// (the library PyTorch uses; its _u35 functions, 3.5 ulp, where it has them, else the _u10 ones,
// 1.0 ulp, or erfc's _u15), or glibc's libmvec (Intel's SVML algorithms contributed to glibc 2.22
// and 2.35, the ones NumPy's own SIMD loops use; glibc documents them to 4 ulp). The including file
// lists the choice per row:
//   ISTHMUS_VM_UNARY_SOURCES(X), ISTHMUS_VM_BINARY_SOURCES(X): X(fn, sleef_accuracy, f32, f64)
// with f32/f64 either `sleef` or `mvec`. A build without libmvec (glibc before 2.35, another C
// library) takes SLEEF for every row; a row is never left without a loop. pow stays SLEEF's
// 1-ulp function on every set although libmvec's is ~20% faster: libmvec's misses exact
// results users check (3.0 ** -1.0 != 1 / 3.0), SLEEF's does not. sqrt is the instruction
// (correctly rounded, as libm's); rsqrt divides by it, as the libm loop.
#if ISTHMUS_HAVE_LIBMVEC
#define ISTHMUS_VM_PICK_mvec(mv, sl) mv
#define ISTHMUS_VM_SRC_mvec(U)                                                                     \
    source {                                                                                       \
        "libmvec", 4.0                                                                             \
    }
#else
#define ISTHMUS_VM_PICK_mvec(mv, sl) sl
#define ISTHMUS_VM_SRC_mvec(U) ISTHMUS_VM_SRC_sleef(U)
#endif
#define ISTHMUS_VM_PICK_sleef(mv, sl) sl
#define ISTHMUS_VM_PICK(S, mv, sl) ISTHMUS_VM_PICK_##S(mv, sl)
#define ISTHMUS_VM_SRC_sleef(U) ISTHMUS_VM_SLEEF_SRC##U
#define ISTHMUS_VM_SLEEF_SRC_u10                                                                   \
    source {                                                                                       \
        "sleef_u10", 1.0                                                                           \
    }
#define ISTHMUS_VM_SLEEF_SRC_u15                                                                   \
    source {                                                                                       \
        "sleef_u15", 1.5                                                                           \
    }
#define ISTHMUS_VM_SLEEF_SRC_u35                                                                   \
    source {                                                                                       \
        "sleef_u35", 3.5                                                                           \
    }
#define ISTHMUS_VM_SRC(S, U) ISTHMUS_VM_SRC_##S(U)

} // namespace
} // namespace isthmus::cpu::vmath

#if ISTHMUS_HAVE_LIBMVEC
// libmvec's entry points, by the vector function ABI's names (_ZGV<isa>N<lanes><v per arg>_<fn>):
// they take and return vector registers as ordinary functions of the vector types do.
extern "C" {
#define ISTHMUS_VM_DECLARE_UNARY(FN, U, S32, S64)                                                  \
    ISTHMUS_VM_VF ISTHMUS_VM_MV_F(FN)(ISTHMUS_VM_VF) noexcept;                                     \
    ISTHMUS_VM_VD ISTHMUS_VM_MV_D(FN)(ISTHMUS_VM_VD) noexcept;
#define ISTHMUS_VM_DECLARE_BINARY(FN, U, S32, S64)                                                 \
    ISTHMUS_VM_VF ISTHMUS_VM_MV_F2(FN)(ISTHMUS_VM_VF, ISTHMUS_VM_VF) noexcept;                     \
    ISTHMUS_VM_VD ISTHMUS_VM_MV_D2(FN)(ISTHMUS_VM_VD, ISTHMUS_VM_VD) noexcept;
ISTHMUS_VM_UNARY_SOURCES(ISTHMUS_VM_DECLARE_UNARY)
ISTHMUS_VM_BINARY_SOURCES(ISTHMUS_VM_DECLARE_BINARY)
#undef ISTHMUS_VM_DECLARE_UNARY
#undef ISTHMUS_VM_DECLARE_BINARY
}
#endif

namespace isthmus::cpu::vmath {
namespace {

#define ISTHMUS_VM_UNARY(FN, U, S32, S64)                                                          \
    struct FN##_v {                                                                                \
        static ISTHMUS_VM_VF f(ISTHMUS_VM_VF a) {                                                  \
            return ISTHMUS_VM_PICK(S32, ISTHMUS_VM_MV_F(FN),                                       \
                                   ISTHMUS_VM_SLEEF(FN, ISTHMUS_VM_SF, U))(a);                     \
        }                                                                                          \
        static ISTHMUS_VM_VD f(ISTHMUS_VM_VD a) {                                                  \
            return ISTHMUS_VM_PICK(S64, ISTHMUS_VM_MV_D(FN),                                       \
                                   ISTHMUS_VM_SLEEF(FN, ISTHMUS_VM_SD, U))(a);                     \
        }                                                                                          \
        static source src32() { return ISTHMUS_VM_SRC(S32, U); }                                   \
        static source src64() { return ISTHMUS_VM_SRC(S64, U); }                                   \
    };
#define ISTHMUS_VM_BINARY(FN, U, S32, S64)                                                         \
    struct FN##_v {                                                                                \
        static ISTHMUS_VM_VF f(ISTHMUS_VM_VF a, ISTHMUS_VM_VF b) {                                 \
            return ISTHMUS_VM_PICK(S32, ISTHMUS_VM_MV_F2(FN),                                      \
                                   ISTHMUS_VM_SLEEF(FN, ISTHMUS_VM_SF, U))(a, b);                  \
        }                                                                                          \
        static ISTHMUS_VM_VD f(ISTHMUS_VM_VD a, ISTHMUS_VM_VD b) {                                 \
            return ISTHMUS_VM_PICK(S64, ISTHMUS_VM_MV_D2(FN),                                      \
                                   ISTHMUS_VM_SLEEF(FN, ISTHMUS_VM_SD, U))(a, b);                  \
        }                                                                                          \
        static source src32() { return ISTHMUS_VM_SRC(S32, U); }                                   \
        static source src64() { return ISTHMUS_VM_SRC(S64, U); }                                   \
    };
ISTHMUS_VM_UNARY_SOURCES(ISTHMUS_VM_UNARY)
ISTHMUS_VM_BINARY_SOURCES(ISTHMUS_VM_BINARY)
#undef ISTHMUS_VM_UNARY
#undef ISTHMUS_VM_BINARY
#undef ISTHMUS_VM_SLEEF
#undef ISTHMUS_VM_CAT
#undef ISTHMUS_VM_CAT_

// Note [float32 pow through double]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// SLEEF's and libmvec's float32 pow run at a third of NumPy's speed (SVML's powf). For a positive
// finite base and a finite exponent, pow(a, b) is exp(b log a) computed in double by
// pow_kernel::f32 (simd/pow_kernel.hpp: the float64 kernel's tables and steps without its
// double-double parts): its relative error (~2^-50, times |b log a| <= ~104 where the result
// neither overflows nor underflows) stays below 2^-40, so the one rounding to float gives the
// correctly rounded result except within 2^-17 ulp of a halfway point (exact results, like 3 ** -1
// or 2 ** 10, come out exact), and double -> float conversion rounds overflow to inf and underflow
// to the right denormal. Lanes with a base <= 0, inf or NaN, or an infinite or NaN exponent (pow's
// special cases: signs of odd integer powers, 0 ** -y, 1 ** NaN ...) take SLEEF's powf, blended in
// lane by lane, so each element's result still depends on its own inputs only (Note [vector math]).
// 1.5-1.7x SLEEF's powf.
struct pow_f32_v {
    static ISTHMUS_VM_VF f(ISTHMUS_VM_VF a, ISTHMUS_VM_VF b) {
        using L = lanes<float>;
        using K = pow_kernel<lanes<double>>;
        // See Note [pow by small exponents]: the lanes with a shortcut, tested on the floats
        auto fast = L::eq(b, static_cast<float>(K::shortcut_exponent[0]));
        for (int k = 1; k < K::shortcut_count<true>; ++k)
            fast = L::mask_or(fast, L::eq(b, static_cast<float>(K::shortcut_exponent[k])));
        const auto small = [&] {
            return L::join(K::shortcuts<true>(L::lo(a), L::lo(b)),
                           K::shortcuts<true>(L::hi(a), L::hi(b)));
        };
        if (L::all(fast)) return small();
        ISTHMUS_VM_VF r = L::join(K::f32(L::lo(a), L::lo(b)), K::f32(L::hi(a), L::hi(b)));
        if (L::any(fast)) r = L::blend(fast, r, small());
        const auto special = L::mask_andnot(fast, L::pow_special(a, b));
        return L::any(special) ? L::blend(special, r, pow_v::f(a, b)) : r;
    }
    // a scalar exponent with a shortcut: the whole vectors of the run, in double as f does
    static void splat_loop(const char* b, char* o, const char* a, int64_t n, int64_t& i) {
        using L = lanes<float>;
        using K = pow_kernel<lanes<double>>;
        float e;
        std::memcpy(&e, b, sizeof e);
        const int k = K::shortcut_of<true>(e);
        if (k == 0) return;
        constexpr int64_t W = L::W, sz = sizeof(float);
        if (k == 1 || k == 3 || k == 4) { // one operation: in float, the same correctly rounded
            for (; i + W <= n; i += W) {  // result as in double (53 >= 2 * 24 + 2)
                const ISTHMUS_VM_VF x = L::load(a + i * sz);
                L::store(o + i * sz, k == 1 ? L::mulf(x, x) : k == 3 ? L::recip(x) : L::half(x));
            }
            return;
        }
        for (; i + W <= n; i += W) {
            const ISTHMUS_VM_VF x = L::load(a + i * sz);
            L::store(o + i * sz,
                     L::join(K::shortcut<true>(k, L::lo(x)), K::shortcut<true>(k, L::hi(x))));
        }
    }
    static source src32() { return {"float64", 1.0}; }
};

// float64 pow in double-double (Note [float64 pow in double-double]), SLEEF's in the lanes it
// leaves (C99's special cases, denormals, results near overflow and underflow).
struct pow_f64_v {
    static ISTHMUS_VM_VD f(ISTHMUS_VM_VD a, ISTHMUS_VM_VD b) {
        using L = lanes<double>;
        using K = pow_kernel<L>;
        if (L::all(K::shortcut_lanes<false>(b))) // Note [pow by small exponents]
            return K::shortcuts<false>(a, b);
        typename L::M slow;
        ISTHMUS_VM_VD r = K::f64(a, b, slow);
        if (L::any(slow)) r = L::blend(slow, r, pow_v::f(a, b));
        // tested again rather than kept: a mask live across the kernel spilled its registers
        // (AVX2 pow float64 took 1.7x as long)
        const typename L::M fast = K::shortcut_lanes<false>(b);
        return L::any(fast) ? L::blend(fast, r, K::shortcuts<false>(a, b)) : r;
    }
    // a scalar exponent with a shortcut: the whole vectors of the run
    static void splat_loop(const char* b, char* o, const char* a, int64_t n, int64_t& i) {
        using L = lanes<double>;
        using K = pow_kernel<L>;
        double e;
        std::memcpy(&e, b, sizeof e);
        const int k = K::shortcut_of<false>(e);
        if (k == 0) return;
        constexpr int64_t W = L::W, sz = sizeof(double);
        for (; i + W <= n; i += W) L::store(o + i * sz, K::shortcut<false>(k, L::load(a + i * sz)));
    }
    static source src64() { return {"double-double", 1.0}; }
};

// sqrt_v and rsqrt_v with their source: the instruction, correctly rounded (half an ulp); rsqrt
// rounds twice, each a relative 2^-p, which is up to 2 ulp near the bottom of a binade.
template <class F, int HALF_ULPS>
struct instruction : F {
    static source src32() { return {"instruction", HALF_ULPS / 2.0}; }
    static source src64() { return {"instruction", HALF_ULPS / 2.0}; }
};

template <class F>
void set_unary(table& t, fn f) {
    t.f32[static_cast<int>(f)] = &unary_loop<float, F>;
    t.f64[static_cast<int>(f)] = &unary_loop<double, F>;
    t.src32[static_cast<int>(f)] = F::src32();
    t.src64[static_cast<int>(f)] = F::src64();
}
template <class F>
void set_binary(table& t, fn f) {
    t.f32[static_cast<int>(f)] = &binary_loop<float, F>;
    t.f64[static_cast<int>(f)] = &binary_loop<double, F>;
    t.src32[static_cast<int>(f)] = F::src32();
    t.src64[static_cast<int>(f)] = F::src64();
}

} // namespace

const table* ISTHMUS_VM_TABLE() noexcept {
    static const table t = [] {
        table r;
#define ISTHMUS_VMATH_SET_UNARY(f, ...) set_unary<f##_v>(r, fn::f);
#define ISTHMUS_VMATH_SET_BINARY(f, ...) set_binary<f##_v>(r, fn::f);
        ISTHMUS_VM_UNARY_SOURCES(ISTHMUS_VMATH_SET_UNARY)
        ISTHMUS_VM_BINARY_SOURCES(ISTHMUS_VMATH_SET_BINARY)
#undef ISTHMUS_VMATH_SET_UNARY
#undef ISTHMUS_VMATH_SET_BINARY
        r.f32[static_cast<int>(fn::pow)] = &binary_loop<float, pow_f32_v>;
        r.src32[static_cast<int>(fn::pow)] = pow_f32_v::src32();
        r.f64[static_cast<int>(fn::pow)] = &binary_loop<double, pow_f64_v>;
        r.src64[static_cast<int>(fn::pow)] = pow_f64_v::src64();
        set_unary<instruction<sqrt_v, 1>>(r, fn::sqrt);
        set_unary<instruction<rsqrt_v, 4>>(r, fn::rsqrt);
        return r;
    }();
    return &t;
}

} // namespace isthmus::cpu::vmath
