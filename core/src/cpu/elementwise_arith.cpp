// CPU kernels: add, sub, mul, div, pow, maximum, minimum, atan2.
#include "cpu/elementwise_loops.hpp"
#include "cpu/vector_math.hpp"

#include <cmath>
#include <complex>

namespace isthmus::cpu {

namespace {

// The element functors, by op (Note [element functors by op]).
template <binary_op OP>
struct fn;

template <typename T>
inline constexpr bool numeric_v = !std::is_same_v<T, bool>;

template <>
struct fn<binary_op::add> {
    template <typename T>
    static constexpr bool supports = numeric_v<T>;
    template <typename T>
    static T apply(T a, T b) {
        if constexpr (is_int_v<T>)
            return elem::wrap_add(a, b);
        else
            return a + b;
    }
};

template <>
struct fn<binary_op::sub> {
    template <typename T>
    static constexpr bool supports = numeric_v<T>;
    template <typename T>
    static T apply(T a, T b) {
        if constexpr (is_int_v<T>)
            return elem::wrap_sub(a, b);
        else
            return a - b;
    }
};

template <>
struct fn<binary_op::mul> {
    template <typename T>
    static constexpr bool supports = numeric_v<T>;
    template <typename T>
    static T apply(T a, T b) {
        if constexpr (is_int_v<T>)
            return elem::wrap_mul(a, b);
        else
            return a * b;
    }
};

template <>
struct fn<binary_op::div> {
    template <typename T>
    static constexpr bool supports = is_real_v<T> || is_complex_v<T>;
    template <typename T>
    static T apply(T a, T b) {
        return a / b;
    }
};

// Complex power; small integral real exponents multiply exactly like NumPy's npy_cpow.
template <typename C>
C complex_pow(C a, C b) {
    using R = typename C::value_type;
    if (b.imag() == R(0) && b.real() == std::trunc(b.real()) && std::abs(b.real()) < R(100)) {
        auto n = static_cast<int>(b.real());
        if (n == 0) return C(1);
        C base = a, r(1);
        for (unsigned e = static_cast<unsigned>(n < 0 ? -n : n); e; e >>= 1) {
            if (e & 1u) r *= base;
            base *= base;
        }
        return n < 0 ? C(1) / r : r;
    }
    return std::pow(a, b);
}

template <>
struct fn<binary_op::pow> {
    static constexpr int64_t grain = expensive_grain;
    template <typename T>
    static constexpr bool supports = numeric_v<T>;
    template <typename T>
    static T apply(T a, T b) {
        if constexpr (is_int_v<T>)
            return elem::int_pow(a, b);
        else if constexpr (is_complex_v<T>)
            return complex_pow(a, b);
        else
            return std::pow(a, b);
    }
};

template <>
struct fn<binary_op::maximum> {
    template <typename T>
    static constexpr bool supports = is_int_v<T> || is_real_v<T>;
    template <typename T>
    static T apply(T a, T b) {
        return elem::maximum(a, b);
    }
};

template <>
struct fn<binary_op::minimum> {
    template <typename T>
    static constexpr bool supports = is_int_v<T> || is_real_v<T>;
    template <typename T>
    static T apply(T a, T b) {
        return elem::minimum(a, b);
    }
};

template <>
struct fn<binary_op::atan2> {
    static constexpr int64_t grain = expensive_grain;
    template <typename T>
    static constexpr bool supports = is_real_v<T>;
    template <typename T>
    static T apply(T a, T b) {
        return std::atan2(a, b);
    }
};

// SLEEF's loop for float32 and float64 where the CPU has one (Note [math loops]).
loop_fn vector_loop(vmath::fn f, dtype k) {
    if (k != dtype::float32 && k != dtype::float64) return nullptr;
    return vmath::loop(f, k == dtype::float64);
}

} // namespace

kernel arith_kernel(binary_op op, dtype k) {
    if (const auto f = vmath::vector_fn(op))
        if (loop_fn v = vector_loop(*f, k)) return {v, k, expensive_grain};
    return binary_kernel_by_op<fn, is_arith_family>(op, k);
}

} // namespace isthmus::cpu
