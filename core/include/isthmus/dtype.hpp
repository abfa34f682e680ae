// Element types (dtypes): names, sizes, categories, NumPy promotion rules, and type dispatch.
#pragma once

#include "isthmus/error.hpp"
#include "isthmus/export.hpp"
#include "isthmus/half.hpp"

#include <complex>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

namespace isthmus {

/// The element types of tensors. The order is part of no ABI; use the names.
enum class dtype : uint8_t {
    bool_,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
    float16,
    bfloat16,
    float32,
    float64,
    complex64,
    complex128,
};

/// Number of dtypes.
inline constexpr int dtype_count = 15;

/// Size of one element in bytes.
ISTHMUS_API size_t itemsize(dtype t) noexcept;
/// NumPy's name of the dtype ("float32", "bool", "bfloat16", ...).
ISTHMUS_API std::string_view name(dtype t) noexcept;
/// Parses a dtype name: NumPy names, plus "float"/"double"/"half"/"int"/"long"/"cfloat"/
/// "cdouble" aliases. Throws type_error naming the unknown name.
ISTHMUS_API dtype parse_dtype(std::string_view s);
ISTHMUS_API std::ostream& operator<<(std::ostream& os, dtype t);

constexpr bool is_bool(dtype t) {
    return t == dtype::bool_;
}
constexpr bool is_signed_int(dtype t) {
    return t >= dtype::int8 && t <= dtype::int64;
}
constexpr bool is_unsigned_int(dtype t) {
    return t >= dtype::uint8 && t <= dtype::uint64;
}
/// Signed or unsigned integer (not bool).
constexpr bool is_integer(dtype t) {
    return is_signed_int(t) || is_unsigned_int(t);
}
/// Real floating point (float16, bfloat16, float32, float64).
constexpr bool is_floating(dtype t) {
    return t >= dtype::float16 && t <= dtype::float64;
}
constexpr bool is_complex(dtype t) {
    return t == dtype::complex64 || t == dtype::complex128;
}
/// Floating or complex.
constexpr bool is_inexact(dtype t) {
    return is_floating(t) || is_complex(t);
}

/// NumPy's promotion of two array dtypes (np.result_type on arrays). bfloat16 follows
/// PyTorch: with float16 it gives float32; it holds int8/uint8 exactly.
ISTHMUS_API dtype promote_types(dtype a, dtype b) noexcept;

/// The kind of a Python-style scalar operand, which promotes "weakly" (NumPy 2, NEP 50).
enum class scalar_kind : uint8_t { boolean, integer, floating, complex };
/// The kind of a dtype (bool < integer < floating < complex, in the enum's order): how a scalar
/// of that dtype promotes beside an array (promote_with_scalar).
ISTHMUS_API scalar_kind kind_of(dtype t) noexcept;
/// Promotion of an array dtype with a weak scalar: the array's dtype wins within its kind.
ISTHMUS_API dtype promote_with_scalar(dtype a, scalar_kind k) noexcept;

/// The real counterpart of a complex dtype (complex64 -> float32); others unchanged.
ISTHMUS_API dtype real_dtype(dtype t) noexcept;
/// The complex dtype holding a real dtype (float32 -> complex64, float64/ints -> complex128).
ISTHMUS_API dtype complex_dtype(dtype t) noexcept;
/// True when every value of `from` is representable in `to` (NumPy's can_cast "safe").
ISTHMUS_API bool can_cast_safely(dtype from, dtype to) noexcept;

using complex64_t = std::complex<float>;
using complex128_t = std::complex<double>;

/// C++ type -> dtype.
template <typename T>
struct dtype_of;
#define ISTHMUS_DTYPE_OF(CT, DT)                                                                   \
    template <>                                                                                    \
    struct dtype_of<CT> {                                                                          \
        static constexpr dtype value = dtype::DT;                                                  \
    };
ISTHMUS_DTYPE_OF(bool, bool_)
ISTHMUS_DTYPE_OF(int8_t, int8)
ISTHMUS_DTYPE_OF(int16_t, int16)
ISTHMUS_DTYPE_OF(int32_t, int32)
ISTHMUS_DTYPE_OF(int64_t, int64)
ISTHMUS_DTYPE_OF(uint8_t, uint8)
ISTHMUS_DTYPE_OF(uint16_t, uint16)
ISTHMUS_DTYPE_OF(uint32_t, uint32)
ISTHMUS_DTYPE_OF(uint64_t, uint64)
ISTHMUS_DTYPE_OF(float16_t, float16)
ISTHMUS_DTYPE_OF(bfloat16_t, bfloat16)
ISTHMUS_DTYPE_OF(float, float32)
ISTHMUS_DTYPE_OF(double, float64)
ISTHMUS_DTYPE_OF(complex64_t, complex64)
ISTHMUS_DTYPE_OF(complex128_t, complex128)
#undef ISTHMUS_DTYPE_OF
template <typename T>
inline constexpr dtype dtype_of_v = dtype_of<T>::value;

} // namespace isthmus

/// Runs the statements in __VA_ARGS__ with `T` bound to the C++ type of dtype `DT`.
/// Example: ISTHMUS_DISPATCH(t.dtype(), T, { fill<T>(...); });
#define ISTHMUS_DISPATCH_CASE(DT, CT, T, ...)                                                      \
    case ::isthmus::dtype::DT: {                                                                   \
        using T = CT;                                                                              \
        __VA_ARGS__;                                                                               \
        break;                                                                                     \
    }
#define ISTHMUS_DISPATCH(DTYPE, T, ...)                                                            \
    switch (DTYPE) {                                                                               \
        ISTHMUS_DISPATCH_CASE(bool_, bool, T, __VA_ARGS__)                                         \
        ISTHMUS_DISPATCH_CASE(int8, int8_t, T, __VA_ARGS__)                                        \
        ISTHMUS_DISPATCH_CASE(int16, int16_t, T, __VA_ARGS__)                                      \
        ISTHMUS_DISPATCH_CASE(int32, int32_t, T, __VA_ARGS__)                                      \
        ISTHMUS_DISPATCH_CASE(int64, int64_t, T, __VA_ARGS__)                                      \
        ISTHMUS_DISPATCH_CASE(uint8, uint8_t, T, __VA_ARGS__)                                      \
        ISTHMUS_DISPATCH_CASE(uint16, uint16_t, T, __VA_ARGS__)                                    \
        ISTHMUS_DISPATCH_CASE(uint32, uint32_t, T, __VA_ARGS__)                                    \
        ISTHMUS_DISPATCH_CASE(uint64, uint64_t, T, __VA_ARGS__)                                    \
        ISTHMUS_DISPATCH_CASE(float16, ::isthmus::float16_t, T, __VA_ARGS__)                       \
        ISTHMUS_DISPATCH_CASE(bfloat16, ::isthmus::bfloat16_t, T, __VA_ARGS__)                     \
        ISTHMUS_DISPATCH_CASE(float32, float, T, __VA_ARGS__)                                      \
        ISTHMUS_DISPATCH_CASE(float64, double, T, __VA_ARGS__)                                     \
        ISTHMUS_DISPATCH_CASE(complex64, ::isthmus::complex64_t, T, __VA_ARGS__)                   \
        ISTHMUS_DISPATCH_CASE(complex128, ::isthmus::complex128_t, T, __VA_ARGS__)                 \
    }
