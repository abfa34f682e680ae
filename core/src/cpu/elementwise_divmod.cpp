// CPU kernels: floor division and Python-style modulo (integers never trap, floats like NumPy).
#include "cpu/elementwise_loops.hpp"

#include <cmath>

namespace isthmus::cpu {

namespace {

// Note [integer division]: x86 traps on division by zero and on INT_MIN / -1, and NumPy gives
// 0 (with a warning) and INT_MIN respectively. Both divisors are tested before dividing, so no
// input can raise SIGFPE.
template <typename T>
T int_floor_div(T a, T b) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
        if (b == -1) return wrap_neg(a);
        T q = static_cast<T>(a / b);
        if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
        return q;
    } else {
        return static_cast<T>(a / b);
    }
}

template <typename T>
T int_mod(T a, T b) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
        if (b == -1) return 0;
        T r = static_cast<T>(a % b);
        if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
        return r;
    } else {
        return static_cast<T>(a % b);
    }
}

// NumPy's npy_divmod for floats: fmod, corrected to Python's sign convention, and the quotient
// snapped to the nearest integer so that a == b * (a // b) + a % b holds as closely as possible.
template <typename T>
T float_floor_div(T a, T b) {
    if (b == T(0)) return a / b;
    T mod = std::fmod(a, b);
    T div = (a - mod) / b;
    if (mod != T(0)) {
        if ((b < T(0)) != (mod < T(0))) div -= T(1);
    }
    if (div != T(0)) {
        T fl = std::floor(div);
        if (div - fl > T(0.5)) fl += T(1);
        return fl;
    }
    return std::copysign(T(0), a / b);
}

template <typename T>
T float_mod(T a, T b) {
    if (b == T(0)) return std::fmod(a, b);
    T mod = std::fmod(a, b);
    if (mod != T(0)) {
        if ((b < T(0)) != (mod < T(0))) mod += b;
    } else {
        mod = std::copysign(T(0), b);
    }
    return mod;
}

struct floor_div_f {
    template <typename T>
    static constexpr bool supports = is_int_v<T> || is_real_v<T>;
    template <typename T>
    static T apply(T a, T b) {
        if constexpr (is_int_v<T>)
            return int_floor_div(a, b);
        else
            return float_floor_div(a, b);
    }
};

struct mod_f {
    template <typename T>
    static constexpr bool supports = is_int_v<T> || is_real_v<T>;
    template <typename T>
    static T apply(T a, T b) {
        if constexpr (is_int_v<T>)
            return int_mod(a, b);
        else
            return float_mod(a, b);
    }
};

} // namespace

kernel divmod_kernel(binary_op op, dtype k) {
    switch (op) {
    case binary_op::floor_div:
        return binary_kernel_for<floor_div_f>(k, expensive_grain);
    case binary_op::mod:
        return binary_kernel_for<mod_f>(k, expensive_grain);
    default:
        return {};
    }
}

} // namespace isthmus::cpu
