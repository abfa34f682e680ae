// Tests for the F16C float32 <-> float16 loops: the portable conversion's bits for every input.
#include "cpu/elementwise_exec.hpp"
#include "isthmus/half.hpp"

#if ISTHMUS_HAVE_F16C
#include "cpu/simd/convert_f16c.hpp"
#endif

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace isthmus;

#if ISTHMUS_HAVE_F16C

namespace {

float from_bits(uint32_t b) {
    float f;
    std::memcpy(&f, &b, sizeof f);
    return f;
}
uint32_t bits_of(float f) {
    uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b;
}

// The inputs of float -> half that decide its rounding: every half value as a float, the
// midpoints between neighbours and the floats just beside them, NaNs with payloads and signs,
// infinities, the overflow boundary, float32 subnormals, and random floats of every exponent.
std::vector<float> float_inputs() {
    std::vector<float> v;
    for (uint32_t h = 0; h < 0x7c00u; ++h) {
        for (uint32_t sign : {0u, 0x8000u}) {
            const float a = float16_t::to_float(static_cast<uint16_t>(h | sign));
            const float b = float16_t::to_float(static_cast<uint16_t>((h + 1) | sign));
            const float mid = a + (b - a) / 2; // exact: halves have 11 bits
            v.insert(v.end(), {a, mid, std::nextafter(mid, 0.0f),
                               std::nextafter(mid, std::copysign(1e9f, mid))});
        }
    }
    const float inf = std::numeric_limits<float>::infinity();
    for (float f : {inf, -inf, 65504.0f, 65519.0f, 65519.996f, 65520.0f, -65520.0f, 1e30f,
                    std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::min(),
                    0.0f, -0.0f})
        v.push_back(f);
    for (uint32_t payload : {1u, 0x2000u, 0x400000u, 0x7fffffu, 0x1fffu})
        for (uint32_t sign : {0u, 0x80000000u})
            v.push_back(from_bits(sign | 0x7f800000u | payload));
    std::mt19937 rng(7);
    for (int i = 0; i < 200000; ++i) v.push_back(from_bits(static_cast<uint32_t>(rng())));
    return v;
}

} // namespace

TEST_CASE("F16C conversions: float -> half gives the portable conversion's bits") {
    if (!cpu::f16c_usable()) {
        MESSAGE("this CPU has no F16C: the portable conversion runs");
        return;
    }
    const std::vector<float> in = float_inputs();
    std::vector<uint16_t> got(in.size());
    cpu::f16c_float_to_half(reinterpret_cast<const char*>(in.data()), 4,
                            reinterpret_cast<char*>(got.data()), 2,
                            static_cast<int64_t>(in.size()));
    size_t wrong = 0;
    for (size_t i = 0; i < in.size(); ++i) {
        const uint16_t want = float16_t::from_float(in[i]);
        if (got[i] != want && ++wrong <= 5)
            FAIL_CHECK("float bits 0x", std::hex, bits_of(in[i]), ": 0x", got[i], " not 0x", want);
    }
    CHECK(wrong == 0);
    // strided both ways, every tail length
    for (int64_t n = 0; n <= 20; ++n) {
        std::vector<float> src(static_cast<size_t>(3 * n + 1));
        for (size_t i = 0; i < src.size(); ++i) src[i] = in[(i * 7919) % in.size()];
        std::vector<uint16_t> dst(static_cast<size_t>(2 * n + 1), 0xabcd);
        cpu::f16c_float_to_half(reinterpret_cast<const char*>(src.data()), 12,
                                reinterpret_cast<char*>(dst.data()), 4, n);
        for (int64_t i = 0; i < n; ++i)
            CHECK(dst[static_cast<size_t>(2 * i)] ==
                  float16_t::from_float(src[static_cast<size_t>(3 * i)]));
        for (int64_t i = 0; i < n; ++i) CHECK(dst[static_cast<size_t>(2 * i + 1)] == 0xabcd);
    }
}

TEST_CASE("F16C conversions: half -> float gives the portable conversion's bits, all 65536") {
    if (!cpu::f16c_usable()) {
        MESSAGE("this CPU has no F16C: the portable conversion runs");
        return;
    }
    std::vector<uint16_t> in(65536);
    for (uint32_t h = 0; h < 65536; ++h) in[h] = static_cast<uint16_t>(h);
    std::vector<float> got(in.size());
    cpu::f16c_half_to_float(reinterpret_cast<const char*>(in.data()), 2,
                            reinterpret_cast<char*>(got.data()), 4, 65536);
    size_t wrong = 0;
    for (uint32_t h = 0; h < 65536; ++h) {
        const uint32_t want = bits_of(float16_t::to_float(in[h]));
        if (bits_of(got[h]) != want && ++wrong <= 5)
            FAIL_CHECK("half 0x", std::hex, h, ": 0x", bits_of(got[h]), " not 0x", want);
    }
    CHECK(wrong == 0);
    for (int64_t n = 0; n <= 20; ++n) {
        std::vector<float> dst(static_cast<size_t>(2 * n + 1), -7.0f);
        // every 3rd half from 0x7bf0 up: the largest finite, inf and NaNs in the strided tails
        cpu::f16c_half_to_float(reinterpret_cast<const char*>(in.data() + 0x7bf0), 6,
                                reinterpret_cast<char*>(dst.data()), 8, n);
        for (int64_t i = 0; i < n; ++i)
            CHECK(bits_of(dst[static_cast<size_t>(2 * i)]) ==
                  bits_of(float16_t::to_float(in[static_cast<size_t>(0x7bf0 + 3 * i)])));
        for (int64_t i = 0; i < n; ++i) CHECK(dst[static_cast<size_t>(2 * i + 1)] == -7.0f);
    }
}

TEST_CASE("F16C conversions: the executor's converters are the F16C loops") {
    if (!cpu::f16c_usable()) return;
    const cpu::convert_fn to_half = &cpu::f16c_float_to_half, to_float = &cpu::f16c_half_to_float;
    CHECK((cpu::converter(dtype::float32, dtype::float16) == to_half));
    CHECK((cpu::converter(dtype::float16, dtype::float32) == to_float));
}

#endif
