// Internal: CPU kernels behind advanced indexing: offsets, row gather / scatter, nonzero.
#pragma once

#include "cpu/strided_loop.hpp"
#include "isthmus/tensor.hpp"

#include <cstdint>
#include <vector>

namespace isthmus::cpu {

/// One integer index array of an advanced index, viewed (expanded) to the common index shape.
struct offset_source {
    const tensor* index;  ///< integer index array, already expanded to the common shape
    const void* data;     ///< its element 0 (host, locked for reading)
    int64_t size;         ///< size of the indexed dimension
    int64_t stride_bytes; ///< byte stride of the indexed dimension
    bool check;           ///< false when in range by construction (mask coordinates)
};

/// Sets off[b] = sum over sources of wrap(index[b]) * stride_bytes for every b of the common
/// shape (off is contiguous). Returns the position in `sources` of one whose index is out of
/// range (negative indices count from the end), or -1 when all are in range. Multi-threaded.
int64_t index_offsets(const shape_t& common, const std::vector<offset_source>& sources,
                      int64_t* off);
/// The first out-of-range value of source `s` (for the error message).
int64_t first_bad_index(const shape_t& common, const offset_source& s);

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

/// True when every one of the n contiguous indices is in [-size, size). Multi-threaded.
bool indices_in_range(const int64_t* idx, int64_t n, int64_t size);

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

/// Nonzero in two passes: count per chunk, then write coordinates.
struct nonzero_counts {
    std::vector<int64_t> bounds; ///< chunk boundaries (elements), size chunks + 1
    std::vector<int64_t> first;  ///< output position of each chunk's first hit, size chunks + 1
    int64_t total() const { return first.back(); }
};
/// Counts the nonzero bytes of the contiguous buffer `mask` of n bytes (0 / 1 booleans).
nonzero_counts count_nonzero(const uint8_t* mask, int64_t n);
/// Writes the coordinates (in C order of `shape`) of each nonzero byte: coordinate d of hit h
/// goes to outs[d][h * out_stride].
void write_nonzero(const nonzero_counts& counts, const uint8_t* mask, const shape_t& shape,
                   int64_t* const* outs, int64_t out_stride);

} // namespace isthmus::cpu
