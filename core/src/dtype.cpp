// dtype names, sizes, parsing and the NumPy promotion rules.
#include "isthmus/dtype.hpp"

#include <algorithm>
#include <array>
#include <ostream>

namespace isthmus {

namespace {
struct dtype_info {
    std::string_view name;
    size_t size;
};
constexpr std::array<dtype_info, dtype_count> infos{{
    {"bool", 1},
    {"int8", 1},
    {"int16", 2},
    {"int32", 4},
    {"int64", 8},
    {"uint8", 1},
    {"uint16", 2},
    {"uint32", 4},
    {"uint64", 8},
    {"float16", 2},
    {"bfloat16", 2},
    {"float32", 4},
    {"float64", 8},
    {"complex64", 8},
    {"complex128", 16},
}};

// Note [float levels]
// ~~~~~~~~~~~~~~~~~~~
// Real floating types are ordered by the integers they hold exactly: level 1 = float16/bfloat16
// (8-bit ints), 2 = float32 (16-bit ints), 3 = float64 (the rest).
int float_level(dtype t) {
    switch (t) {
    case dtype::float16:
    case dtype::bfloat16:
        return 1;
    case dtype::float32:
        return 2;
    default:
        return 3;
    }
}
// The smallest float level that holds every value of an integer or bool dtype.
int int_level(dtype t) {
    switch (itemsize(t)) {
    case 1:
        return 1;
    case 2:
        return 2;
    default:
        return 3;
    }
}
dtype float_of_level(int level) {
    return level == 1 ? dtype::float16 : level == 2 ? dtype::float32 : dtype::float64;
}
dtype signed_of_size(size_t n) {
    return n == 1 ? dtype::int8 : n == 2 ? dtype::int16 : n == 4 ? dtype::int32 : dtype::int64;
}
dtype promote_real(dtype a, dtype b) {
    // Both are bool, integer or real floating.
    if (a == b) return a;
    if (is_bool(a)) return b;
    if (is_bool(b)) return a;
    if (is_integer(a) && is_integer(b)) {
        if (is_signed_int(a) == is_signed_int(b)) return itemsize(a) >= itemsize(b) ? a : b;
        dtype s = is_signed_int(a) ? a : b, u = is_signed_int(a) ? b : a;
        if (itemsize(s) > itemsize(u)) return s;
        if (itemsize(u) == 8) return dtype::float64; // NumPy: uint64 with any signed int
        return signed_of_size(itemsize(u) * 2);
    }
    if (is_floating(a) && is_floating(b)) {
        int la = float_level(a), lb = float_level(b);
        if (la == 1 && lb == 1) return dtype::float32; // float16 with bfloat16 (a != b)
        return la >= lb ? a : b;
    }
    dtype f = is_floating(a) ? a : b, i = is_floating(a) ? b : a;
    int need = int_level(i);
    return float_level(f) >= need ? f : float_of_level(need);
}
} // namespace

size_t itemsize(dtype t) noexcept {
    return infos[static_cast<size_t>(t)].size;
}
std::string_view name(dtype t) noexcept {
    return infos[static_cast<size_t>(t)].name;
}

dtype parse_dtype(std::string_view s) {
    for (int i = 0; i < dtype_count; ++i)
        if (infos[static_cast<size_t>(i)].name == s) return static_cast<dtype>(i);
    struct alias {
        std::string_view name;
        dtype t;
    };
    static constexpr alias aliases[] = {
        {"bool_", dtype::bool_},      {"half", dtype::float16},       {"float", dtype::float32},
        {"double", dtype::float64},   {"int", dtype::int32},          {"long", dtype::int64},
        {"cfloat", dtype::complex64}, {"cdouble", dtype::complex128}, {"bf16", dtype::bfloat16},
        {"f2", dtype::float16},       {"f4", dtype::float32},         {"f8", dtype::float64},
        {"i1", dtype::int8},          {"i2", dtype::int16},           {"i4", dtype::int32},
        {"i8", dtype::int64},         {"u1", dtype::uint8},           {"u2", dtype::uint16},
        {"u4", dtype::uint32},        {"u8", dtype::uint64},          {"c8", dtype::complex64},
        {"c16", dtype::complex128},   {"b1", dtype::bool_},
    };
    for (const auto& a : aliases)
        if (a.name == s) return a.t;
    ISTHMUS_THROW(type_error, "unknown dtype \"", s,
                  "\": expected one of bool, int8..int64, uint8..uint64, float16, bfloat16, "
                  "float32, float64, complex64, complex128");
}

std::ostream& operator<<(std::ostream& os, dtype t) {
    return os << name(t);
}

dtype real_dtype(dtype t) noexcept {
    if (t == dtype::complex64) return dtype::float32;
    if (t == dtype::complex128) return dtype::float64;
    return t;
}

dtype complex_dtype(dtype t) noexcept {
    if (is_complex(t)) return t;
    if (is_floating(t) && float_level(t) <= 2) return dtype::complex64;
    return dtype::complex128;
}

dtype promote_types(dtype a, dtype b) noexcept {
    if (is_complex(a) || is_complex(b)) {
        dtype r = promote_real(real_dtype(a), real_dtype(b));
        return complex_dtype(r);
    }
    return promote_real(a, b);
}

scalar_kind kind_of(dtype t) noexcept {
    if (is_bool(t)) return scalar_kind::boolean;
    if (is_integer(t)) return scalar_kind::integer;
    if (is_complex(t)) return scalar_kind::complex;
    return scalar_kind::floating;
}

dtype promote_with_scalar(dtype a, scalar_kind k) noexcept {
    switch (k) {
    case scalar_kind::boolean:
        return a;
    case scalar_kind::integer:
        return is_bool(a) ? dtype::int64 : a;
    case scalar_kind::floating:
        return is_inexact(a) ? a : dtype::float64;
    case scalar_kind::complex:
        return is_inexact(a) ? complex_dtype(a) : dtype::complex128;
    }
    return a;
}

bool can_cast_safely(dtype from, dtype to) noexcept {
    return promote_types(from, to) == to;
}

} // namespace isthmus
