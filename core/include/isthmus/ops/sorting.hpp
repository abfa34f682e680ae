// Tensor operations: sort, argsort and searchsorted, in NumPy's and the array API's order.
#pragma once

#include "isthmus/tensor.hpp"

#include <cstdint>

namespace isthmus {

/// `t` sorted along `axis` (negative counts from the end): ascending with NaNs last, or
/// `descending` (NaNs first); equal elements keep their order (every sort is stable); complex
/// numbers in NumPy's lexicographic order. A 0-d tensor is returned as a copy. A new
/// C-contiguous tensor of t's dtype and shape; index_error for an axis out of range.
ISTHMUS_API tensor sort(const tensor& t, int64_t axis = -1, bool descending = false);
/// The int64 positions along `axis` that sort `t` there, in the order of sort() (stable, so
/// equal elements give their positions in increasing order). A 0-d tensor gives 0.
ISTHMUS_API tensor argsort(const tensor& t, int64_t axis = -1, bool descending = false);
/// The positions at which `values` would be inserted into the ascending 1-d `sorted` to keep
/// it sorted in sort()'s order (NumPy's searchsorted): before equal elements, or after them
/// when `right`. Both convert to their promoted dtype; an int64 tensor of values' shape;
/// value_error when `sorted` is not 1-d. `sorted` is not checked for order (a binary search,
/// as NumPy's: an unsorted input gives some position).
ISTHMUS_API tensor searchsorted(const tensor& sorted, const tensor& values, bool right = false);

} // namespace isthmus
