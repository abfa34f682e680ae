// Internal: the element functions with NumPy's exact semantics, written once for CPU and CUDA.
#pragma once

#include "kernels/host_device.hpp"

#include <cmath>
#include <type_traits>

namespace isthmus::elem {

// Note [element functions once]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The CPU loops (core/src/cpu/elementwise_*.cpp) and the CUDA kernels
// (core/src/cuda/elementwise_ops.cuh) call these same functions for the semantics that go beyond
// one instruction (wrapping integers, Python's division and modulo, NaN-propagating extremes,
// shifts past the bit width). The CPU tests therefore exercise the code the GPU runs, and
// tests/cuda/test_cuda_semantics_*.cu check the rest of the kernels' element code on the host.
// Only what both compilers accept belongs here: no std::complex, no exceptions.

/// The unsigned type integer arithmetic wraps in: at least `unsigned int`, so that small types
/// never promote to a signed int that could overflow (uint16 * uint16).
template <class T>
using wrap_t =
    std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

/// Wrapping integer negation (NumPy: -INT_MIN == INT_MIN).
template <class T>
ISTHMUS_HD inline T wrap_neg(T a) {
    return static_cast<T>(wrap_t<T>(0) - static_cast<wrap_t<T>>(a));
}

/// Wrapping a + b, a - b and a * b for integers.
template <class T>
ISTHMUS_HD inline T wrap_add(T a, T b) {
    return static_cast<T>(wrap_t<T>(a) + wrap_t<T>(b));
}
template <class T>
ISTHMUS_HD inline T wrap_sub(T a, T b) {
    return static_cast<T>(wrap_t<T>(a) - wrap_t<T>(b));
}
template <class T>
ISTHMUS_HD inline T wrap_mul(T a, T b) {
    return static_cast<T>(wrap_t<T>(a) * wrap_t<T>(b));
}

/// NaN test that needs no <cmath> overload on either compiler.
template <class T>
ISTHMUS_HD inline bool is_nan(T x) {
    return x != x;
}

// The C functions, from the right namespace on each side (nvcc's device overloads are global).
#if defined(__CUDA_ARCH__)
#define ISTHMUS_ELEM_MATH(f) ::f
#else
#define ISTHMUS_ELEM_MATH(f) std::f
#endif

// Note [integer division]
// ~~~~~~~~~~~~~~~~~~~~~~~
// x86 traps on division by zero and on INT_MIN / -1, and NumPy gives 0 (with a warning) and INT_MIN
// respectively. Both divisors are tested before dividing, so no input can raise SIGFPE (and the GPU
// gives the same values).

/// Python's a // b for integers.
template <class T>
ISTHMUS_HD inline T int_floor_div(T a, T b) {
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

/// The two parts of a complex result (each side has its own complex type).
template <class R>
struct complex_parts {
    R re, im;
};

/// NumPy 2's sign of x + iy: z / |z|, 0 at 0, NaN when a part is NaN; with an infinite part,
/// the unit along it (inf + iy -> 1, x - i inf -> -i, also when the other part is NaN), and
/// NaN when both are infinite.
template <class R>
ISTHMUS_HD inline complex_parts<R> complex_sign(R x, R y) {
    const bool inf_x = ISTHMUS_ELEM_MATH(isinf)(x), inf_y = ISTHMUS_ELEM_MATH(isinf)(y);
    if (inf_x && inf_y) return {R(NAN), R(NAN)};
    if (inf_x) return {ISTHMUS_ELEM_MATH(copysign)(R(1), x), R(0)};
    if (inf_y) return {R(0), ISTHMUS_ELEM_MATH(copysign)(R(1), y)};
    if (is_nan(x) || is_nan(y)) return {R(NAN), R(NAN)};
    if (x == R(0) && y == R(0)) return {R(0), R(0)};
    const R h = ISTHMUS_ELEM_MATH(hypot)(x, y);
    return {x / h, y / h};
}

/// Python's a % b for integers (the sign of b).
template <class T>
ISTHMUS_HD inline T int_mod(T a, T b) {
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

/// NumPy's npy_divmod quotient for floats: fmod, corrected to Python's sign convention, and
/// snapped to the nearest integer so that a == b * (a // b) + a % b holds as closely as possible.
template <class T>
ISTHMUS_HD inline T float_floor_div(T a, T b) {
    if (b == T(0)) return a / b;
    const T mod = ISTHMUS_ELEM_MATH(fmod)(a, b);
    T div = (a - mod) / b;
    if (mod != T(0) && ((b < T(0)) != (mod < T(0)))) div -= T(1);
    if (div != T(0)) {
        T fl = ISTHMUS_ELEM_MATH(floor)(div);
        if (div - fl > T(0.5)) fl += T(1);
        return fl;
    }
    return ISTHMUS_ELEM_MATH(copysign)(T(0), a / b);
}

/// Python's a % b for floats (the sign of b; zero takes b's sign).
template <class T>
ISTHMUS_HD inline T float_mod(T a, T b) {
    if (b == T(0)) return ISTHMUS_ELEM_MATH(fmod)(a, b);
    T mod = ISTHMUS_ELEM_MATH(fmod)(a, b);
    if (mod != T(0)) {
        if ((b < T(0)) != (mod < T(0))) mod += b;
    } else {
        mod = ISTHMUS_ELEM_MATH(copysign)(T(0), b);
    }
    return mod;
}

/// Integer a ** b by squaring, wrapping on overflow. Negative exponents never reach a kernel
/// (the op layer raises value_error first, as NumPy does); they give 0 here rather than loop.
template <class T>
ISTHMUS_HD inline T int_pow(T a, T b) {
    if constexpr (std::is_signed_v<T>)
        if (b < 0) return 0;
    wrap_t<T> base = static_cast<wrap_t<T>>(a), r = 1;
    auto e = static_cast<std::make_unsigned_t<T>>(b);
    while (e) {
        if (e & 1u) r = static_cast<wrap_t<T>>(r * base);
        base = static_cast<wrap_t<T>>(base * base);
        e = static_cast<std::make_unsigned_t<T>>(e >> 1);
    }
    return static_cast<T>(r);
}

// Note [shift counts]
// ~~~~~~~~~~~~~~~~~~~
// C++ leaves shifts by >= the bit width (or negative) undefined; NumPy defines them: a left shift
// gives 0, a right shift gives 0 or -1 (the sign). The count is compared as unsigned, so negative
// counts take the same branch, as in NumPy's npy_lshift.

/// a << b with NumPy's counts past the width.
template <class T>
ISTHMUS_HD inline T shift_left(T a, T b) {
    if (static_cast<std::make_unsigned_t<T>>(b) >= sizeof(T) * 8) return T(0);
    return static_cast<T>(static_cast<wrap_t<T>>(a) << b);
}

/// a >> b (arithmetic for signed) with NumPy's counts past the width.
template <class T>
ISTHMUS_HD inline T shift_right(T a, T b) {
    if (static_cast<std::make_unsigned_t<T>>(b) >= sizeof(T) * 8) {
        if constexpr (std::is_signed_v<T>)
            return a < 0 ? T(-1) : T(0);
        else
            return T(0);
    }
    return static_cast<T>(a >> b);
}

/// NaN-propagating maximum and minimum as NumPy's SIMD loops give them: a NaN wins (the first
/// one when both are), and of two equal values (+0 and -0) the second.
template <class T>
ISTHMUS_HD inline T maximum(T a, T b) {
    return (a > b || is_nan(a)) ? a : b;
}
template <class T>
ISTHMUS_HD inline T minimum(T a, T b) {
    return (a < b || is_nan(a)) ? a : b;
}

/// NumPy's clip(x, lo, hi): NaN anywhere propagates (x's first), and a bound equal to x (+0 and
/// -0) leaves x, unlike maximum and minimum.
template <class T>
ISTHMUS_HD inline T clamp(T x, T lo, T hi) {
    const T m = (x >= lo || is_nan(x)) ? x : lo;
    return (m <= hi || is_nan(m)) ? m : hi;
}

#undef ISTHMUS_ELEM_MATH

} // namespace isthmus::elem
