// The exact matrix-product loop for dtypes BLAS lacks (integers, bool): blocked, i-k-j order.
#include "cpu/convert.hpp"
#include "cpu/matmul.hpp"
#include "isthmus/openmp_region.hpp"

#include <algorithm>
#include <omp.h>
#include <type_traits>

namespace isthmus::cpu {

namespace {

// Note [integer matmul]
// ~~~~~~~~~~~~~~~~~~~~~
// Integers accumulate in their unsigned counterpart, so overflow wraps as NumPy's does without
// signed-overflow undefined behaviour (the result modulo 2^bits does not depend on where the wrap
// happens); 8- and 16-bit products are formed in uint32 to avoid C++'s promotion to (signed) int.
// bool is or-of-ands. Floating types (only here when sizes exceed BLAS's 32-bit integers)
// accumulate in their own type.
template <typename T>
struct acc_type {
    using type = T;
};
template <>
struct acc_type<bool> {
    using type = uint8_t;
};
template <typename T>
requires std::is_integral_v<T> &&(!std::is_same_v<T, bool>)struct acc_type<T> {
    using type = std::make_unsigned_t<T>;
};
template <typename T>
using acc_t = typename acc_type<T>::type;

template <typename T>
acc_t<T> multiply_add(acc_t<T> c, T a, T b) {
    using U = acc_t<T>;
    if constexpr (std::is_same_v<T, bool>) {
        return static_cast<U>(c | (a & b));
    } else if constexpr (std::is_integral_v<T>) {
        using P = std::conditional_t<(sizeof(T) < 4), uint32_t, U>;
        return static_cast<U>(c + static_cast<U>(static_cast<P>(static_cast<U>(a)) *
                                                 static_cast<P>(static_cast<U>(b))));
    } else {
        return c + a * b;
    }
}

// Rows [r0, r1) of c (row stride n) = a @ b, tiled: a tile of c's columns and a block of k
// stay in cache while every row of the block streams over them; the inner loop runs along a
// row of b and of c (vectorised when b's rows are contiguous).
template <typename T>
void rows_as(int64_t r0, int64_t r1, int64_t n, int64_t k, const char* a, int64_t ars, int64_t acs,
             const char* b, int64_t brs, int64_t bcs, acc_t<T>* c) {
    using U = acc_t<T>;
    constexpr int64_t kb = 256, jb = 512;
    std::fill(c + r0 * n, c + r1 * n, U(0));
    for (int64_t j0 = 0; j0 < n; j0 += jb) {
        const int64_t w = std::min(jb, n - j0);
        for (int64_t k0 = 0; k0 < k; k0 += kb) {
            const int64_t ke = std::min(k, k0 + kb);
            for (int64_t i = r0; i < r1; ++i) {
                U* crow = c + i * n + j0;
                for (int64_t kk = k0; kk < ke; ++kk) {
                    const T av = *reinterpret_cast<const T*>(a + i * ars + kk * acs);
                    if constexpr (std::is_integral_v<T>)
                        if (av == T(0)) continue;
                    const char* brow = b + kk * brs + j0 * bcs;
                    if (bcs == static_cast<int64_t>(sizeof(T))) {
                        const T* bv = reinterpret_cast<const T*>(brow);
                        for (int64_t j = 0; j < w; ++j) crow[j] = multiply_add(crow[j], av, bv[j]);
                    } else {
                        for (int64_t j = 0; j < w; ++j)
                            crow[j] = multiply_add(crow[j], av,
                                                   *reinterpret_cast<const T*>(brow + j * bcs));
                    }
                }
            }
        }
    }
}

template <typename T>
void loop_as(int64_t m, int64_t n, int64_t k, const char* a, int64_t ars, int64_t acs,
             const char* b, int64_t brs, int64_t bcs, char* c) {
    if constexpr (is_half_v<T>) {
        ISTHMUS_ASSERT(false, "matmul_loop: half types are computed in float32");
    } else {
        // c holds T; U is T or its unsigned counterpart (same size and representation).
        auto* cu = reinterpret_cast<acc_t<T>*>(c);
        constexpr int64_t rb = 32;
        const int64_t blocks = (m + rb - 1) / rb;
        const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
        if (threads > 1 && blocks > 1 && m * n * k >= (int64_t{1} << 16)) {
            openmp_region([&] {
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
                for (int64_t blk = 0; blk < blocks; ++blk)
                    rows_as<T>(blk * rb, std::min(m, (blk + 1) * rb), n, k, a, ars, acs, b, brs,
                               bcs, cu);
            });
            return;
        }
        rows_as<T>(0, m, n, k, a, ars, acs, b, brs, bcs, cu);
    }
}

} // namespace

void matmul_loop(dtype dt, int64_t m, int64_t n, int64_t k, const char* a, int64_t a_rs,
                 int64_t a_cs, const char* b, int64_t b_rs, int64_t b_cs, char* c) {
    ISTHMUS_DISPATCH(dt, T, { loop_as<T>(m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, c); });
}

} // namespace isthmus::cpu
