// Tests for dtypes: sizes, names, parsing, NumPy promotion, and float16/bfloat16 conversions.
#include <isthmus/dtype.hpp>
#include <isthmus/tensor.hpp>

#include <doctest/doctest.h>

#include "test_support.hpp"

#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

using namespace isthmus;

namespace {

// Short names for the promotion tables below.
constexpr dtype b_ = dtype::bool_, i1 = dtype::int8, i2 = dtype::int16, i4 = dtype::int32,
                i8 = dtype::int64, u1 = dtype::uint8, u2 = dtype::uint16, u4 = dtype::uint32,
                u8 = dtype::uint64, f2 = dtype::float16, bf = dtype::bfloat16, f4 = dtype::float32,
                f8 = dtype::float64, c8 = dtype::complex64, c16 = dtype::complex128;

// The 14 dtypes NumPy has, in the order of the tables.
const dtype np_dtypes[14] = {b_, i1, i2, i4, i8, u1, u2, u4, u8, f2, f4, f8, c8, c16};

// np.result_type(row, col) from NumPy 2.4.6 (generated with numpy, pasted as data).
const dtype np_result_type[14][14] = {
    // b_ i1 i2 i4 i8 u1 u2 u4 u8 f2 f4 f8 c8 c16
    {b_, i1, i2, i4, i8, u1, u2, u4, u8, f2, f4, f8, c8, c16},              // b_
    {i1, i1, i2, i4, i8, i2, i4, i8, f8, f2, f4, f8, c8, c16},              // i1
    {i2, i2, i2, i4, i8, i2, i4, i8, f8, f4, f4, f8, c8, c16},              // i2
    {i4, i4, i4, i4, i8, i4, i4, i8, f8, f8, f8, f8, c16, c16},             // i4
    {i8, i8, i8, i8, i8, i8, i8, i8, f8, f8, f8, f8, c16, c16},             // i8
    {u1, i2, i2, i4, i8, u1, u2, u4, u8, f2, f4, f8, c8, c16},              // u1
    {u2, i4, i4, i4, i8, u2, u2, u4, u8, f4, f4, f8, c8, c16},              // u2
    {u4, i8, i8, i8, i8, u4, u4, u4, u8, f8, f8, f8, c16, c16},             // u4
    {u8, f8, f8, f8, f8, u8, u8, u8, u8, f8, f8, f8, c16, c16},             // u8
    {f2, f2, f4, f8, f8, f2, f4, f8, f8, f2, f4, f8, c8, c16},              // f2
    {f4, f4, f4, f8, f8, f4, f4, f8, f8, f4, f4, f8, c8, c16},              // f4
    {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, c16, c16},             // f8
    {c8, c8, c8, c16, c16, c8, c8, c16, c16, c8, c8, c16, c8, c16},         // c8
    {c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16}, // c16
};

// np.can_cast(row, col, "safe") from NumPy 2.4.6, one character per column.
const char* np_can_cast_safe[14] = {
    "11111111111111", // bool
    "01111000011111", // int8
    "00111000001111", // int16
    "00011000000101", // int32
    "00001000000101", // int64
    "00111111111111", // uint8
    "00011011101111", // uint16
    "00001001100101", // uint32
    "00000000100101", // uint64
    "00000000011111", // float16
    "00000000001111", // float32
    "00000000000101", // float64
    "00000000000011", // complex64
    "00000000000001", // complex128
};

uint32_t f32_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}
float f32_from(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// The value of a binary16 bit pattern, computed independently of half.hpp.
double half_value(uint16_t h) {
    const int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    double v;
    if (exp == 0)
        v = std::ldexp(mant, -24);
    else if (exp == 31)
        v = mant ? NAN : INFINITY;
    else
        v = std::ldexp(1024 + mant, exp - 25);
    return sign ? -v : v;
}

} // namespace

TEST_CASE("dtype: itemsize, name and printing of every dtype") {
    struct row {
        dtype t;
        size_t size;
        const char* name;
    };
    const row rows[] = {
        {dtype::bool_, 1, "bool"},
        {dtype::int8, 1, "int8"},
        {dtype::int16, 2, "int16"},
        {dtype::int32, 4, "int32"},
        {dtype::int64, 8, "int64"},
        {dtype::uint8, 1, "uint8"},
        {dtype::uint16, 2, "uint16"},
        {dtype::uint32, 4, "uint32"},
        {dtype::uint64, 8, "uint64"},
        {dtype::float16, 2, "float16"},
        {dtype::bfloat16, 2, "bfloat16"},
        {dtype::float32, 4, "float32"},
        {dtype::float64, 8, "float64"},
        {dtype::complex64, 8, "complex64"},
        {dtype::complex128, 16, "complex128"},
    };
    REQUIRE(std::size(rows) == static_cast<size_t>(dtype_count));
    for (const auto& r : rows) {
        CAPTURE(r.name);
        CHECK(itemsize(r.t) == r.size);
        CHECK(name(r.t) == r.name);
        std::ostringstream os;
        os << r.t;
        CHECK(os.str() == r.name);
        CHECK(parse_dtype(r.name) == r.t);
    }
    // The C++ types that dtype_of maps have the dtype's size.
    CHECK(sizeof(float16_t) == 2);
    CHECK(sizeof(bfloat16_t) == 2);
    CHECK(sizeof(complex64_t) == 8);
    CHECK(sizeof(complex128_t) == 16);
}

