// The CUDA gather/scatter's element addressing (host-callable for tests).
#pragma once

#include "cuda/device_types.cuh"

#include <cstdint>

namespace isthmus::cudak {

/// Element e of a rows x rest gather or scatter (Note [gpu index rows]): its byte offset `oa`
/// on the row-indexed side (row_off[r] plus the rest position's `a` strides) and `ob` on the
/// dense side (r * b_row plus the `b` strides); the rest index varies fastest (C order).
ISTHMUS_HD inline void index_offsets(const rest_layout& g, const int64_t* row_off, int64_t b_row,
                                     int64_t e, int64_t& oa, int64_t& ob) {
    const int64_t r = e / g.numel;
    int64_t i = e % g.numel;
    oa = row_off[r];
    ob = r * b_row;
    for (int d = g.rank - 1; d >= 0; --d) {
        const int64_t q = i % g.shape[d];
        i /= g.shape[d];
        oa += q * g.a[d];
        ob += q * g.b[d];
    }
}

} // namespace isthmus::cudak
