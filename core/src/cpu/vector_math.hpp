// Internal: the SIMD loops of the transcendental functions (SLEEF), picked once for the CPU.
#pragma once

#include "cpu/elementwise_exec.hpp"

#include <cstdint>

namespace isthmus::cpu::vmath {

/// The functions with vector loops: unary ones take p[0] out, p[1] a; atan2 and pow take
/// p[0] out, p[1] a, p[2] b (Note [vector math]).
enum class fn : uint8_t {
    exp,
    log,
    log2,
    log10,
    expm1,
    log1p,
    sqrt,
    rsqrt,
    sin,
    cos,
    tan,
    asin,
    acos,
    atan,
    sinh,
    cosh,
    tanh,
    atan2,
    pow,
};
inline constexpr int fn_count = static_cast<int>(fn::pow) + 1;

/// An instruction set with vector loops. `none` means the scalar libm loops.
enum class isa : uint8_t { none, avx2, avx512 };

/// The loops of one instruction set, by function, for float32 and float64.
struct table {
    loop_fn f32[fn_count] = {};
    loop_fn f64[fn_count] = {};
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
