// The CUDA kernels' launch functions, in plain types (the .cu files include no runtime header).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace isthmus::cudak {

/// Element types the kernels know (the backend maps isthmus dtypes onto these).
enum class kdt : int { b8, i8, i16, i32, i64, u8, f32, f64 };

/// Binary ops with GPU kernels.
enum class bop : int { add, sub, mul, div, maximum, minimum, pow, atan2, eq, ne, lt, le, gt, ge };
/// Unary ops with GPU kernels.
enum class uop : int {
    neg,
    abs,
    sign,
    exp,
    log,
    log2,
    log10,
    expm1,
    log1p,
    sqrt,
    rsqrt,
    sin,
    cos,
    tan,
    asin,
    acos,
    atan,
    sinh,
    cosh,
    tanh,
    floor,
    ceil,
    round,
    square,
    reciprocal,
    isnan,
    isinf,
    isfinite
};
/// Reductions with GPU kernels.
enum class rop : int { sum, mean, min, max };

inline constexpr int max_dims = 32;

/// One strided operand of an elementwise launch: element 0's address (nullptr: a scalar held
/// in `value`) and strides in elements over the launch's (coalesced) shape.
struct arg {
    const void* data = nullptr;
    int64_t strides[max_dims] = {};
    alignas(16) unsigned char value[16] = {};
};

/// The iteration space of an elementwise launch, dims coalesced where every operand allows.
struct space {
    int rank = 0;
    int64_t shape[max_dims] = {};
    int64_t numel = 0;
    bool contiguous = false; ///< every tensor operand is dense and row-major over the space
};

/// out = op(a, b); a and b of type `t`; out of type `t`, or b8 for comparisons.
void launch_binary(cudaStream_t s, bop op, kdt t, kdt out_t, const space& sp, const arg& out,
                   const arg& a, const arg& b);
/// out = op(a); a of type `t`; out of type `t`, or b8 for the isnan/isinf/isfinite tests.
void launch_unary(cudaStream_t s, uop op, kdt t, kdt out_t, const space& sp, const arg& out,
                  const arg& a);
/// out = in converted (in may be a scalar: a fill).
void launch_copy(cudaStream_t s, kdt out_t, kdt in_t, const space& sp, const arg& out,
                 const arg& in);
/// Row reductions of a contiguous (rows, cols) input; `scratch` holds rows * chunks(rows, cols)
/// accumulators of 8 bytes each when reduce_chunks > 1.
int64_t reduce_chunks(int64_t rows, int64_t cols);
void launch_reduce(cudaStream_t s, rop op, kdt in_t, kdt out_t, int64_t rows, int64_t cols,
                   const void* in, void* out, void* scratch);
/// C = A @ B for `batch` contiguous row-major matrices (the kernel used without cuBLAS).
void launch_gemm(cudaStream_t s, kdt t, int64_t batch, int64_t m, int64_t n, int64_t k,
                 const void* a, const void* b, void* c);

} // namespace isthmus::cudak
