// CPU kernels: the non-transcendental unary ops (neg, abs, sign, rounding, logic, tests, conj).
#include "cpu/elementwise_loops.hpp"

#include <cmath>
#include <complex>

namespace isthmus::cpu {

namespace {

template <typename T>
inline constexpr bool numeric_v = !std::is_same_v<T, bool>;
template <typename T>
inline constexpr bool inexact_v = is_real_v<T> || is_complex_v<T>;

struct neg_f {
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

struct abs_f {
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

struct sign_f {
    template <typename T>
    static constexpr bool supports = numeric_v<T>;
    template <typename T>
    static T apply(T a) {
        if constexpr (is_complex_v<T>) {
            return a == T(0) ? T(0) : a / std::abs(a);
        } else if constexpr (is_real_v<T>) {
            return a > T(0) ? T(1) : (a < T(0) ? T(-1) : a); // keeps NaN and signed zero
        } else if constexpr (std::is_signed_v<T>) {
            return static_cast<T>((a > 0) - (a < 0));
        } else {
            return static_cast<T>(a > 0);
        }
    }
};

struct floor_f {
    template <typename T>
    static constexpr bool supports = is_real_v<T>;
    template <typename T>
    static T apply(T a) {
        return std::floor(a);
    }
};

struct ceil_f {
    template <typename T>
    static constexpr bool supports = is_real_v<T>;
    template <typename T>
    static T apply(T a) {
        return std::ceil(a);
    }
};

// Half to even under the default rounding mode, as NumPy's round/rint.
struct round_f {
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

struct logical_not_f {
    template <typename T>
    static constexpr bool supports = std::is_same_v<T, bool>;
    static bool apply(bool a) { return !a; }
};

struct bit_not_f {
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

struct isnan_f {
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

struct isinf_f {
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

struct isfinite_f {
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

struct conj_f {
    template <typename T>
    static constexpr bool supports = is_complex_v<T>;
    template <typename T>
    static T apply(T a) {
        return std::conj(a);
    }
};

struct square_f {
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

struct reciprocal_f {
    template <typename T>
    static constexpr bool supports = inexact_v<T>;
    template <typename T>
    static T apply(T a) {
        return T(1) / a;
    }
};

} // namespace

kernel basic_kernel(unary_op op, dtype k) {
    switch (op) {
    case unary_op::neg:
        return unary_kernel_for<neg_f>(k);
    case unary_op::abs:
        return unary_kernel_for<abs_f>(k);
    case unary_op::sign:
        return unary_kernel_for<sign_f>(k);
    case unary_op::floor:
        return unary_kernel_for<floor_f>(k);
    case unary_op::ceil:
        return unary_kernel_for<ceil_f>(k);
    case unary_op::round:
        return unary_kernel_for<round_f>(k);
    case unary_op::logical_not:
        return unary_kernel_for<logical_not_f>(k);
    case unary_op::bit_not:
        return unary_kernel_for<bit_not_f>(k);
    case unary_op::isnan:
        return unary_kernel_for<isnan_f>(k);
    case unary_op::isinf:
        return unary_kernel_for<isinf_f>(k);
    case unary_op::isfinite:
        return unary_kernel_for<isfinite_f>(k);
    case unary_op::conj:
        return unary_kernel_for<conj_f>(k);
    case unary_op::square:
        return unary_kernel_for<square_f>(k);
    case unary_op::reciprocal:
        return unary_kernel_for<reciprocal_f>(k);
    default:
        return {};
    }
}

} // namespace isthmus::cpu
