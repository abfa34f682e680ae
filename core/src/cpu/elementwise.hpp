// Internal: the CPU elementwise kernels' loop and operand types, and the where and clamp kernels.
#pragma once

#include "isthmus/ops/elementwise.hpp"

#include <cstdint>

namespace isthmus::cpu {

/// An inner loop over n elements: p[0] is the output, p[1..] the inputs, s[] byte strides.
/// One call per row (or per block), never per element.
using loop_fn = void (*)(char** p, const int64_t* s, int64_t n);

/// One operand of an elementwise kernel: the host address of its element 0, its dtype, and its
/// element strides over the op's (broadcast) shape, 0 on broadcast dimensions.
struct operand {
    char* data;
    dtype dt;
    const shape_t* strides;
};

/// out = cond ? a : b; a and b are converted to out's dtype, cond to bool.
void where(const shape_t& shape, const operand& out, const operand& cond, const operand& a,
           const operand& b);

/// out = minimum(maximum(x, lo), hi) computing in `compute` (not complex).
void clamp(dtype compute, const shape_t& shape, const operand& out, const operand& x,
           const operand& lo, const operand& hi);

} // namespace isthmus::cpu
