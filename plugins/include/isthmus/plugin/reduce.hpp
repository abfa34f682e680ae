// Reductions for kernel bodies: a row's sum in a fixed order that vectorises.
#pragma once

#include "isthmus/plugin/device.hpp"

namespace isthmus::plugin {

// Note [row sums in kernels]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// A kernel that reduces a row (`for (j...) s += x(i, j)`) adds in order, so every addition waits
// for the one before it: the compiler may not reorder floating-point additions without fast math,
// so the loop neither vectorises nor hides the adder's latency, and runs at a few floats per
// nanosecond where memory delivers ten times more (a 4096x4096 float32 row sum: 9 ms here against
// NumPy's 7 ms and fast math's 3.5 ms). row_sum() writes the reordering out instead of leaving it
// to the compiler: eight partial sums, each over every eighth element of a block of 128, added
// pairwise at the end of the block, and the blocks' sums merged pairwise as they complete (a
// binary counter: blocks 0 and 1, then 2 and 3, then the two pairs, ...). That order is part of
// the function, so
//  - the compiler keeps it: the eight partial sums are eight lanes of one vector add, with no
//    fast math (and the same bits with or without it);
//  - the result is the same on every machine and thread count, and the same for every stride
//    (a strided row takes the scalar path in the same order);
//  - the rounding error grows with the logarithm of the length, as in NumPy's pairwise sum,
//    not linearly as in a running sum.
// Views of active numbers (a derived kernel, Note [derived kernels]) sum in the same order
// through their own element access.

// Note [row sums under Clang]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// GCC turns the eight partial sums into one eight-lane vector add. Clang's SLP vectoriser, led by
// the pairwise sum at the end of the block, grouped them into four two-lane vectors with a shuffle
// per load, and the 4096x4096 row sum took 1.3-1.5x GCC's time. Under Clang the partial sums of a
// float or double row are one vector (Clang's ext_vector_type) and the block's pairwise sum two
// shuffled vector adds: the same additions of the same operands in the same order, so the same
// bits, written as the eight-lane add GCC finds itself; and the sum's functions are inlined into
// the loop as under GCC (See Note [the body inlined under Clang]). The same kernel built by both
// compilers, alternating in one process: 3.88-3.93 ms against GCC's 3.83-3.89 ms on one
// thread, 2.37-2.47 against 2.37-2.51 ms on two.

namespace detail {

inline constexpr int k_sum_lanes = 8;
inline constexpr int64_t k_sum_block = 128;

/// The eight partial sums of get(0..j-1) for the largest multiple j of k_sum_lanes <= n (n >=
/// k_sum_lanes), lane k summing the elements k, k + 8, ..., added pairwise as Note [row sums in
/// kernels] says; `j` is set.
template <typename T, typename Get>
ISTHMUS_PLUGIN_CLANG_INLINE ISTHMUS_HD T lane_sums(int64_t n, const Get& get, int64_t& j) {
#if defined(__clang__) && !defined(__CUDACC__)
    // the same additions on a vector of the eight partial sums: See Note [row sums under Clang]
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        using lanes = T __attribute__((ext_vector_type(k_sum_lanes)));
        lanes acc;
        for (int k = 0; k < k_sum_lanes; ++k) acc[k] = get(k);
        for (j = k_sum_lanes; j + k_sum_lanes <= n; j += k_sum_lanes) {
            lanes x;
            for (int k = 0; k < k_sum_lanes; ++k) x[k] = get(j + k);
            acc += x;
        }
        // ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)) as two vector adds and one scalar
        const auto pairs = __builtin_shufflevector(acc, acc, 0, 2, 4, 6) +
                           __builtin_shufflevector(acc, acc, 1, 3, 5, 7);
        const auto quads = __builtin_shufflevector(pairs, pairs, 0, 2) +
                           __builtin_shufflevector(pairs, pairs, 1, 3);
        return quads[0] + quads[1];
    } else
#endif
    {
        T acc[k_sum_lanes];
        for (int k = 0; k < k_sum_lanes; ++k) acc[k] = get(k);
        for (j = k_sum_lanes; j + k_sum_lanes <= n; j += k_sum_lanes)
            for (int k = 0; k < k_sum_lanes; ++k) acc[k] = acc[k] + get(j + k);
        return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    }
}

/// The sum of `n` <= k_sum_block elements get(0..n-1), in the order of Note [row sums in kernels].
template <typename T, typename Get>
ISTHMUS_PLUGIN_CLANG_INLINE ISTHMUS_HD T block_sum(int64_t n, const Get& get) {
    if (n < k_sum_lanes) {
        T r = T(0);
        for (int64_t j = 0; j < n; ++j) r = r + get(j);
        return r;
    }
    int64_t j = 0;
    T r = lane_sums<T>(n, get, j);
    for (; j < n; ++j) r = r + get(j);
    return r;
}

/// The sum of get(0..n-1): blocks of k_sum_block merged pairwise as they complete.
template <typename T, typename Get>
ISTHMUS_PLUGIN_CLANG_INLINE ISTHMUS_HD T pairwise_sum(int64_t n, const Get& get) {
    if (n <= k_sum_block) return block_sum<T>(n, get);
    // the sums of complete groups of blocks, largest first: one group per set bit of `count`
    T stack[64];
    int depth = 0;
    int64_t count = 0;
    int64_t j = 0;
    for (; j + k_sum_block <= n; j += k_sum_block) {
        T s = block_sum<T>(k_sum_block, [&](int64_t k) { return get(j + k); });
        // merge while the completed blocks pair up (the trailing one bits of count)
        for (int64_t c = count; c & 1; c >>= 1) s = stack[--depth] + s;
        stack[depth++] = s;
        ++count;
    }
    // the partial block, if any, then the unpaired sums from the smallest: s_0 + (... + tail)
    T r = j < n ? block_sum<T>(n - j, [&](int64_t k) { return get(j + k); }) : stack[--depth];
    while (depth > 0) r = stack[--depth] + r;
    return r;
}

} // namespace detail

/// The sum of a view's elements along its last dimension at the leading indices `idx...`:
/// `row_sum(x, i)` is x(i, 0) + x(i, 1) + ... for a matrix view x, added in a fixed order that
/// vectorises without fast math and keeps the rounding error of a pairwise sum (See Note [row
/// sums in kernels]). The leading indices go through the view's access modifier and, in checked
/// mode, its bounds check; a row of length 0 sums to 0.
template <typename V, typename... I>
ISTHMUS_PLUGIN_CLANG_INLINE ISTHMUS_HD auto row_sum(const V& x, I... idx) {
    static_assert(sizeof...(I) + 1 == V::rank, "row_sum: one index per leading dimension");
    using T = typename V::value_type;
    const int64_t n = x.size(V::rank - 1);
    if (n == 0) return T(0);
    if constexpr (requires { x.data(); }) {
        const auto* p = &x(idx..., int64_t{0}); // checks the leading indices (and the row)
        const int64_t s = x.stride(V::rank - 1);
        if (s == 1) return detail::pairwise_sum<T>(n, [p](int64_t j) -> T { return p[j]; });
        return detail::pairwise_sum<T>(n, [p, s](int64_t j) -> T { return p[j * s]; });
    } else {
        return detail::pairwise_sum<T>(n, [&](int64_t j) -> T { return x(idx..., j); });
    }
}

} // namespace isthmus::plugin