TEST_CASE("dtype: parse_dtype accepts the aliases") {
    struct alias {
        const char* text;
        dtype t;
    };
    const alias aliases[] = {
        {"bool_", b_},  {"b1", b_}, {"half", f2},     {"f2", f2},   {"float", f4}, {"f4", f4},
        {"double", f8}, {"f8", f8}, {"int", i4},      {"long", i8}, {"i1", i1},    {"i2", i2},
        {"i4", i4},     {"i8", i8}, {"u1", u1},       {"u2", u2},   {"u4", u4},    {"u8", u8},
        {"cfloat", c8}, {"c8", c8}, {"cdouble", c16}, {"c16", c16}, {"bf16", bf},
    };
    for (const auto& a : aliases) {
        CAPTURE(a.text);
        CHECK(parse_dtype(a.text) == a.t);
    }
}

TEST_CASE("dtype: parse_dtype rejects unknown names with a type_error naming them") {
    for (const char* bad : {"float128", "Float32", "", "int 32", "complex", "uint", "float32 "}) {
        CAPTURE(bad);
        CHECK_THROWS_AS(parse_dtype(bad), type_error);
        try {
            parse_dtype(bad);
        } catch (const type_error& e) {
            const std::string msg = e.what();
            CHECK(msg.find(std::string("\"") + bad + "\"") != std::string::npos);
            CHECK(msg.find("unknown dtype") != std::string::npos);
            CHECK(msg.find("float32") != std::string::npos); // lists what is accepted
        }
    }
    // type_error is an isthmus::error (one catch clause for every runtime error).
    CHECK_THROWS_AS(parse_dtype("nope"), isthmus::error);
}

TEST_CASE("dtype: categories") {
    for (dtype t : all_dtypes) {
        CAPTURE(t);
        const int kinds = is_bool(t) + is_integer(t) + is_floating(t) + is_complex(t);
        CHECK(kinds == 1);
        CHECK(is_integer(t) == (is_signed_int(t) || is_unsigned_int(t)));
        CHECK(is_inexact(t) == (is_floating(t) || is_complex(t)));
    }
    CHECK(is_signed_int(i1));
    CHECK(is_signed_int(i8));
    CHECK_FALSE(is_signed_int(u1));
    CHECK(is_unsigned_int(u8));
    CHECK_FALSE(is_integer(b_));
    CHECK(is_floating(f2));
    CHECK(is_floating(bf));
    CHECK(is_floating(f8));
    CHECK_FALSE(is_floating(c8));
    CHECK(is_complex(c16));
}

TEST_CASE("dtype: promote_types matches numpy's result_type for every pair") {
    for (int i = 0; i < 14; ++i)
        for (int j = 0; j < 14; ++j) {
            CAPTURE(np_dtypes[i]);
            CAPTURE(np_dtypes[j]);
            CHECK(promote_types(np_dtypes[i], np_dtypes[j]) == np_result_type[i][j]);
        }
}

TEST_CASE("dtype: promote_types with bfloat16 follows PyTorch") {
    CHECK(promote_types(bf, bf) == bf);
    CHECK(promote_types(bf, f2) == f4);
    CHECK(promote_types(f2, bf) == f4);
    CHECK(promote_types(bf, b_) == bf);
    CHECK(promote_types(bf, i1) == bf);
    CHECK(promote_types(u1, bf) == bf);
    CHECK(promote_types(bf, i2) == f4);
    CHECK(promote_types(bf, u2) == f4);
    CHECK(promote_types(bf, i4) == f8);
    CHECK(promote_types(bf, f4) == f4);
    CHECK(promote_types(bf, f8) == f8);
    CHECK(promote_types(bf, c8) == c8);
    CHECK(promote_types(bf, c16) == c16);
    // Symmetric for every pair, bfloat16 included.
    for (dtype a : all_dtypes)
        for (dtype b : all_dtypes) {
            CAPTURE(a);
            CAPTURE(b);
            CHECK(promote_types(a, b) == promote_types(b, a));
            // The result holds both operands safely unless NumPy falls back to float64 for
            // 64-bit integers (int64/uint64 with floats or each other).
            if (itemsize(a) < 8 && itemsize(b) < 8 && !is_complex(a) && !is_complex(b)) {
                CHECK(can_cast_safely(a, promote_types(a, b)));
                CHECK(can_cast_safely(b, promote_types(a, b)));
            }
        }
}

