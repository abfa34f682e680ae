// Bool memory from other libraries: its bytes checked and normalised to 0 and 1 on import.
#pragma once

#include "isthmus/tensor.hpp"

namespace isthmus::boundary {

/// True when every element of the bool view at `data` (shape, element strides, on `resource`)
/// is the byte 0 or 1. See Note [bool bytes].
bool bool_bytes_valid(void* data, const shape_t& shape, const shape_t& strides,
                      resource_id resource);
/// A new C-contiguous bool tensor on `resource` holding byte != 0 for each element of the bool
/// view at `data`, whatever bytes it holds. See Note [bool bytes].
tensor bools_from_bytes(void* data, const shape_t& shape, const shape_t& strides,
                        resource_id resource);

} // namespace isthmus::boundary
