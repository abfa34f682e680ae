// CPU kernels: floor division and Python-style modulo (the element functions:
// kernels/element_functions.hpp).
#include "cpu/elementwise_loops.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace isthmus::cpu {

namespace {

// Note [division by a scalar integer]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// `x // 7` and `x % 7` on an integer array divide every element by the same number, and a hardware
// division costs 20-40 cycles where NumPy's loop (libdivide's multiplications) takes a few. For 8-,
// 16- and 32-bit integers the quotient here is trunc(double(a) * (1 / double(b))): both factors
// carry a relative error below 2^-52, and a quotient a / b that is not an integer lies at least 1 /
// |a| >= 2^-32 (relative) from the nearest one, so the truncation is exact, except that an exact
// integer quotient may come out one below (toward zero). Then r = a - q b (in 32 bits: it fits)
// equals +-b in that case, which moves q by one, and Python's floor convention moves q down and r
// by b when r and b differ in sign. The same values as elem::int_floor_div and elem::int_mod, a
// loop GCC vectorises (conversions, multiplications, compares). Divisors 0, -1 and the type's
// minimum keep the element functions (their special values). (always inlined: each clone of
// binary_loop, Note [avx2 clones], must hold its own copy)
template <typename T, bool Mod>
[[gnu::always_inline]] inline bool int_by_scalar(T* o, const T* a, T b, int64_t n) {
    if constexpr (!is_int_v<T> || sizeof(T) > 4) {
        return false;
    } else {
        constexpr bool sig = std::is_signed_v<T>;
        using W = std::conditional_t<sig, int32_t, uint32_t>;
        if (b == 0) return false;
        if constexpr (sig)
            if (b == T(-1) || b == std::numeric_limits<T>::min()) return false;
        const double inv = 1.0 / static_cast<double>(b);
        const W bw = static_cast<W>(b);
        for (int64_t i = 0; i < n; ++i) {
            const W x = static_cast<W>(a[i]);
            W q = static_cast<W>(static_cast<double>(x) * inv);
            W r = static_cast<W>(static_cast<uint32_t>(x) -
                                 static_cast<uint32_t>(q) * static_cast<uint32_t>(bw));
            // branch-free (0/1 factors), so that every instance vectorises
            const W up = static_cast<W>(r == bw);
            q = static_cast<W>(q + up);
            r = static_cast<W>(r - up * bw);
            if constexpr (sig) {
                const W down = static_cast<W>(r == static_cast<W>(-bw));
                q = static_cast<W>(q - down);
                r = static_cast<W>(r + down * bw);
                const W floor = static_cast<W>((r != 0) & ((r ^ bw) < 0));
                q = static_cast<W>(q - floor);
                r = static_cast<W>(r + floor * bw);
            }
            o[i] = static_cast<T>(Mod ? r : q);
        }
        return true;
    }
}

// The element functors, by op (Note [element functors by op]).
template <binary_op OP>
struct fn;

template <>
struct fn<binary_op::floor_div> {
    static constexpr int64_t grain = expensive_grain;
    template <typename T>
    static constexpr bool supports = is_int_v<T> || is_real_v<T>;
    template <typename T>
    static T apply(T a, T b) {
        if constexpr (is_int_v<T>)
            return elem::int_floor_div(a, b);
        else
            return elem::float_floor_div(a, b);
    }
    template <typename T>
    [[gnu::always_inline]] static bool by_scalar(T* o, const T* a, T b, int64_t n) {
        return int_by_scalar<T, false>(o, a, b, n);
    }
};

template <>
struct fn<binary_op::mod> {
    static constexpr int64_t grain = expensive_grain;
    template <typename T>
    static constexpr bool supports = is_int_v<T> || is_real_v<T>;
    template <typename T>
    static T apply(T a, T b) {
        if constexpr (is_int_v<T>)
            return elem::int_mod(a, b);
        else
            return elem::float_mod(a, b);
    }
    template <typename T>
    [[gnu::always_inline]] static bool by_scalar(T* o, const T* a, T b, int64_t n) {
        return int_by_scalar<T, true>(o, a, b, n);
    }
};

} // namespace

kernel divmod_kernel(binary_op op, dtype k) {
    return binary_kernel_by_op<fn, is_divmod_family>(op, k);
}

} // namespace isthmus::cpu
