// CPU kernels: transcendental unary math (exp, logs, roots, trigonometric, hyperbolic).
#include "cpu/elementwise_loops.hpp"
#include "cpu/vector_math.hpp"

#include <cmath>
#include <complex>
#include <optional>

namespace isthmus::cpu {

namespace {

template <typename T>
inline constexpr bool inexact_v = is_real_v<T> || is_complex_v<T>;

// Complex e^z - 1 without cancellation near 0 (NumPy's nc_expm1).
template <typename C>
C complex_expm1(C z) {
    using R = typename C::value_type;
    const R x = z.real(), y = z.imag();
    const R h = std::sin(y / 2);
    return C(std::expm1(x) * std::cos(y) - 2 * h * h, std::exp(x) * std::sin(y));
}

// The element functors, by op (Note [element functors by op]).
template <unary_op OP>
struct fn;

// Defines the functor of op NAME applying EXPR (in terms of `a`) to the element types T for
// which SUPPORTS holds: float, double and complex for rule math (ISTHMUS_MATH_FUNCTOR), float
// and double for math_real, whose rule refuses complex inputs before a kernel is looked up
// (ISTHMUS_REAL_MATH_FUNCTOR).
#define ISTHMUS_MATH_FUNCTOR_FOR(NAME, SUPPORTS, EXPR)                                             \
    template <>                                                                                    \
    struct fn<unary_op::NAME> {                                                                    \
        static constexpr int64_t grain = expensive_grain;                                          \
        template <typename T>                                                                      \
        static constexpr bool supports = SUPPORTS<T>;                                              \
        template <typename T>                                                                      \
        static T apply(T a) {                                                                      \
            return EXPR;                                                                           \
        }                                                                                          \
    };
#define ISTHMUS_MATH_FUNCTOR(NAME, EXPR) ISTHMUS_MATH_FUNCTOR_FOR(NAME, inexact_v, EXPR)
#define ISTHMUS_REAL_MATH_FUNCTOR(NAME, EXPR) ISTHMUS_MATH_FUNCTOR_FOR(NAME, is_real_v, EXPR)

ISTHMUS_MATH_FUNCTOR(exp, std::exp(a))
ISTHMUS_MATH_FUNCTOR(log, std::log(a))
ISTHMUS_MATH_FUNCTOR(log10, std::log10(a))
ISTHMUS_MATH_FUNCTOR(sqrt, std::sqrt(a))
ISTHMUS_MATH_FUNCTOR(rsqrt, T(1) / std::sqrt(a))
ISTHMUS_MATH_FUNCTOR(sin, std::sin(a))
ISTHMUS_MATH_FUNCTOR(cos, std::cos(a))
ISTHMUS_MATH_FUNCTOR(tan, std::tan(a))
ISTHMUS_MATH_FUNCTOR(asin, std::asin(a))
ISTHMUS_MATH_FUNCTOR(acos, std::acos(a))
ISTHMUS_MATH_FUNCTOR(atan, std::atan(a))
ISTHMUS_MATH_FUNCTOR(sinh, std::sinh(a))
ISTHMUS_MATH_FUNCTOR(cosh, std::cosh(a))
ISTHMUS_MATH_FUNCTOR(tanh, std::tanh(a))
ISTHMUS_MATH_FUNCTOR(asinh, std::asinh(a))
ISTHMUS_MATH_FUNCTOR(acosh, std::acosh(a))
ISTHMUS_MATH_FUNCTOR(atanh, std::atanh(a))

ISTHMUS_REAL_MATH_FUNCTOR(cbrt, std::cbrt(a))
ISTHMUS_REAL_MATH_FUNCTOR(erf, std::erf(a))
ISTHMUS_REAL_MATH_FUNCTOR(erfc, std::erfc(a))
#undef ISTHMUS_REAL_MATH_FUNCTOR
#undef ISTHMUS_MATH_FUNCTOR
#undef ISTHMUS_MATH_FUNCTOR_FOR

// 2**x; complex as e**(x ln 2), NumPy's nc_exp2.
template <>
struct fn<unary_op::exp2> {
    static constexpr int64_t grain = expensive_grain;
    template <typename T>
    static constexpr bool supports = inexact_v<T>;
    template <typename T>
    static T apply(T a) {
        if constexpr (is_complex_v<T>)
            return std::exp(a * typename T::value_type(0.693147180559945309417232121458176568));
        else
            return std::exp2(a);
    }
};

template <>
struct fn<unary_op::log2> {
    static constexpr int64_t grain = expensive_grain;
    template <typename T>
    static constexpr bool supports = inexact_v<T>;
    template <typename T>
    static T apply(T a) {
        if constexpr (is_complex_v<T>)
            return std::log(a) / typename T::value_type(0.693147180559945309417232121458176568);
        else
            return std::log2(a);
    }
};

template <>
struct fn<unary_op::expm1> {
    static constexpr int64_t grain = expensive_grain;
    template <typename T>
    static constexpr bool supports = inexact_v<T>;
    template <typename T>
    static T apply(T a) {
        if constexpr (is_complex_v<T>)
            return complex_expm1(a);
        else
            return std::expm1(a);
    }
};

template <>
struct fn<unary_op::log1p> {
    static constexpr int64_t grain = expensive_grain;
    template <typename T>
    static constexpr bool supports = inexact_v<T>;
    template <typename T>
    static T apply(T a) {
        if constexpr (is_complex_v<T>) // 1 + x, the imaginary part as is (NumPy's nc_log1p)
            return std::log(T(typename T::value_type(1) + a.real(), a.imag()));
        else
            return std::log1p(a);
    }
};

} // namespace

// Note [math loops]
// ~~~~~~~~~~~~~~~~~
// float32 and float64 run SLEEF's vector loops where the CPU has AVX2 or AVX-512
// (cpu/vector_math.hpp); complex numbers, and real ones on other CPUs, call libm per element.
// Either costs tens of cycles per element next to a memory pass, so they use expensive_grain and go
// multi-threaded at a few thousand elements.
kernel math_kernel(unary_op op, dtype k) {
    if (k == dtype::float32 || k == dtype::float64)
        if (const auto f = vmath::vector_fn(op))
            if (loop_fn v = vmath::loop(*f, k == dtype::float64)) return {v, k, expensive_grain};
    return unary_kernel_by_op<fn, is_math_family>(op, k);
}

} // namespace isthmus::cpu
