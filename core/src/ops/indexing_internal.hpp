// Internal: the three parts of subscripting (parse, advanced rows, assignment) share these.
#pragma once

#include "isthmus/ops/indexing.hpp"
#include "ops/dispatch.hpp"

#include <memory>
#include <vector>

namespace isthmus::indexing {

/// An advanced index entry: an integer array indexing one dimension of the basic view.
struct advanced_entry {
    int64_t dim;  // the dimension of the basic view it indexes
    tensor index; // integer index array (any integer dtype)
    int64_t axis; // the indexed tensor's axis, for messages (-1: inserted by a 0-d mask)
    bool check;   // false when in range by construction (mask coordinates, checked integers)
};

/// A subscript after its basic part: the view (advanced dimensions still whole) plus the
/// advanced entries in dimension order.
struct parsed_subscript {
    tensor view;
    std::vector<advanced_entry> adv;
    bool adjacent = true;      // the advanced entries are next to each other in the subscript
    bool scalar_array = false; // a 0-d integer tensor acted as an integer
    bool full_integer = false; // integers only, one per dimension
    bool whole_mask = false;   // the subscript is one bool mask of the tensor's shape
};

/// Parses `items` against `t` by NumPy's rules (Note [NumPy's subscript rules],
/// indexing_parse.cpp): the basic view and the advanced entries; raises NumPy's errors in
/// NumPy's order.
parsed_subscript parse_subscript(const tensor& t, const std::vector<index_item>& items);
/// An integer, or a 0-d integer tensor (which NumPy treats as an integer).
bool is_integer_item(const index_item& it);

/// Where the advanced entries' broadcast shape goes in the result, and the other dimensions.
struct advanced_layout {
    shape_t common; // the index arrays broadcast together
    shape_t result; // the result (gather) / indexed (scatter) shape
    int64_t block;  // position of common's dimensions in result
    shape_t rest;   // the view's dimensions that are not indexed by arrays, in order
};

/// The broadcast shape of the advanced entries and where it goes in the result.
advanced_layout layout_of(const tensor& v, const std::vector<advanced_entry>& adv, bool adjacent);

/// Where the rows of an advanced index start (see Note [row offsets]), with the memory and locks
/// that keep the answer valid.
struct located_rows {
    backend::index_rows at; // at.count: the number of rows
    int64_t rows = 0;
    std::unique_ptr<int64_t[]> off;    // summed offsets, when several index arrays
    std::unique_ptr<ops::access> lock; // the single index array, when read directly
};

/// Locates the rows; raises index_error (before anything is written) for an out-of-range index.
located_rows locate_rows(const tensor& v, const std::vector<advanced_entry>& adv,
                         const shape_t& common);
/// A flag per dimension of the view: set for the dimensions advanced entries index.
std::vector<bool> advanced_mask(const tensor& v, const std::vector<advanced_entry>& adv);
/// Whether the rows are the inner loop: when the indexed dimensions step through memory faster
/// than every other dimension of size > 1 (Note [gather loop order], indexing_advanced.cpp).
bool rows_inner(const tensor& v, const std::vector<bool>& adv_mask);
/// The strides of the view's dimensions that no advanced entry indexes (the "rest").
shape_t rest_strides(const tensor& v, const std::vector<bool>& adv_mask);
/// The strides of `t` without the dimensions [block, block + n).
shape_t strides_without_block(const tensor& t, int64_t block, size_t n);
/// The single byte stride that steps through dimensions [block, block + n) of `t` in C order,
/// if there is one (then the block is one "row" axis).
bool block_stride(const tensor& t, int64_t block, size_t n, int64_t& stride);

} // namespace isthmus::indexing
