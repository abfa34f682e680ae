// CPU advanced-indexing kernels: row gather (Note [gather loop order]).
#include "cpu/gather.hpp"
#include "cpu/gather_copy.hpp"
#include "isthmus/openmp_region.hpp"

#include <atomic>
#include <cstring>

namespace isthmus::cpu {

// Note [gather loop order]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// Rows outer copies whole rows of the rest (a[idx] picks rows of a matrix: long contiguous copies);
// rows inner walks the rest and, at each of its elements, every row (a[:, idx] picks columns: each
// source row is read once, in cache). The op layer chooses rows inner when the indexed dimensions
// have the smaller strides.
void gather_rows(size_t itemsize, char* out, const char* src, const row_offsets& at, int64_t rows,
                 int64_t out_row_bytes, const strided_plan<2>& rest, bool rows_inner) {
    dispatch_item_size(itemsize, [&](auto tag) {
        using U = decltype(tag);
        with_row_offsets(at, [&](auto offset_of) {
            const int64_t inner = rest.numel;
            if (rows_inner && inner > 1) {
                copy_rows_inner<U, 1>(out, src, offset_of, rows, out_row_bytes, rest,
                                      std::max<int64_t>(1, parallel_grain / rows));
                return;
            }
            if (inner == 1) {
                const auto copy_rows = [=](int64_t b0, int64_t b1) {
                    // Locals, see Note [local copies].
                    const auto at_row = offset_of;
                    char* const o = out;
                    const char* const a = src;
                    const int64_t step = out_row_bytes;
                    for (int64_t b = b0; b < b1; ++b) {
                        U v;
                        std::memcpy(&v, a + at_row(b), sizeof(U));
                        std::memcpy(o + b * step, &v, sizeof(U));
                    }
                };
                if (rows < parallel_grain || omp_in_parallel()) {
                    copy_rows(0, rows); // no thread team for small gathers
                    return;
                }
                const int64_t chunks = omp_get_max_threads();
                openmp_region([&] {
#pragma omp parallel for schedule(static)
                    for (int64_t c = 0; c < chunks; ++c)
                        copy_rows(rows * c / chunks, rows * (c + 1) / chunks);
                });
                return;
            }
            auto row = [&](int64_t b, int64_t grain) {
                run_plan<2>(rest, {out + b * out_row_bytes, const_cast<char*>(src + offset_of(b))},
                            copy_run<U>, grain);
            };
            const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
            if (threads > 1 && rows * inner >= parallel_grain &&
                (inner < parallel_grain || rows >= 8 * threads)) {
                // Many rows: one thread per run of rows, each row copied serially.
                openmp_region([&] {
#pragma omp parallel for schedule(static)
                    for (int64_t b = 0; b < rows; ++b) row(b, INT64_MAX);
                });
            } else {
                // Few large rows (or little work): rows in order, each split across threads.
                for (int64_t b = 0; b < rows; ++b) row(b, parallel_grain);
            }
        });
    });
}

} // namespace isthmus::cpu
