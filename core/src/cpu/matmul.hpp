// Internal: the CPU matrix product: CBLAS (OpenBLAS) for float types, an exact blocked loop for
// integers and bool, batching over broadcast batch dimensions.
#pragma once

#include "isthmus/tensor.hpp"

namespace isthmus::cpu {

/// True when matmul in `dt` runs through BLAS (float32, float64, complex64, complex128).
bool blas_dtype(dtype dt);

/// True when the last two dimensions of `m` (rows, cols) can be handed to BLAS without a copy:
/// row-major with unit column stride, or column-major (a transposed contiguous matrix), with a
/// leading dimension that BLAS accepts.
bool blas_layout_ok(const tensor& m);

/// c[i] = a[i] @ b[i] for every batch index i. `a` is (batch..., m, k), `b` (batch..., k, n) with
/// the same batch shape (broadcast batch dimensions have stride 0); `c` is C-contiguous
/// (batch..., m, n). All three have the same dtype; for BLAS dtypes `a` and `b` satisfy
/// blas_layout_ok. Pointers are element 0 of each view, host accessible and locked.
void matmul(const tensor& c, void* c_data, const tensor& a, const void* a_data, const tensor& b,
            const void* b_data);

/// out = sum(conj(a[i]) * b[i]) over n contiguous complex elements of dtype `dt` (vdot).
void dotc(dtype dt, int64_t n, const void* a, const void* b, void* out);

/// The exact loop behind matmul for non-BLAS dtypes (and BLAS dtypes whose sizes exceed BLAS's
/// 32-bit integers): one (m, k) @ (k, n) product with byte strides, into the C-contiguous `c`
/// (which it overwrites).
void matmul_loop(dtype dt, int64_t m, int64_t n, int64_t k, const char* a, int64_t a_rs,
                 int64_t a_cs, const char* b, int64_t b_rs, int64_t b_cs, char* c);

} // namespace isthmus::cpu
