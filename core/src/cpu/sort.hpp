// Internal: CPU sort, argsort and binary search (the CPU backend's sort and searchsorted).
#pragma once

#include "isthmus/tensor.hpp"

#include <cstdint>

namespace isthmus::cpu {

/// Sorts each row of `in` (its last dimension; contiguous) into `values` (in's dtype) and/or
/// its int64 positions into `indices`; either may be null. Order: Note [sort order].
void sort_rows(const tensor& in, const void* in_data, void* values, int64_t* indices,
               bool descending);

/// out[i] = the insertion point of values[i] in the ascending 1-d `sorted` (binary searches
/// in the order of Note [sort order]; the last one when `right`). All contiguous, one dtype.
void search_sorted(const tensor& sorted, const void* sorted_data, const tensor& values,
                   const void* values_data, int64_t* out, bool right);

} // namespace isthmus::cpu
