// The matrix-product kernel's element steps: operand and accumulator types, multiply-add, store.
#pragma once

#include "cuda/device_types.cuh"
#include "cuda/elementwise_ops.cuh"

namespace isthmus::cudak {

// Note [integer gemm]
// ~~~~~~~~~~~~~~~~~~~
// The CPU's exact loop (Note [integer matmul] in core/src/cpu/matmul_fallback.cpp): integers
// accumulate in an unsigned type of at least 32 bits, so products and sums wrap modulo 2^bits
// without signed-overflow undefined behaviour, and the result, cast back to the dtype, is the same
// modulo 2^width whatever the summation order; bool is or-of-ands. Floats: half types load as float
// and accumulate in float (Note [half gemm] in backend.cpp), float32/float64 in their type, complex
// with the plain product formula (as BLAS).

/// The type operands and the accumulator of the gemm kernel are held in for kdt K.
template <kdt K, bool Int = is_int(K)>
struct gemm_type {
    using type = compute_t<K>; // b8: its byte
};
template <kdt K>
struct gemm_type<K, true> {
    using type = wrap_t<storage_t<K>>;
};
template <kdt K>
using gemm_t = typename gemm_type<K>::type;

template <kdt K>
ISTHMUS_HD inline gemm_t<K> gemm_zero() {
    if constexpr (is_cplx(K))
        return gemm_t<K>{0, 0};
    else
        return gemm_t<K>(0);
}

/// A stored element as a gemm operand.
template <kdt K>
ISTHMUS_HD inline gemm_t<K> gemm_load(storage_t<K> x) {
    if constexpr (K == kdt::b8 || is_int(K))
        return static_cast<gemm_t<K>>(x);
    else
        return up<K>(x);
}

/// acc + x * y in the gemm type (or-of-ands for bool).
template <kdt K>
ISTHMUS_HD inline gemm_t<K> gemm_fma(gemm_t<K> acc, gemm_t<K> x, gemm_t<K> y) {
    using G = gemm_t<K>;
    if constexpr (K == kdt::b8) {
        return static_cast<G>(acc | (x & y));
    } else if constexpr (is_cplx(K)) {
        const G p = cmul(x, y);
        return G{acc.re + p.re, acc.im + p.im};
    } else {
        return static_cast<G>(acc + static_cast<G>(x * y));
    }
}

/// The accumulator stored as kdt K (integers wrap to their width; half types round once).
template <kdt K>
ISTHMUS_HD inline storage_t<K> gemm_store(gemm_t<K> acc) {
    if constexpr (K == kdt::b8 || is_int(K))
        return static_cast<storage_t<K>>(acc);
    else
        return down<K>(acc);
}

} // namespace isthmus::cudak