TEST_CASE("dtype: can_cast_safely matches numpy's can_cast(..., 'safe')") {
    for (int i = 0; i < 14; ++i)
        for (int j = 0; j < 14; ++j) {
            CAPTURE(np_dtypes[i]);
            CAPTURE(np_dtypes[j]);
            CHECK(can_cast_safely(np_dtypes[i], np_dtypes[j]) == (np_can_cast_safe[i][j] == '1'));
        }
}

TEST_CASE("dtype: promote_with_scalar follows NEP 50 (weak Python scalars)") {
    // (np.zeros(1, dt) + True / 1 / 1.0 / 1j).dtype with NumPy 2.4.6.
    struct row {
        dtype t;
        dtype with_bool, with_int, with_float, with_complex;
    };
    const row rows[] = {
        {b_, b_, i8, f8, c16}, {i1, i1, i1, f8, c16},
        {i2, i2, i2, f8, c16}, {i4, i4, i4, f8, c16},
        {i8, i8, i8, f8, c16}, {u1, u1, u1, f8, c16},
        {u2, u2, u2, f8, c16}, {u4, u4, u4, f8, c16},
        {u8, u8, u8, f8, c16}, {f2, f2, f2, f2, c8},
        {f4, f4, f4, f4, c8},  {f8, f8, f8, f8, c16},
        {c8, c8, c8, c8, c8},  {c16, c16, c16, c16, c16},
        {bf, bf, bf, bf, c8}, // bfloat16: not in NumPy; the array's dtype wins within its kind
    };
    for (const auto& r : rows) {
        CAPTURE(r.t);
        CHECK(promote_with_scalar(r.t, scalar_kind::boolean) == r.with_bool);
        CHECK(promote_with_scalar(r.t, scalar_kind::integer) == r.with_int);
        CHECK(promote_with_scalar(r.t, scalar_kind::floating) == r.with_float);
        CHECK(promote_with_scalar(r.t, scalar_kind::complex) == r.with_complex);
    }
}

TEST_CASE("dtype: real_dtype and complex_dtype") {
    CHECK(real_dtype(c8) == f4);
    CHECK(real_dtype(c16) == f8);
    for (dtype t : all_dtypes)
        if (!is_complex(t)) CHECK(real_dtype(t) == t);
    CHECK(complex_dtype(f2) == c8);
    CHECK(complex_dtype(bf) == c8);
    CHECK(complex_dtype(f4) == c8);
    CHECK(complex_dtype(f8) == c16);
    CHECK(complex_dtype(i1) == c16);
    CHECK(complex_dtype(b_) == c16);
    CHECK(complex_dtype(c8) == c8);
    CHECK(complex_dtype(c16) == c16);
}

TEST_CASE("dtype: dtype_of and ISTHMUS_DISPATCH agree for every dtype") {
    CHECK(dtype_of_v<bool> == b_);
    CHECK(dtype_of_v<int8_t> == i1);
    CHECK(dtype_of_v<uint64_t> == u8);
    CHECK(dtype_of_v<float16_t> == f2);
    CHECK(dtype_of_v<bfloat16_t> == bf);
    CHECK(dtype_of_v<float> == f4);
    CHECK(dtype_of_v<double> == f8);
    CHECK(dtype_of_v<complex64_t> == c8);
    CHECK(dtype_of_v<complex128_t> == c16);
    for (dtype t : all_dtypes) {
        CAPTURE(t);
        dtype seen = dtype::float32;
        size_t size = 0;
        int runs = 0;
        ISTHMUS_DISPATCH(t, T, {
            seen = dtype_of_v<T>;
            size = sizeof(T);
            ++runs;
        });
        CHECK(runs == 1);
        CHECK(seen == t);
        CHECK(size == itemsize(t));
    }
}

TEST_CASE("half: every float16 bit pattern round-trips through float") {
    int nans = 0;
    for (uint32_t h = 0; h < 65536; ++h) {
        const auto bits = static_cast<uint16_t>(h);
        const float f = float16_t::to_float(bits);
        const double expect = half_value(bits);
        if (std::isnan(expect)) {
            ++nans;
            CHECK(std::isnan(f));
            const uint16_t back = float16_t::from_float(f);
            CHECK((back & 0x7c00u) == 0x7c00u); // still NaN: all-ones exponent...
            CHECK((back & 0x03ffu) != 0);       // ...and a non-zero mantissa
            CHECK((back & 0x8000u) == (bits & 0x8000u));
            continue;
        }
        if (static_cast<double>(f) != expect) {
            CAPTURE(h);
            FAIL_CHECK("to_float gives " << f << ", expected " << expect);
        }
        if (float16_t::from_float(f) != bits) {
            CAPTURE(h);
            FAIL_CHECK("round trip gives " << float16_t::from_float(f));
        }
        // The wrapper type agrees with the static functions.
        float16_t w;
        w.bits = bits;
        CHECK_EQ(f32_bits(static_cast<float>(w)), f32_bits(f));
    }
    CHECK(nans == 2 * 1023); // both signs, every non-zero mantissa
}

