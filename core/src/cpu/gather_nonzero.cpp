// CPU nonzero: a parallel count per chunk, then each chunk writes its hits' coordinates at its
// prefix-sum position (so the result is the same for any thread count).
#include "cpu/gather.hpp"

namespace isthmus::cpu {

nonzero_counts count_nonzero(const uint8_t* mask, int64_t n) {
    const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
    const int64_t chunks = n >= parallel_grain ? std::max(1, threads) : 1;
    nonzero_counts c;
    c.bounds.resize(static_cast<size_t>(chunks) + 1);
    c.first.assign(static_cast<size_t>(chunks) + 1, 0);
    for (int64_t k = 0; k <= chunks; ++k) c.bounds[static_cast<size_t>(k)] = n * k / chunks;
#pragma omp parallel for if (chunks > 1) num_threads(static_cast <int>(chunks)) schedule(static)
    for (int64_t k = 0; k < chunks; ++k) {
        int64_t cnt = 0;
        const int64_t e = c.bounds[static_cast<size_t>(k) + 1];
        for (int64_t i = c.bounds[static_cast<size_t>(k)]; i < e; ++i) cnt += mask[i] != 0;
        c.first[static_cast<size_t>(k) + 1] = cnt;
    }
    for (size_t k = 1; k < c.first.size(); ++k) c.first[k] += c.first[k - 1];
    return c;
}

void write_nonzero(const nonzero_counts& counts, const uint8_t* mask, const shape_t& shape,
                   int64_t* const* outs, int64_t out_stride) {
    const auto chunks = static_cast<int64_t>(counts.bounds.size()) - 1;
    const int k = static_cast<int>(shape.size());
#pragma omp parallel for if (chunks > 1) num_threads(static_cast <int>(chunks)) schedule(static)
    for (int64_t c = 0; c < chunks; ++c) {
        int64_t i = counts.bounds[static_cast<size_t>(c)];
        const int64_t end = counts.bounds[static_cast<size_t>(c) + 1];
        int64_t pos = counts.first[static_cast<size_t>(c)] * out_stride;
        if (k == 1) {
            int64_t* o = outs[0];
            for (; i < end; ++i)
                if (mask[i]) {
                    o[pos] = i;
                    pos += out_stride;
                }
            continue;
        }
        // Coordinates of the chunk's first element: one division per dimension, then rows.
        int64_t idx[max_rank];
        int64_t rest = i;
        for (int d = k - 1; d >= 0; --d) {
            idx[d] = rest % shape[static_cast<size_t>(d)];
            rest /= shape[static_cast<size_t>(d)];
        }
        const int64_t last = shape[static_cast<size_t>(k) - 1];
        while (i < end) {
            const int64_t row_end = std::min(end, i + (last - idx[k - 1]));
            const int64_t col0 = idx[k - 1] - i; // column of element j is col0 + j
            for (; i < row_end; ++i)
                if (mask[i]) {
                    for (int d = 0; d < k - 1; ++d) outs[d][pos] = idx[d];
                    outs[k - 1][pos] = col0 + i;
                    pos += out_stride;
                }
            // Next row: reset the column and carry into the outer coordinates.
            idx[k - 1] = 0;
            for (int d = k - 2; d >= 0; --d) {
                if (++idx[d] < shape[static_cast<size_t>(d)]) break;
                idx[d] = 0;
            }
        }
    }
}

} // namespace isthmus::cpu
