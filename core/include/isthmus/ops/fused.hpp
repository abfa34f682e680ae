// Tensor operations: fused elementwise kernels (one pass over memory for a compound expression).
#pragma once

#include "isthmus/tensor.hpp"

namespace isthmus {

/// a * b + c in one pass over memory, with NumPy broadcasting and promotion of the three
/// dtypes (a hardware fused multiply-add where the compiler targets one).
/// Throws value_error when the shapes do not broadcast.
ISTHMUS_API tensor fma(const tensor& a, const tensor& b, const tensor& c);

} // namespace isthmus
