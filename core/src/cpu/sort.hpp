// Internal: CPU sort and argsort of contiguous rows (the CPU backend's sort entry).
#pragma once

#include "isthmus/tensor.hpp"

#include <cstdint>

namespace isthmus::cpu {

/// Sorts each row of `in` (its last dimension; contiguous) into `values` (in's dtype) and/or
/// its int64 positions into `indices`; either may be null. Order: Note [sort order].
void sort_rows(const tensor& in, const void* in_data, void* values, int64_t* indices,
               bool descending);

} // namespace isthmus::cpu
