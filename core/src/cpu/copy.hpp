// Internal: strided copy with dtype conversion on the CPU (the kernel behind copy_from/contiguous).
#pragma once

#include "isthmus/tensor.hpp"

namespace isthmus::cpu {

/// Copies `src` (already expanded to dst's shape) into `dst`, converting dtypes. `dst_data` and
/// `src_data` are the addresses of element 0 of each view (host-accessible, locked).
void copy_cast(const tensor& dst, void* dst_data, const tensor& src, const void* src_data);

} // namespace isthmus::cpu