TEST_CASE("half: float16 from float matches numpy's float16") {
    // (float32 bits, float16 bits) pairs: np.array([bits], np.uint32).view(np.float32)
    // .astype(np.float16).view(np.uint16), NumPy 2.4.6. Hand-picked edges (ties, 65504, 65520,
    // subnormals, 2^-25) then random values.
    const std::pair<uint32_t, uint16_t> table[] = {
        {0x00000000u, 0x0000u}, {0x80000000u, 0x8000u}, {0x3f800000u, 0x3c00u},
        {0xbf800000u, 0xbc00u}, {0x3f000000u, 0x3800u}, {0x477fe000u, 0x7bffu},
        {0x477feffdu, 0x7bffu}, {0x477ff000u, 0x7c00u}, {0x47800000u, 0x7c00u},
        {0x49742400u, 0x7c00u}, {0xc9742400u, 0xfc00u}, {0x7f800000u, 0x7c00u},
        {0xff800000u, 0xfc00u}, {0x38800000u, 0x0400u}, {0x33800000u, 0x0001u},
        {0x33000000u, 0x0000u}, {0x33000001u, 0x0001u}, {0x32800000u, 0x0000u},
        {0x33c00000u, 0x0002u}, {0x34200000u, 0x0002u}, {0x387fe000u, 0x0400u},
        {0x3f801000u, 0x3c00u}, {0x3f803000u, 0x3c02u}, {0x3f801008u, 0x3c01u},
        {0x3f802000u, 0x3c01u}, {0x3dcccccdu, 0x2e66u}, {0x3e4ccccdu, 0x3266u},
        {0x3eaaaaabu, 0x3555u}, {0x40490fdbu, 0x4248u}, {0xc02df84du, 0xc170u},
        {0x322bcc77u, 0x0000u}, {0x33d6bf95u, 0x0002u}, {0x387fda40u, 0x03ffu},
        {0x388205ffu, 0x0410u}, {0x42c90000u, 0x5648u}, {0x45001000u, 0x6800u},
        {0x45003000u, 0x6802u}, {0x45800800u, 0x6c00u}, {0xc77fe000u, 0xfbffu},
        {0x477fe100u, 0x7bffu}, {0x4000f57bu, 0x4008u}, {0xb4f8a4fau, 0x8008u},
        {0x44d5f5cau, 0x66b0u}, {0x480c9917u, 0x7c00u}, {0x3d023b15u, 0x2812u},
        {0xb2e4f681u, 0x8000u}, {0x32d2fc05u, 0x0000u}, {0x45ced30cu, 0x6e77u},
        {0x408baf4cu, 0x445du}, {0xb78ea515u, 0x811du}, {0xb23e4ddfu, 0x8000u},
        {0x39d568a1u, 0x0eabu}, {0xc33ba290u, 0xd9ddu}, {0xb4566a8fu, 0x8003u},
        {0xb4ca1cc2u, 0x8006u}, {0x33698556u, 0x0001u}, {0x43d2835fu, 0x5e94u},
        {0x3becd2a5u, 0x1f67u}, {0x3d1fe437u, 0x28ffu}, {0xc6999aa7u, 0xf4cdu},
        {0xc0c3dc52u, 0xc61fu}, {0x47788245u, 0x7bc4u}, {0x4200bd68u, 0x5006u},
        {0x3cdae1b7u, 0x26d7u}, {0xc1304cebu, 0xc982u}, {0x3709c208u, 0x008au},
        {0x4494fe0eu, 0x64a8u}, {0xb41b8836u, 0x8002u}, {0x36f7f9adu, 0x007cu},
        {0xbd0e319bu, 0xa872u}, {0x42d5d300u, 0x56afu}, {0x3b851145u, 0x1c29u},
        {0x3f54c913u, 0x3aa6u}, {0x3322c61eu, 0x0001u}, {0x36fa3438u, 0x007du},
        {0xb6eabce2u, 0x8075u}, {0x40c813dcu, 0x4641u}, {0xbe2cbf70u, 0xb166u},
        {0x41ca9b2eu, 0x4e55u}, {0x4085cd59u, 0x442eu}, {0xc1689ebau, 0xcb45u},
        {0xc515c19fu, 0xe8aeu}, {0xc063f9e4u, 0xc320u}, {0xc2b80c30u, 0xd5c0u},
        {0x3b0fdb30u, 0x187fu}, {0x37b7d0ceu, 0x0170u}, {0xb5c3d075u, 0x8018u},
        {0xb56b97cfu, 0x800fu}, {0x41e8ab81u, 0x4f45u}, {0x47520db2u, 0x7a90u},
        {0x380dd81cu, 0x0237u}, {0xc867ac22u, 0xfc00u}, {0xb7743909u, 0x80f4u},
        {0xba93d202u, 0x949fu}, {0xbc64bc15u, 0xa326u}, {0xc0090f1eu, 0xc048u},
        {0x349b6944u, 0x0005u}, {0xb3a4a005u, 0x8001u}, {0x3340dc08u, 0x0001u},
        {0xb4f766d4u, 0x8008u}, {0xc82892ffu, 0xfc00u}, {0xbbbafc9du, 0x9dd8u},
        {0xb420f36eu, 0x8003u}, {0xb4369123u, 0x8003u}, {0x3832c551u, 0x02cbu},
        {0xb8717711u, 0x83c6u}, {0xc09e3ffbu, 0xc4f2u}, {0xbdede96du, 0xaf6fu},
        {0xb8f1e0ddu, 0x878fu}, {0x48165c3du, 0x7c00u}, {0x44a6a0a1u, 0x6535u},
        {0xb3ad1e41u, 0x8001u}, {0x433ff27au, 0x5a00u}, {0x43aab895u, 0x5d56u},
        {0x3606273du, 0x0022u}, {0x45f671beu, 0x6fb4u}, {0xb6c5e572u, 0x8063u},
        {0xb429a2f2u, 0x8003u}, {0x375588e3u, 0x00d6u}, {0x47d1b329u, 0x7c00u},
        {0xb4e563a7u, 0x8007u}, {0xb69bc7c2u, 0x804eu}, {0x33321abeu, 0x0001u},
        {0x3c7c60e1u, 0x23e3u}, {0x47f7db92u, 0x7c00u}, {0xbad0e04eu, 0x9687u},
        {0x3ba8d377u, 0x1d47u}, {0xc7ec6782u, 0xfc00u}, {0xb6c42d89u, 0x8062u},
        {0xb4a15206u, 0x8005u}, {0x3ab33564u, 0x159au}, {0x44434d6eu, 0x621au},
        {0xb5b00b6bu, 0x8016u}, {0x3aa612b5u, 0x1531u}, {0xc8cb3383u, 0xfc00u},
        {0x3eacbd43u, 0x3566u}, {0x40637108u, 0x431cu}, {0x41b0b596u, 0x4d86u},
        {0x3b8962c1u, 0x1c4bu}, {0x412632a9u, 0x4932u}, {0xbfd765deu, 0xbebbu},
        {0x413343f9u, 0x499au}, {0x46141ed1u, 0x70a1u}, {0xbb2f4c9cu, 0x997au},
        {0xc6ac5984u, 0xf563u}, {0x38c26a25u, 0x0613u}, {0x4466e253u, 0x6337u},
        {0x475475bdu, 0x7aa4u}, {0xb2e5d6d3u, 0x8000u}, {0xc0e6516du, 0xc733u},
        {0x352eeddau, 0x000bu}, {0x41754239u, 0x4baau}, {0xb673e2d7u, 0x803du},
        {0x44fd762bu, 0x67ecu}, {0xbd6060b5u, 0xab03u}, {0x3b573c60u, 0x1abau},
        {0xc7aa50aau, 0xfc00u}, {0xc479ccf9u, 0xe3ceu}, {0xbb18e78cu, 0x98c7u},
        {0xc25ff1c4u, 0xd300u}, {0x3ac45b37u, 0x1623u}, {0xc81a1cb4u, 0xfc00u},
        {0xbcaac835u, 0xa556u}, {0x3c223d90u, 0x2112u}, {0xb4c37d9du, 0x8006u},
        {0xc4c62ce4u, 0xe631u}, {0xb59f6473u, 0x8014u}, {0x3a118bf2u, 0x108cu},
        {0x3284c803u, 0x0000u}, {0xc705a43fu, 0xf82du}, {0xb893d0c9u, 0x849fu},
        {0xbc2d7ea8u, 0xa16cu}, {0xbfc1f4d5u, 0xbe10u}, {0xb46139f1u, 0x8004u},
        {0x3bd95ab3u, 0x1ecbu}, {0xc1ca375au, 0xce52u}, {0x39408f66u, 0x0a04u},
        {0xb4f48ad7u, 0x8008u}, {0xb2cae2e6u, 0x8000u}, {0xbcc8370bu, 0xa642u},
        {0x393d2e7eu, 0x09e9u}, {0xc1f8537eu, 0xcfc3u}, {0xc7fef099u, 0xfc00u},
        {0xb64422dbu, 0x8031u}, {0xc588bbe6u, 0xec46u}, {0xb6f97889u, 0x807du},
        {0xb9950625u, 0x8ca8u}, {0xc240a3f5u, 0xd205u}, {0xc83252ddu, 0xfc00u},
        {0x3c5aa731u, 0x22d5u}, {0xc3c47d8au, 0xde24u}, {0xc5ec102au, 0xef61u},
        {0x402f93fcu, 0x417du}, {0xb42f3ed6u, 0x8003u}, {0x47f172a4u, 0x7c00u},
        {0xb34e549au, 0x8001u}, {0x341d2c94u, 0x0002u}, {0xc5995e4du, 0xeccbu},
        {0xbd784576u, 0xabc2u}, {0xc2e2727fu, 0xd714u}, {0xbe3f139bu, 0xb1f9u},
        {0x33b95a8au, 0x0001u}, {0xb4a58666u, 0x8005u}, {0xbfab8f1cu, 0xbd5cu},
        {0x36d6a53au, 0x006bu}, {0x46d8b671u, 0x76c6u}, {0xb2de6afcu, 0x8000u},
        {0xbd2f8a69u, 0xa97cu}, {0x3f098e9au, 0x384cu}, {0x461b2bafu, 0x70d9u},
        {0xb87ebb58u, 0x83fbu}, {0xc5461700u, 0xea31u}, {0xb6fc338cu, 0x807eu},
        {0xb67480d8u, 0x803du}, {0xba5f21ddu, 0x92f9u}, {0xb3f4fd90u, 0x8002u},
        {0x452e4746u, 0x6972u}, {0xc52f96e3u, 0xe97du}, {0x3b343fedu, 0x19a2u},
        {0x3da483bcu, 0x2d24u}, {0xb228082bu, 0x8000u}, {0xc4a20c41u, 0xe510u},
        {0xb5ccc9b4u, 0x801au}, {0xb31bf9c3u, 0x8001u}, {0xc34bf9f2u, 0xda60u},
        {0xbd978a01u, 0xacbcu}, {0x3c2e7209u, 0x2174u}, {0xbad8f1b0u, 0x96c8u},
        {0x46ba7aa5u, 0x75d4u}, {0xb70069d6u, 0x8080u}, {0xc3344d54u, 0xd9a2u},
        {0x39b8cc4au, 0x0dc6u}, {0xbaef10ddu, 0x9779u}, {0x37f91531u, 0x01f2u},
        {0xc4ec6c6au, 0xe763u}, {0xbf3e3a85u, 0xb9f2u}, {0xc53d94e7u, 0xe9edu},
        {0xc138fed9u, 0xc9c8u}, {0xbd8d2177u, 0xac69u}, {0xc8c3b8c1u, 0xfc00u},
        {0x592be680u, 0x7c00u}, {0x664af128u, 0x7c00u}, {0x55048381u, 0x7c00u},
        {0x147f1c86u, 0x0000u}, {0x2005dc12u, 0x0000u}, {0x1b290713u, 0x0000u},
        {0x484f7472u, 0x7c00u}, {0x7827eafeu, 0x7c00u}, {0x7c747955u, 0x7c00u},
        {0x184559d4u, 0x0000u}, {0x0b5dedbcu, 0x0000u}, {0x0e46ae92u, 0x0000u},
        {0x21402dc1u, 0x0000u}, {0x4e4631a7u, 0x7c00u}, {0x4507e171u, 0x683fu},
        {0x4102b720u, 0x4816u}, {0x3d2d50ecu, 0x296bu}, {0x7d6b73c3u, 0x7c00u},
        {0x32510d0eu, 0x0000u}, {0x122409a4u, 0x0000u}, {0x5556bd95u, 0x7c00u},
        {0x646615acu, 0x7c00u}, {0x7464847fu, 0x7c00u}, {0x4b28a002u, 0x7c00u},
        {0x362504b1u, 0x0029u}, {0x052e555du, 0x0000u}, {0x5a5fc75du, 0x7c00u},
        {0x674d94beu, 0x7c00u}, {0x0c4ce954u, 0x0000u}, {0x5a16c3a6u, 0x7c00u},
        {0x30377d50u, 0x0000u}, {0x1b03e383u, 0x0000u}, {0x791193e8u, 0x7c00u},
        {0x2c7d90c2u, 0x0000u}, {0x6e5ecca8u, 0x7c00u}, {0x2c3f5c91u, 0x0000u},
        {0x6d545b9eu, 0x7c00u}, {0x773714a4u, 0x7c00u}, {0x514d92bfu, 0x7c00u},
        {0x7220a4acu, 0x7c00u},
    };
    for (const auto& row : table) {
        // plain names: clang with OpenMP cannot capture structured bindings (CAPTURE is a lambda)
        const uint32_t fb = row.first;
        const uint16_t hb = row.second;
        CAPTURE(fb);
        CHECK_EQ(float16_t::from_float(f32_from(fb)), hb);
        CHECK_EQ(float16_t(f32_from(fb)).bits, hb);
    }
}

