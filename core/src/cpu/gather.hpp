// Internal: CPU kernels behind advanced indexing: row gather / scatter.
#pragma once

#include "cpu/strided_loop.hpp"
#include "isthmus/tensor.hpp"

#include <cstdint>

namespace isthmus::cpu {

/// Where each row of an advanced index starts in the indexed view, in bytes.
///
/// Note [row offsets]
/// ~~~~~~~~~~~~~~~~~~
/// With several index arrays, their byte offsets are summed into one int64 array first
/// (index_offsets). With a single contiguous int64 index array (the common a[idx], and the
/// coordinates of a mask) that pass and its memory are skipped: the kernels read the indices
/// directly, after a read-only range check, and scale them on the fly.
struct row_offsets {
    const int64_t* off = nullptr; ///< precomputed byte offsets, or nullptr: use idx
    const int64_t* idx = nullptr; ///< contiguous int64 indices, already checked in range
    int64_t size = 0;             ///< size of the indexed dimension (negative indices wrap)
    int64_t stride_bytes = 0;     ///< byte stride of the indexed dimension
};

/// Gather: for each row b in [0, rows), copies the `rest` plan's elements from the row at `at`
/// to out + b * out_row_bytes. Operand 0 of `rest` is the output, 1 the source. `rows_inner`
/// picks the loop order (see Note [gather loop order]).
void gather_rows(size_t itemsize, char* out, const char* src, const row_offsets& at, int64_t rows,
                 int64_t out_row_bytes, const strided_plan<2>& rest, bool rows_inner);
/// Scatter: for each row b in order (so a repeated index keeps the last value), copies the
/// `rest` plan's elements from val + b * val_row_bytes to the row at `at`. Operand 0 of `rest`
/// is the destination, 1 the value.
void scatter_rows(size_t itemsize, char* dst, const char* val, const row_offsets& at, int64_t rows,
                  int64_t val_row_bytes, const strided_plan<2>& rest, bool rows_inner);

} // namespace isthmus::cpu
