// Element conversion between any two dtypes' C++ types, with NumPy's cast semantics.
#pragma once

#include "isthmus/dtype.hpp"

#include <cmath>
#include <type_traits>

namespace isthmus::cpu {

template <typename T>
inline constexpr bool is_complex_v =
    std::is_same_v<T, complex64_t> || std::is_same_v<T, complex128_t>;
template <typename T>
inline constexpr bool is_half_v = std::is_same_v<T, float16_t> || std::is_same_v<T, bfloat16_t>;

/// Note [single rounding to half types]
/// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
/// float16/bfloat16 from a double (or an integer wider than float's 24-bit significand) must round
/// once, as NumPy does. Rounding to float first and then to the half type rounds twice (1 + 2^-11 +
/// 2^-40 -> 1 + 2^-11, a tie -> 1.0 instead of 1 + 2^-10). Rounding to float "to odd" (truncate,
/// then set the last bit when inexact) keeps the sticky information, and float's 13+ extra bits
/// make the second rounding exact. (int64/uint64 above 2^53 still round once to double first.)
inline float to_float_round_odd(double x) {
    const float f = static_cast<float>(x);
    const double back = f;
    if (back == x || !std::isfinite(f)) return f; // exact, NaN, or beyond float (inf either way)
    uint32_t b = detail::float_bits(f);
    if (std::fabs(back) > std::fabs(x)) --b; // rounded away from zero: step back toward zero
    return detail::bits_float(b | 1u);
}

/// Converts one element: complex -> real keeps the real part, anything -> bool is `!= 0`,
/// half types go through float, float -> int truncates (out-of-range is undefined in C++, so
/// it goes through int64 / uint64 first as NumPy does on x86).
template <typename To, typename From>
inline To convert(From x) {
    if constexpr (std::is_same_v<To, From>) {
        return x;
    } else if constexpr (std::is_same_v<To, bool>) {
        if constexpr (is_complex_v<From>)
            return x.real() != 0 || x.imag() != 0;
        else if constexpr (is_half_v<From>)
            return static_cast<float>(x) != 0.0f;
        else
            return x != From(0);
    } else if constexpr (is_complex_v<From>) {
        if constexpr (is_complex_v<To>)
            return To(static_cast<typename To::value_type>(x.real()),
                      static_cast<typename To::value_type>(x.imag()));
        else
            return convert<To>(x.real());
    } else if constexpr (is_half_v<From>) {
        return convert<To>(static_cast<float>(x));
    } else if constexpr (is_complex_v<To>) {
        return To(static_cast<typename To::value_type>(x), 0);
    } else if constexpr (is_half_v<To>) {
        if constexpr (std::is_same_v<From, double> ||
                      (std::is_integral_v<From> && sizeof(From) > 2))
            return To(to_float_round_odd(static_cast<double>(x)));
        else
            return To(static_cast<float>(x));
    } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
        if (!(x == x)) return To(0); // NaN
        if constexpr (std::is_signed_v<To>) {
            if (x >= 9.2233720368547758e18 || x < -9.2233720368547758e18)
                return static_cast<To>(INT64_MIN);
            return static_cast<To>(static_cast<int64_t>(x));
        } else {
            if (x >= 1.8446744073709552e19 || x <= -9.2233720368547758e18)
                return static_cast<To>(0);
            if (x < 0) return static_cast<To>(static_cast<int64_t>(x));
            return static_cast<To>(static_cast<uint64_t>(x));
        }
    } else {
        return static_cast<To>(x);
    }
}

} // namespace isthmus::cpu