TEST_CASE("half: float16 rounding, overflow and subnormals by hand") {
    auto h = [](float f) { return float16_t::from_float(f); };
    // Ties round to even: 1 + 2^-11 lies halfway between 1 (even) and 1 + 2^-10 (odd).
    CHECK(h(1.0f + 0x1p-11f) == 0x3c00);
    CHECK(h(1.0f + 3 * 0x1p-11f) == 0x3c02);        // halfway between 0x3c01 and 0x3c02 -> even
    CHECK(h(1.0f + 0x1p-11f + 0x1p-20f) == 0x3c01); // above the tie
    CHECK(h(2049.0f) == h(2048.0f));                // 2049 is a tie at spacing 2
    CHECK(h(2051.0f) == h(2052.0f));
    // Overflow: 65504 is the largest half; from 65520 on (the tie with 65536) it is inf.
    CHECK(h(65504.0f) == 0x7bff);
    CHECK(h(65519.0f) == 0x7bff);
    CHECK(h(65520.0f) == 0x7c00);
    CHECK(h(-65520.0f) == 0xfc00);
    CHECK(h(1e10f) == 0x7c00);
    CHECK(h(INFINITY) == 0x7c00);
    CHECK(h(-INFINITY) == 0xfc00);
    // Subnormals: the smallest is 2^-24; 2^-25 is a tie with 0 and rounds to even (0).
    CHECK(h(0x1p-24f) == 0x0001);
    CHECK(h(0x1p-25f) == 0x0000);
    CHECK(h(-0x1p-25f) == 0x8000);
    CHECK(h(0x1.000002p-25f) == 0x0001);
    CHECK(h(3 * 0x1p-25f) == 0x0002);        // 1.5 units -> 2 (even)
    CHECK(h(5 * 0x1p-25f) == 0x0002);        // 2.5 units -> 2 (even)
    CHECK(h(0x1p-14f - 0x1p-25f) == 0x0400); // rounds up into the smallest normal
    CHECK(h(0x1p-14f) == 0x0400);
    CHECK(h(-0.0f) == 0x8000);
    CHECK(std::isnan(float16_t::to_float(h(NAN))));
    CHECK(float16_t::to_float(0x0001) == 0x1p-24f);
    CHECK(float16_t::to_float(0x03ff) == 1023 * 0x1p-24f);
    CHECK(float16_t::to_float(0x7bff) == 65504.0f);
}

