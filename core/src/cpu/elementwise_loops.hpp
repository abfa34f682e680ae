// Internal: inner-loop templates for elementwise kernels, with contiguous and broadcast fast paths.
#pragma once

#include "cpu/convert.hpp"
#include "cpu/elementwise_exec.hpp"
#include "kernels/element_functions.hpp"

#include <type_traits>
#include <utility>

namespace isthmus::cpu {

template <typename T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <typename T>
inline constexpr bool is_real_v = std::is_same_v<T, float> || std::is_same_v<T, double>;

using elem::wrap_neg;
using elem::wrap_t;

// Note [inner loops]
// ~~~~~~~~~~~~~~~~~~
// A kernel's loop is one function per (op, kernel dtype), called once per row or block with byte
// strides. The first branches are the layouts that matter for speed: every operand contiguous (a
// plain indexed loop GCC vectorises at -O3), and one input a broadcast scalar (stride 0, hoisted
// out of the loop). The last branch walks any strides. Ops are stateless functors whose apply()
// inlines into these loops: no per-element calls through pointers.

/// How a T is loaded and stored in the loops: bool as its byte, so that GCC vectorises bool
/// loops (it has no vector type for bool; `bool(byte)` becomes a vector compare).
template <typename T>
using mem_t = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

// Note [avx2 clones]
// ~~~~~~~~~~~~~~~~~~
// The library is built for baseline x86-64 (SSE2) so that it runs on any x86-64 machine, but the
// elementwise loops are where SIMD width pays (small ops live in the cache, large ones are
// memory-bound either way). ISTHMUS_SIMD_CLONES makes GCC emit an AVX2 clone of each loop beside
// the baseline one and pick between them once, at load time (an ifunc), from the CPU's features.
// AVX2 without FMA: no contraction, so results are bit-identical to the baseline loop's.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__CUDACC__)
#define ISTHMUS_SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define ISTHMUS_SIMD_CLONES
#endif

/// The loop of binary functor F on T: p[0] out (F's result type), p[1] a, p[2] b.
template <typename F, typename T>
ISTHMUS_SIMD_CLONES void binary_loop(char** p, const int64_t* s, int64_t n) {
    using R = decltype(F::apply(std::declval<T>(), std::declval<T>()));
    using MT = mem_t<T>;
    using MR = mem_t<R>;
    constexpr auto st = static_cast<int64_t>(sizeof(T));
    constexpr auto sr = static_cast<int64_t>(sizeof(R));
    if (s[0] == sr) {
        MR* o = reinterpret_cast<MR*>(p[0]);
        const MT* a = reinterpret_cast<const MT*>(p[1]);
        const MT* b = reinterpret_cast<const MT*>(p[2]);
        if (s[1] == st && s[2] == st) {
            for (int64_t i = 0; i < n; ++i)
                o[i] = static_cast<MR>(F::apply(static_cast<T>(a[i]), static_cast<T>(b[i])));
            return;
        }
        if (s[1] == st && s[2] == 0) {
            const T bv = static_cast<T>(*b);
            // an op with a loop of its own for a scalar second operand (a divisor)
            if constexpr (requires { F::by_scalar(o, a, bv, n); })
                if (F::by_scalar(o, a, bv, n)) return;
            for (int64_t i = 0; i < n; ++i)
                o[i] = static_cast<MR>(F::apply(static_cast<T>(a[i]), bv));
            return;
        }
        if (s[1] == 0 && s[2] == st) {
            const T av = static_cast<T>(*a);
            for (int64_t i = 0; i < n; ++i)
                o[i] = static_cast<MR>(F::apply(av, static_cast<T>(b[i])));
            return;
        }
    }
    char* o = p[0];
    const char* a = p[1];
    const char* b = p[2];
    for (int64_t i = 0; i < n; ++i, o += s[0], a += s[1], b += s[2])
        *reinterpret_cast<MR*>(o) =
            static_cast<MR>(F::apply(static_cast<T>(*reinterpret_cast<const MT*>(a)),
                                     static_cast<T>(*reinterpret_cast<const MT*>(b))));
}

/// The loop of unary functor F on T: p[0] out, p[1] a.
template <typename F, typename T>
ISTHMUS_SIMD_CLONES void unary_loop(char** p, const int64_t* s, int64_t n) {
    using R = decltype(F::apply(std::declval<T>()));
    using MT = mem_t<T>;
    using MR = mem_t<R>;
    constexpr auto st = static_cast<int64_t>(sizeof(T));
    constexpr auto sr = static_cast<int64_t>(sizeof(R));
    if (s[0] == sr && s[1] == st) {
        MR* o = reinterpret_cast<MR*>(p[0]);
        const MT* a = reinterpret_cast<const MT*>(p[1]);
        for (int64_t i = 0; i < n; ++i) o[i] = static_cast<MR>(F::apply(static_cast<T>(a[i])));
        return;
    }
    char* o = p[0];
    const char* a = p[1];
    for (int64_t i = 0; i < n; ++i, o += s[0], a += s[1])
        *reinterpret_cast<MR*>(o) =
            static_cast<MR>(F::apply(static_cast<T>(*reinterpret_cast<const MT*>(a))));
}

/// The kernel of binary functor F for kernel type T, or an empty kernel when F::supports<T> is
/// false (so unsupported combinations are never instantiated).
template <typename F, typename T>
kernel binary_kernel_of(int64_t grain) {
    if constexpr (F::template supports<T>) {
        using R = decltype(F::apply(std::declval<T>(), std::declval<T>()));
        return {&binary_loop<F, T>, dtype_of_v<R>, grain};
    } else {
        return {};
    }
}

/// The kernel of unary functor F for kernel type T (empty when unsupported).
template <typename F, typename T>
kernel unary_kernel_of(int64_t grain) {
    if constexpr (F::template supports<T>) {
        using R = decltype(F::apply(std::declval<T>()));
        return {&unary_loop<F, T>, dtype_of_v<R>, grain};
    } else {
        return {};
    }
}

/// Calls `pick.template operator()<T>()` with T the C++ type of kernel dtype `k` (every dtype
/// but the half types, which compute as float32) and returns its kernel.
template <typename Pick>
kernel for_kernel_dtype(dtype k, Pick&& pick) {
    switch (k) {
    case dtype::bool_:
        return pick.template operator()<bool>();
    case dtype::int8:
        return pick.template operator()<int8_t>();
    case dtype::int16:
        return pick.template operator()<int16_t>();
    case dtype::int32:
        return pick.template operator()<int32_t>();
    case dtype::int64:
        return pick.template operator()<int64_t>();
    case dtype::uint8:
        return pick.template operator()<uint8_t>();
    case dtype::uint16:
        return pick.template operator()<uint16_t>();
    case dtype::uint32:
        return pick.template operator()<uint32_t>();
    case dtype::uint64:
        return pick.template operator()<uint64_t>();
    case dtype::float32:
        return pick.template operator()<float>();
    case dtype::float64:
        return pick.template operator()<double>();
    case dtype::complex64:
        return pick.template operator()<complex64_t>();
    case dtype::complex128:
        return pick.template operator()<complex128_t>();
    default:
        return {};
    }
}

/// The kernel of binary functor F for kernel dtype k.
template <typename F>
kernel binary_kernel_for(dtype k, int64_t grain = parallel_grain) {
    return for_kernel_dtype(k, [grain]<typename T>() { return binary_kernel_of<F, T>(grain); });
}

/// The kernel of unary functor F for kernel dtype k.
template <typename F>
kernel unary_kernel_for(dtype k, int64_t grain = parallel_grain) {
    return for_kernel_dtype(k, [grain]<typename T>() { return unary_kernel_of<F, T>(grain); });
}

// Note [element functors by op]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Each kernel family file (elementwise_math.cpp, ...) defines its ops' functors as specialisations
// Fn<op> of a template of its own, and picks them with the switches below, which are the op table's
// rows (op_table.hpp): a new row needs its functor, not a case. A family handles the ops its
// predicate In selects (by the row's rule) and gives an empty kernel for the others, whose Fn<op>
// is then never instantiated. A functor may set `static constexpr int64_t grain` (expensive_grain
// for libm-bound ops).

/// The multi-threading grain of functor F: F::grain, else parallel_grain.
template <typename F>
constexpr int64_t grain_of() {
    if constexpr (requires { F::grain; })
        return F::grain;
    else
        return parallel_grain;
}

/// The kernel of Fn<op> for kernel dtype k when In(op), else an empty kernel.
template <template <unary_op> class Fn, bool (*In)(unary_op)>
kernel unary_kernel_by_op(unary_op op, dtype k) {
    switch (op) {
#define ISTHMUS_CASE(n, ...)                                                                       \
    case unary_op::n:                                                                              \
        if constexpr (In(unary_op::n))                                                             \
            return unary_kernel_for<Fn<unary_op::n>>(k, grain_of<Fn<unary_op::n>>());              \
        else                                                                                       \
            return {};
        ISTHMUS_UNARY_OPS(ISTHMUS_CASE)
#undef ISTHMUS_CASE
    default:
        return {};
    }
}

/// The kernel of Fn<op> for kernel dtype k when In(op), else an empty kernel.
template <template <binary_op> class Fn, bool (*In)(binary_op)>
kernel binary_kernel_by_op(binary_op op, dtype k) {
    switch (op) {
#define ISTHMUS_CASE(n, ...)                                                                       \
    case binary_op::n:                                                                             \
        if constexpr (In(binary_op::n))                                                            \
            return binary_kernel_for<Fn<binary_op::n>>(k, grain_of<Fn<binary_op::n>>());           \
        else                                                                                       \
            return {};
        ISTHMUS_BINARY_OPS(ISTHMUS_CASE)
#undef ISTHMUS_CASE
    }
    return {};
}

} // namespace isthmus::cpu
