// Internal: the CPU reduction kernels behind the CPU backend (sum, prod, min/max, any/all, the
// variance's squared deviations, argmin/argmax, cumulative sums and products).
#pragma once

#include "isthmus/backend.hpp"
#include "isthmus/tensor.hpp"

#include <vector>

namespace isthmus::cpu {

/// Reduces `x` over the dimensions where `reduced[d]` is true into `out`, which has the kept
/// dimensions of `x` in order (any strides) and dtype ops::reduce_result_dtype(kind, x.dtype())
/// (ops/reduce_types.hpp). `kind` is one of the associative reductions (not argmin/argmax).
/// `divisor` divides the accumulated value of mean (the op layer passes the count).
/// Data pointers are element 0 of each view, host accessible and locked by the caller.
void reduce(backend::reduce_kind kind, const tensor& out, void* out_data, const tensor& x,
            const void* x_data, const std::vector<bool>& reduced, double divisor = 1.0);

/// var (`root` false) or std of `x` over the dimensions where `reduced[d]` is true into `out`
/// (the kept dimensions of `x` in order, any strides, dtype ops::var_result_dtype(x.dtype())): the
/// sum of |x - mean|^2 over each output's elements divided by `divisor` (the op layer passes
/// max(N - ddof, 0)), in one pass over `x` (Note [blocked variance], reduce_var.cpp).
void variance(const tensor& out, void* out_data, const tensor& x, const void* x_data,
              const std::vector<bool>& reduced, double divisor, bool root);

/// dev = |x - m|^2 elementwise, `m` already expanded to x's shape (stride 0 on the reduced
/// dimensions), `m` of dtype ops::reduce_result_dtype(mean, x.dtype()), `dev` contiguous of dtype
/// ops::var_work_dtype(x.dtype()).
void squared_deviation(const tensor& dev, void* dev_data, const tensor& x, const void* x_data,
                       const tensor& m, const void* m_data);

/// out = sqrt(out) in place on a contiguous floating tensor (std from var).
void sqrt_inplace(const tensor& out, void* out_data);

/// argmin (`is_max` false) or argmax of `x` along `axis` into the int64 tensor `out`, which has
/// x's dimensions without `axis` (any strides). `x` must have at least one element along
/// `axis` (the flat argmin/argmax passes a 1-d contiguous view and axis 0).
void arg_reduce(bool is_max, const tensor& out, void* out_data, const tensor& x, const void* x_data,
                int64_t axis);

/// Cumulative sum (`is_prod` false) or product of the C-contiguous `x` (already converted to
/// the compute dtype: int64, uint64, float32, float64, complex64 or complex128) along `axis`,
/// into the C-contiguous `out` of the same shape and dtype.
void cumulative(bool is_prod, const tensor& out, void* out_data, const tensor& x,
                const void* x_data, int64_t axis);

} // namespace isthmus::cpu