TEST_CASE("half: bfloat16 conversions") {
    // Every bfloat16 pattern is a float32 with the low 16 bits clear: exact round trip.
    for (uint32_t b = 0; b < 65536; ++b) {
        bfloat16_t x;
        x.bits = static_cast<uint16_t>(b);
        const float f = x;
        if (f32_bits(f) != b << 16) FAIL_CHECK("bfloat16 " << b << " -> float bits wrong");
        const uint16_t back = bfloat16_t::from_float(f);
        if (std::isnan(f)) {
            CHECK(std::isnan(static_cast<float>(bfloat16_t(f))));
            CHECK((back & 0x8000u) == (b & 0x8000u));
        } else if (back != b) {
            FAIL_CHECK("bfloat16 " << b << " round trip gives " << back);
        }
    }
    // (float32 bits, bfloat16 bits): nearest bfloat16 by exact rational arithmetic, ties to even.
    const std::pair<uint32_t, uint16_t> table[] = {
        {0x3f800000u, 0x3f80u}, {0x3f808000u, 0x3f80u}, {0x3f818000u, 0x3f82u},
        {0x3f808008u, 0x3f81u}, {0x3dcccccdu, 0x3dcdu}, {0xbdcccccdu, 0xbdcdu},
        {0x40490fdbu, 0x4049u}, {0x000116c2u, 0x0001u}, {0x7f7f0000u, 0x7f7fu},
        {0x7f7f0906u, 0x7f7fu}, {0x477fe000u, 0x4780u}, {0x00010000u, 0x0001u},
        {0xf10b72cdu, 0xf10bu}, {0x065de9b5u, 0x065eu}, {0x8a0704e0u, 0x8a07u},
        {0x7d55e76au, 0x7d56u}, {0x157bba18u, 0x157cu}, {0x320cbec1u, 0x320du},
        {0x9b1286ccu, 0x9b13u}, {0x557d12b8u, 0x557du}, {0x6034935du, 0x6035u},
        {0xb165d3eeu, 0xb166u}, {0x3318a7b7u, 0x3319u}, {0x0705930bu, 0x0706u},
        {0xf8085a4au, 0xf808u}, {0xd067c829u, 0xd068u}, {0x19093d92u, 0x1909u},
        {0x8e41b1d7u, 0x8e42u}, {0x2d7d4423u, 0x2d7du}, {0x6c0ad74bu, 0x6c0bu},
        {0x570756cbu, 0x5707u}, {0xfa4c9275u, 0xfa4du}, {0x6d7a05a2u, 0x6d7au},
        {0xb67b41cbu, 0xb67bu}, {0xe70c71c2u, 0xe70cu}, {0x2a103e1cu, 0x2a10u},
        {0x787116b2u, 0x7871u}, {0x02441c33u, 0x0244u}, {0x983ac021u, 0x983bu},
        {0x6b65c4a1u, 0x6b66u}, {0xe86d9082u, 0xe86eu}, {0x342db9e2u, 0x342eu},
        {0xed0f531du, 0xed0fu}, {0x1c00520bu, 0x1c00u}, {0xa7751f96u, 0xa775u},
        {0xeb3712c9u, 0xeb37u}, {0xb13d820au, 0xb13eu}, {0xf3746b3au, 0xf374u},
        {0x716d768bu, 0x716du}, {0x8078be0au, 0x8079u}, {0xd61e1774u, 0xd61eu},
        {0xc44d58deu, 0xc44du}, {0x630fb707u, 0x6310u}, {0x644b8538u, 0x644cu},
        {0xaf00c32cu, 0xaf01u}, {0x7e59412du, 0x7e59u}, {0xbf68ae69u, 0xbf69u},
        {0x49449c40u, 0x4945u}, {0x785eb85eu, 0x785fu}, {0x676631ceu, 0x6766u},
        {0x285a6a78u, 0x285au}, {0xbb08eb07u, 0xbb09u}, {0xf57de19du, 0xf57eu},
        {0xeb673704u, 0xeb67u}, {0xda15c2eeu, 0xda16u}, {0x0b39c160u, 0x0b3au},
        {0xee1ae030u, 0xee1bu}, {0x713b9ec6u, 0x713cu}, {0x0c44d8ccu, 0x0c45u},
        {0x4727db47u, 0x4728u}, {0xb75c1dc9u, 0xb75cu}, {0x372a40d3u, 0x372au},
    };
    for (const auto& row : table) {
        const uint32_t fb = row.first; // plain names for CAPTURE (see above)
        const uint16_t bb = row.second;
        CAPTURE(fb);
        CHECK_EQ(bfloat16_t::from_float(f32_from(fb)), bb);
    }
    // By hand: ties to even, overflow, infinities.
    CHECK(bfloat16_t::from_float(1.0f + 0x1p-8f) == 0x3f80);     // tie -> even
    CHECK(bfloat16_t::from_float(1.0f + 3 * 0x1p-8f) == 0x3f82); // tie -> even (up)
    CHECK(bfloat16_t::from_float(3.4028235e38f) == 0x7f80);      // FLT_MAX rounds to inf
    CHECK(bfloat16_t::from_float(INFINITY) == 0x7f80);
    CHECK(bfloat16_t::from_float(-INFINITY) == 0xff80);
    CHECK(std::isnan(static_cast<float>(bfloat16_t(NAN))));
    CHECK(std::isnan(static_cast<float>(bfloat16_t(-NAN))));
}

