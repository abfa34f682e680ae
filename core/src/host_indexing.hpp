// Internal: the host-side preparation of indexing ops: index offsets, range checks, nonzero.
#pragma once

#include "isthmus/tensor.hpp"

#include <cstdint>
#include <vector>

// The op layer runs these on the host for every resource, before a gather or scatter runs where
// the scheduling rule puts it (See Note [device indexing]): index arrays become byte offsets or
// are checked in place, and nonzero counts and writes coordinates. They use the host's strided
// loops and threads and are no part of any backend.
namespace isthmus::host {

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

/// True when every one of the n contiguous indices is in [-size, size). Multi-threaded.
bool indices_in_range(const int64_t* idx, int64_t n, int64_t size);

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

} // namespace isthmus::host
