// Element conversion between any two dtypes' C++ types, with NumPy's cast semantics.
#pragma once

#include "isthmus/dtype.hpp"

#include <type_traits>

namespace isthmus::cpu {

template <typename T>
inline constexpr bool is_complex_v =
    std::is_same_v<T, complex64_t> || std::is_same_v<T, complex128_t>;
template <typename T>
inline constexpr bool is_half_v = std::is_same_v<T, float16_t> || std::is_same_v<T, bfloat16_t>;

/// Converts one element: complex -> real keeps the real part, anything -> bool is `!= 0`,
/// half types go through float, float -> int truncates (out-of-range is undefined in C++, so
/// it goes through int64 / uint64 first as NumPy does on x86).
template <typename To, typename From>
inline To convert(From x) {
    if constexpr (std::is_same_v<To, From>) {
        return x;
    } else if constexpr (std::is_same_v<To, bool>) {
        if constexpr (is_complex_v<From>) return x.real() != 0 || x.imag() != 0;
        else if constexpr (is_half_v<From>) return static_cast<float>(x) != 0.0f;
        else return x != From(0);
    } else if constexpr (is_complex_v<From>) {
        if constexpr (is_complex_v<To>) return To(static_cast<typename To::value_type>(x.real()),
                                                  static_cast<typename To::value_type>(x.imag()));
        else return convert<To>(x.real());
    } else if constexpr (is_half_v<From>) {
        return convert<To>(static_cast<float>(x));
    } else if constexpr (is_complex_v<To>) {
        return To(static_cast<typename To::value_type>(x), 0);
    } else if constexpr (is_half_v<To>) {
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