TEST_CASE("half: float64 -> float16 in tensor conversion rounds once, like numpy") {
    // np.array([x]).astype(np.float16) with NumPy 2.4.6. Going through float32 first would round
    // twice (1 + 2^-11 + 2^-40 would become the tie 1 + 2^-11, then 1.0; 65519.99999999 would
    // become 65520, then inf).
    const std::pair<double, uint16_t> table[] = {
        {1.0004882812509095, 0x3c01u},
        {1.0004882812490905, 0x3c00u},
        {1.00048828125, 0x3c00u},
        {65519.99999999, 0x7bffu},
        {65520.0, 0x7c00u},
        {2.9802322388562674e-08, 0x0001u},
        {2.9802322387695312e-08, 0x0000u},
        {2.980232238682795e-08, 0x0000u},
        {8.940696716308678e-08, 0x0002u},
        {0.1, 0x2e66u},
        {-1e+300, 0xfc00u},
        {1e-300, 0x0000u},
        {2049.0000001, 0x6801u},
        {-24663.412923357268, 0xf605u},
        {-48881.11565056973, 0xf9f8u},
        {21130.826225579527, 0x7529u},
        {-59858.91986654401, 0xfb4fu},
        {5023.4806029364845, 0x6ce8u},
        {-18803.551632238028, 0xf497u},
        {-61880.15053154105, 0xfb8eu},
        {1041.002646518842, 0x6411u},
        {-64750.60781812212, 0xfbe7u},
        {-9289.604287265975, 0xf089u},
        {-60220.24069955335, 0xfb5au},
        {-57300.17813185889, 0xfaffu},
    };
    std::vector<double> xs;
    for (const auto& [x, h] : table) xs.push_back(x);
    const tensor t = tensor::from_vector(xs).to(dtype::float16);
    const std::vector<float16_t> got = t.to_vector<float16_t>();
    REQUIRE(got.size() == xs.size());
    for (size_t i = 0; i < xs.size(); ++i) {
        CAPTURE(xs[i]);
        CHECK_EQ(got[i].bits, table[i].second);
    }
    // bfloat16 from int32 must round once too: 2^25 + 2^17 + 1 is just above the tie between
    // 2^25 and 2^25 + 2^18 (bfloat16 spacing there), so it rounds up.
    const tensor i = tensor::from_vector(std::vector<int32_t>{(1 << 25) + (1 << 17) + 1});
    CHECK(i.to(dtype::bfloat16).item<double>() == double((1 << 25) + (1 << 18)));
    CHECK(i.to(dtype::float64).to(dtype::bfloat16).item<double>() == double((1 << 25) + (1 << 18)));
}
