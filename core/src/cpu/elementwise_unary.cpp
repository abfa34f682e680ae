// CPU kernels: the non-transcendental unary ops (neg, abs, sign, rounding, logic, tests, conj).
#include "cpu/elementwise_loops.hpp"

#include <cmath>
#include <complex>

namespace isthmus::cpu {

namespace {

// The element functors, by op (Note [element functors by op]).
template <unary_op OP>
struct fn;

template <typename T>
inline constexpr bool numeric_v = !std::is_same_v<T, bool>;
template <typename T>
inline constexpr bool inexact_v = is_real_v<T> || is_complex_v<T>;

template <>
struct fn<unary_op::neg> {
    template <typename T>
    static constexpr bool supports = numeric_v<T>;
    template <typename T>
    static T apply(T a) {
        if constexpr (is_int_v<T>)
            return wrap_neg(a);
        else
            return -a;
    }
};

template <>
struct fn<unary_op::abs> {
    template <typename T>
    static constexpr bool supports = (is_int_v<T> && std::is_signed_v<T>) || inexact_v<T>;
    template <typename T>
    static auto apply(T a) {
        if constexpr (is_int_v<T>)
            return a < 0 ? wrap_neg(a) : a;
        else if constexpr (is_complex_v<T>)
            return std::abs(a);
        else
            return std::fabs(a);
    }
};

template <>
struct fn<unary_op::sign> {
    template <typename T>
    static constexpr bool supports = numeric_v<T>;
    template <typename T>
    static T apply(T a) {
        if constexpr (is_complex_v<T>) {
            const auto s = elem::complex_sign(a.real(), a.imag());
            return T(s.re, s.im);
        } else if constexpr (is_real_v<T>) {
            return a > T(0) ? T(1) : (a < T(0) ? T(-1) : a); // keeps NaN and signed zero
        } else if constexpr (std::is_signed_v<T>) {
            return static_cast<T>((a > 0) - (a < 0));
        } else {
            return static_cast<T>(a > 0);
        }
    }
};

template <>
struct fn<unary_op::floor> {
    template <typename T>
    static constexpr bool supports = is_real_v<T>;
    template <typename T>
    static T apply(T a) {
        return std::floor(a);
    }
};

template <>
struct fn<unary_op::ceil> {
    template <typename T>
    static constexpr bool supports = is_real_v<T>;
    template <typename T>
    static T apply(T a) {
        return std::ceil(a);
    }
};

// Half to even under the default rounding mode, as NumPy's round/rint.
template <>
struct fn<unary_op::round> {
    template <typename T>
    static constexpr bool supports = inexact_v<T>;
    template <typename T>
    static T apply(T a) {
        if constexpr (is_complex_v<T>)
            return T(std::nearbyint(a.real()), std::nearbyint(a.imag()));
        else
            return std::nearbyint(a);
    }
};

template <>
struct fn<unary_op::logical_not> {
    template <typename T>
    static constexpr bool supports = std::is_same_v<T, bool>;
    static bool apply(bool a) { return !a; }
};

template <>
struct fn<unary_op::bit_not> {
    template <typename T>
    static constexpr bool supports = std::is_integral_v<T>;
    template <typename T>
    static T apply(T a) {
        if constexpr (std::is_same_v<T, bool>)
            return !a;
        else
            return static_cast<T>(~a);
    }
};

template <>
struct fn<unary_op::isnan> {
    template <typename T>
    static constexpr bool supports = inexact_v<T>;
    template <typename T>
    static bool apply(T a) {
        if constexpr (is_complex_v<T>)
            return std::isnan(a.real()) || std::isnan(a.imag());
        else
            return std::isnan(a);
    }
};

template <>
struct fn<unary_op::isinf> {
    template <typename T>
    static constexpr bool supports = inexact_v<T>;
    template <typename T>
    static bool apply(T a) {
        if constexpr (is_complex_v<T>)
            return std::isinf(a.real()) || std::isinf(a.imag());
        else
            return std::isinf(a);
    }
};

template <>
struct fn<unary_op::signbit> {
    template <typename T>
    static constexpr bool supports = (is_int_v<T> && std::is_signed_v<T>) || is_real_v<T>;
    template <typename T>
    static bool apply(T a) {
        if constexpr (is_int_v<T>)
            return a < 0;
        else if constexpr (std::is_floating_point_v<T>)
            return std::signbit(a); // the bit itself: -0.0 and -NaN too
        else
            return std::signbit(static_cast<float>(a)); // float16 / bfloat16 widen exactly
    }
};

template <>
struct fn<unary_op::isfinite> {
    template <typename T>
    static constexpr bool supports = inexact_v<T>;
    template <typename T>
    static bool apply(T a) {
        if constexpr (is_complex_v<T>)
            return std::isfinite(a.real()) && std::isfinite(a.imag());
        else
            return std::isfinite(a);
    }
};

template <>
struct fn<unary_op::conj> {
    template <typename T>
    static constexpr bool supports = is_complex_v<T>;
    template <typename T>
    static T apply(T a) {
        return std::conj(a);
    }
};

template <>
struct fn<unary_op::square> {
    template <typename T>
    static constexpr bool supports = numeric_v<T>;
    template <typename T>
    static T apply(T a) {
        if constexpr (is_int_v<T>)
            return static_cast<T>(wrap_t<T>(a) * wrap_t<T>(a));
        else
            return a * a;
    }
};

template <>
struct fn<unary_op::reciprocal> {
    template <typename T>
    static constexpr bool supports = inexact_v<T>;
    template <typename T>
    static T apply(T a) {
        return T(1) / a;
    }
};

} // namespace

kernel basic_kernel(unary_op op, dtype k) {
    return unary_kernel_by_op<fn, is_basic_family>(op, k);
}

} // namespace isthmus::cpu
