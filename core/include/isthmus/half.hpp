// float16 and bfloat16 storage types with round-to-nearest-even conversions to and from float.
#pragma once

#include <cstdint>
#include <cstring>

namespace isthmus {

namespace detail {
inline uint32_t float_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}
inline float bits_float(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
} // namespace detail

/// IEEE 754 binary16. Stored as bits; arithmetic happens in float.
struct float16_t {
    uint16_t bits = 0;

    float16_t() = default;
    float16_t(float f) : bits(from_float(f)) {} // NOLINT: implicit like a built-in float
    operator float() const { return to_float(bits); }

    static uint16_t from_float(float f) {
        uint32_t x = detail::float_bits(f);
        uint32_t sign = (x >> 16) & 0x8000u;
        uint32_t absx = x & 0x7fffffffu;
        if (absx >= 0x7f800000u) // inf or nan
            return static_cast<uint16_t>(sign | (absx > 0x7f800000u ? 0x7e00u : 0x7c00u));
        if (absx >= 0x477ff000u) // rounds to >= 65520: overflow to inf
            return static_cast<uint16_t>(sign | 0x7c00u);
        if (absx < 0x38800000u) { // subnormal or zero in half
            // Scale so that the half subnormal unit (2^-24) becomes 1, then round to even.
            float a = detail::bits_float(absx) * 16777216.0f; // 2^24
            auto r = static_cast<uint32_t>(a);
            float frac = a - static_cast<float>(r);
            if (frac > 0.5f || (frac == 0.5f && (r & 1u))) ++r;
            return static_cast<uint16_t>(sign | r);
        }
        uint32_t mant = absx & 0x007fffffu;
        uint32_t exp = (absx >> 23) - 127 + 15;
        uint32_t h = (exp << 10) | (mant >> 13);
        uint32_t rest = mant & 0x1fffu;
        if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
        return static_cast<uint16_t>(sign | h);
    }
    static float to_float(uint16_t h) {
        uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
        uint32_t exp = (h >> 10) & 0x1fu;
        uint32_t mant = h & 0x3ffu;
        if (exp == 0) {
            float v = static_cast<float>(mant) * (1.0f / 16777216.0f);
            return sign ? -v : v;
        }
        if (exp == 31) return detail::bits_float(sign | 0x7f800000u | (mant << 13));
        return detail::bits_float(sign | ((exp - 15 + 127) << 23) | (mant << 13));
    }
};

/// bfloat16: the upper 16 bits of a float32. Stored as bits; arithmetic happens in float.
struct bfloat16_t {
    uint16_t bits = 0;

    bfloat16_t() = default;
    bfloat16_t(float f) : bits(from_float(f)) {} // NOLINT: implicit like a built-in float
    operator float() const { return detail::bits_float(static_cast<uint32_t>(bits) << 16); }

    static uint16_t from_float(float f) {
        uint32_t x = detail::float_bits(f);
        if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
        uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
        return static_cast<uint16_t>((x + rounding) >> 16);
    }
};

} // namespace isthmus
