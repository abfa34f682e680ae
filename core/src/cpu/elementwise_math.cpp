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

// Defines a functor NAME_f applying EXPR (in terms of `a`) on float, double and complex.
#define ISTHMUS_MATH_FUNCTOR(NAME, EXPR)                                                           \
    struct NAME##_f {                                                                              \
        template <typename T>                                                                      \
        static constexpr bool supports = inexact_v<T>;                                             \
        template <typename T>                                                                      \
        static T apply(T a) {                                                                      \
            return EXPR;                                                                           \
        }                                                                                          \
    };

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
#undef ISTHMUS_MATH_FUNCTOR

struct log2_f {
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

struct expm1_f {
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

struct log1p_f {
    template <typename T>
    static constexpr bool supports = inexact_v<T>;
    template <typename T>
    static T apply(T a) {
        if constexpr (is_complex_v<T>)
            return std::log(T(1) + a);
        else
            return std::log1p(a);
    }
};

} // namespace

// Note [math loops]: float32 and float64 run SLEEF's vector loops where the CPU has AVX2 or
// AVX-512 (cpu/vector_math.hpp); complex numbers, and real ones on other CPUs, call libm per
// element. Either costs tens of cycles per element next to a memory pass, so they use
// expensive_grain and go multi-threaded at a few thousand elements.
namespace {
std::optional<vmath::fn> vector_fn(unary_op op) {
    switch (op) {
    case unary_op::exp:
        return vmath::fn::exp;
    case unary_op::log:
        return vmath::fn::log;
    case unary_op::log2:
        return vmath::fn::log2;
    case unary_op::log10:
        return vmath::fn::log10;
    case unary_op::expm1:
        return vmath::fn::expm1;
    case unary_op::log1p:
        return vmath::fn::log1p;
    case unary_op::sqrt:
        return vmath::fn::sqrt;
    case unary_op::rsqrt:
        return vmath::fn::rsqrt;
    case unary_op::sin:
        return vmath::fn::sin;
    case unary_op::cos:
        return vmath::fn::cos;
    case unary_op::tan:
        return vmath::fn::tan;
    case unary_op::asin:
        return vmath::fn::asin;
    case unary_op::acos:
        return vmath::fn::acos;
    case unary_op::atan:
        return vmath::fn::atan;
    case unary_op::sinh:
        return vmath::fn::sinh;
    case unary_op::cosh:
        return vmath::fn::cosh;
    case unary_op::tanh:
        return vmath::fn::tanh;
    default:
        return std::nullopt;
    }
}
} // namespace

kernel math_kernel(unary_op op, dtype k) {
    constexpr int64_t g = expensive_grain;
    if (k == dtype::float32 || k == dtype::float64)
        if (const auto f = vector_fn(op))
            if (loop_fn v = vmath::loop(*f, k == dtype::float64)) return {v, k, g};
    switch (op) {
    case unary_op::exp:
        return unary_kernel_for<exp_f>(k, g);
    case unary_op::log:
        return unary_kernel_for<log_f>(k, g);
    case unary_op::log2:
        return unary_kernel_for<log2_f>(k, g);
    case unary_op::log10:
        return unary_kernel_for<log10_f>(k, g);
    case unary_op::expm1:
        return unary_kernel_for<expm1_f>(k, g);
    case unary_op::log1p:
        return unary_kernel_for<log1p_f>(k, g);
    case unary_op::sqrt:
        return unary_kernel_for<sqrt_f>(k, g);
    case unary_op::rsqrt:
        return unary_kernel_for<rsqrt_f>(k, g);
    case unary_op::sin:
        return unary_kernel_for<sin_f>(k, g);
    case unary_op::cos:
        return unary_kernel_for<cos_f>(k, g);
    case unary_op::tan:
        return unary_kernel_for<tan_f>(k, g);
    case unary_op::asin:
        return unary_kernel_for<asin_f>(k, g);
    case unary_op::acos:
        return unary_kernel_for<acos_f>(k, g);
    case unary_op::atan:
        return unary_kernel_for<atan_f>(k, g);
    case unary_op::sinh:
        return unary_kernel_for<sinh_f>(k, g);
    case unary_op::cosh:
        return unary_kernel_for<cosh_f>(k, g);
    case unary_op::tanh:
        return unary_kernel_for<tanh_f>(k, g);
    default:
        return {};
    }
}

} // namespace isthmus::cpu
