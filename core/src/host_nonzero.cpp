// Host-side nonzero: parallel per-chunk counts, then each chunk writes its hits' coordinates.
#include "cpu/strided_loop.hpp"
#include "host_indexing.hpp"
#include "isthmus/openmp_region.hpp"

namespace isthmus::host {

using cpu::parallel_grain;

namespace {

// body(k) for every chunk k: one chunk on the calling thread, more over a team of that size.
template <typename F>
void for_chunks(int64_t chunks, F&& body) {
    if (chunks <= 1) {
        for (int64_t k = 0; k < chunks; ++k) body(k);
        return;
    }
    openmp_region([&] {
#pragma omp parallel for num_threads(static_cast <int>(chunks)) schedule(static)
        for (int64_t k = 0; k < chunks; ++k) body(k);
    });
}

} // namespace

nonzero_counts count_nonzero(const uint8_t* mask, int64_t n) {
    const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
    const int64_t chunks = n >= parallel_grain ? std::max(1, threads) : 1;
    nonzero_counts c;
    c.bounds.resize(static_cast<size_t>(chunks) + 1);
    c.first.assign(static_cast<size_t>(chunks) + 1, 0);
    for (int64_t k = 0; k <= chunks; ++k) c.bounds[static_cast<size_t>(k)] = n * k / chunks;
    for_chunks(chunks, [&](int64_t k) {
        int64_t cnt = 0;
        const int64_t e = c.bounds[static_cast<size_t>(k) + 1];
        for (int64_t i = c.bounds[static_cast<size_t>(k)]; i < e; ++i) cnt += mask[i] != 0;
        c.first[static_cast<size_t>(k) + 1] = cnt;
    });
    for (size_t k = 1; k < c.first.size(); ++k) c.first[k] += c.first[k - 1];
    return c;
}

// Note [branch-free nonzero]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// Each element's coordinates are stored at the next output slot and the slot advances only on a
// hit, so a random mask costs no mispredicted branches. A chunk stops once its last hit is written,
// so no store lands in the next chunk's slots.
void write_nonzero(const nonzero_counts& counts, const uint8_t* mask, const shape_t& shape,
                   int64_t* const* outs, int64_t out_stride) {
    const auto chunks = static_cast<int64_t>(counts.bounds.size()) - 1;
    const int k = static_cast<int>(shape.size());
    int64_t dims[max_rank];
    for (int d = 0; d < k; ++d) dims[d] = shape[static_cast<size_t>(d)];
    for_chunks(chunks, [&](int64_t c) {
        int64_t i = counts.bounds[static_cast<size_t>(c)];
        const int64_t end = counts.bounds[static_cast<size_t>(c) + 1];
        int64_t h = counts.first[static_cast<size_t>(c)];
        const int64_t limit = counts.first[static_cast<size_t>(c) + 1];
        const int64_t os = out_stride;
        if (k == 1) {
            int64_t* const o = outs[0];
            for (; i < end && h < limit; ++i) {
                o[h * os] = i;
                h += mask[i] != 0;
            }
            return;
        }
        // Coordinates of the chunk's first element: one division per dimension, then rows.
        int64_t idx[max_rank];
        int64_t rest = i;
        for (int d = k - 1; d >= 0; --d) {
            idx[d] = rest % dims[d];
            rest /= dims[d];
        }
        int64_t* const inner = outs[k - 1];
        while (i < end && h < limit) {
            const int64_t row_end = std::min(end, i + (dims[k - 1] - idx[k - 1]));
            const int64_t col0 = idx[k - 1] - i; // the column of element j is col0 + j
            for (; i < row_end && h < limit; ++i) {
                for (int d = 0; d < k - 1; ++d) outs[d][h * os] = idx[d];
                inner[h * os] = col0 + i;
                h += mask[i] != 0;
            }
            // Next row: reset the column and carry into the outer coordinates.
            idx[k - 1] = 0;
            for (int d = k - 2; d >= 0; --d) {
                if (++idx[d] < dims[d]) break;
                idx[d] = 0;
            }
        }
    });
}

} // namespace isthmus::host
