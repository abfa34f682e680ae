// CPU scatter kernel behind index assignment: rows of values written at index offsets.
#include "cpu/gather.hpp"
#include "cpu/gather_copy.hpp"

namespace isthmus::cpu {

// Note [scatter order]
// ~~~~~~~~~~~~~~~~~~~~
// Rows are written one after another in index order, so with repeated indices the last value wins,
// as NumPy. Only the copy of a single large row is split across threads, never the rows (two
// threads could write one element in either order); in the rows-inner order
// (Note [gather loop order]) each element of the rest is one thread's.
void scatter_rows(size_t itemsize, char* dst, const char* val, const row_offsets& at, int64_t rows,
                  int64_t val_row_bytes, const strided_plan<2>& rest, bool rows_inner) {
    dispatch_item_size(itemsize, [&](auto tag) {
        using U = decltype(tag);
        with_row_offsets(at, [&](auto offset_of) {
            if (rows_inner && rest.numel > 1) {
                // Each element of the rest gets its rows in index order; different elements of
                // the rest are different destinations, so they may run in parallel.
                copy_rows_inner<U, 0>(dst, val, offset_of, rows, val_row_bytes, rest,
                                      std::max<int64_t>(1, parallel_grain / rows));
                return;
            }
            if (rest.numel == 1) {
                // Locals, see Note [local copies].
                const auto at_row = offset_of;
                char* const d = dst;
                const char* const a = val;
                const int64_t step = val_row_bytes;
                for (int64_t b = 0; b < rows; ++b) {
                    U v;
                    std::memcpy(&v, a + b * step, sizeof(U));
                    std::memcpy(d + at_row(b), &v, sizeof(U));
                }
                return;
            }
            for (int64_t b = 0; b < rows; ++b)
                run_plan<2>(rest, {dst + offset_of(b), const_cast<char*>(val + b * val_row_bytes)},
                            copy_run<U>);
        });
    });
}

} // namespace isthmus::cpu
