// Internal: the sort order's unsigned radix keys, written once for the CPU's sort and CUDA's.
#pragma once

#include "kernels/host_device.hpp"

#include <cstdint>
#include <type_traits>

namespace isthmus::elem {

// Note [radix keys]
// ~~~~~~~~~~~~~~~~~
// A radix sort orders unsigned keys; these map Note [sort order] (core/src/cpu/sort.cpp) onto
// unsigned order, so that sorting the keys stably sorts the elements: integers with the sign bit
// flipped; floats with their sign-magnitude bits made monotonic (negative ones inverted, positive
// ones with the sign bit set), -0.0 keyed as +0.0 and every NaN as the largest key. A descending
// sort inverts the key (NaNs first, equal keys still in their order). The CPU's radix sort
// (core/src/cpu/sort.cpp) and the CUDA sort (core/src/cuda/sort.cu) call these same functions, so
// the CPU's sort tests check the GPU's keys too.

/// A float's key from its bits `u` (`sign` its sign bit; NaN and zero already told apart).
template <typename U>
ISTHMUS_HD inline U float_key(U u, U sign, bool nan, bool zero) {
    if (nan) return static_cast<U>(~U(0));
    if (zero) return sign; // +0.0 and -0.0: the key of +0.0
    return (u & sign) ? static_cast<U>(~u) : static_cast<U>(u | sign);
}

/// The key of a 16-bit float stored as `bits`: float16 (exp_mask 0x7c00) or bfloat16 (0x7f80).
ISTHMUS_HD inline uint16_t half_key(uint16_t bits, uint16_t exp_mask) {
    const uint16_t mag = bits & 0x7fff;
    return float_key<uint16_t>(bits, 0x8000, mag > exp_mask, mag == 0);
}

/// The key of a float or double.
template <typename F>
ISTHMUS_HD inline std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t> ieee_key(F x) {
    using U = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
    U u;
    __builtin_memcpy(&u, &x, sizeof u);
    return float_key<U>(u, U(1) << (8 * sizeof(U) - 1), x != x, x == 0);
}

/// The key of an integer (bool as 0 and 1).
template <typename I>
ISTHMUS_HD inline std::make_unsigned_t<I> int_key(I x) {
    using U = std::make_unsigned_t<I>;
    if constexpr (std::is_signed_v<I>)
        return static_cast<U>(static_cast<U>(x) ^ (U(1) << (8 * sizeof(U) - 1)));
    else
        return x;
}

} // namespace isthmus::elem
