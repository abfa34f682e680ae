// Internal: the SIMD loops of the transcendental functions (SLEEF, glibc's libmvec), picked once.
#pragma once

#include "cpu/elementwise.hpp"

#include <cstdint>
#include <optional>

namespace isthmus::cpu::vmath {

// clang-format off
/// The unary functions with vector loops, by the name of their op (isthmus::unary_op).
#define ISTHMUS_VMATH_UNARY(X) X(exp) X(exp2) X(log) X(log2) X(log10) X(expm1) X(log1p) X(sqrt) \
    X(rsqrt) X(cbrt) X(sin) X(cos) X(tan) X(asin) X(acos) X(atan) X(sinh) X(cosh) X(tanh) \
    X(asinh) X(acosh) X(atanh) X(erf) X(erfc)
/// The binary functions with vector loops, by the name of their op (isthmus::binary_op).
#define ISTHMUS_VMATH_BINARY(X) X(atan2) X(pow)
// clang-format on

#define ISTHMUS_VMATH_ENUMERATOR(f) f,
/// The functions with vector loops: unary ones take p[0] out, p[1] a; atan2 and pow take
/// p[0] out, p[1] a, p[2] b (Note [vector math]).
enum class fn : uint8_t {
    ISTHMUS_VMATH_UNARY(ISTHMUS_VMATH_ENUMERATOR) ISTHMUS_VMATH_BINARY(ISTHMUS_VMATH_ENUMERATOR)
};
#undef ISTHMUS_VMATH_ENUMERATOR
inline constexpr int fn_count = static_cast<int>(fn::pow) + 1;

/// The vector function of a unary op (the one of the same name), if it has one.
constexpr std::optional<fn> vector_fn(unary_op op) {
    switch (op) {
#define ISTHMUS_VMATH_CASE(f)                                                                      \
    case unary_op::f:                                                                              \
        return fn::f;
        ISTHMUS_VMATH_UNARY(ISTHMUS_VMATH_CASE)
#undef ISTHMUS_VMATH_CASE
    default:
        return std::nullopt;
    }
}
/// The vector function of a binary op (the one of the same name), if it has one.
constexpr std::optional<fn> vector_fn(binary_op op) {
    switch (op) {
#define ISTHMUS_VMATH_CASE(f)                                                                      \
    case binary_op::f:                                                                             \
        return fn::f;
        ISTHMUS_VMATH_BINARY(ISTHMUS_VMATH_CASE)
#undef ISTHMUS_VMATH_CASE
    default:
        return std::nullopt;
    }
}

/// An instruction set with vector loops. `none` means the scalar libm loops.
enum class isa : uint8_t { none, avx2, avx512 };

/// Where a loop's element function comes from, and the accuracy its library documents.
struct source {
    const char* library = nullptr; ///< "sleef_u10", "sleef_u15", "sleef_u35", "libmvec",
                                   ///< "instruction" (sqrt, rsqrt) or "float64" (float32 pow)
    double bound_ulp = 0;          ///< the documented error bound, in ulp of the result
};

/// The loops of one instruction set, by function, for float32 and float64, with their sources
/// (Note [vector math sources] in simd/vector_math_loops.hpp).
struct table {
    loop_fn f32[fn_count] = {};
    loop_fn f64[fn_count] = {};
    source src32[fn_count] = {};
    source src64[fn_count] = {};
};

/// The table of `set`, or nullptr when the library was built without it (no SLEEF, not x86-64)
/// or this CPU cannot run it.
const table* table_for(isa set) noexcept;

/// The instruction set the kernels use: the widest this CPU runs, unless ISTHMUS_SIMD names a
/// narrower one ("avx2", "none"; read once, at the first use).
isa active() noexcept;

/// The active loop for `f` on float32 (`f64` false) or float64, or nullptr (use libm).
loop_fn loop(fn f, bool f64) noexcept;

/// "avx512", "avx2" or "none".
const char* name(isa set) noexcept;

} // namespace isthmus::cpu::vmath
