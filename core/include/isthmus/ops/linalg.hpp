// Tensor operations: linear algebra (matmul with NumPy's `@` rules, dot, vdot, inner).
#pragma once

#include "isthmus/tensor.hpp"
#include "isthmus/value.hpp"

namespace isthmus {

/// Matrix product with NumPy's `@` rules: 2-d operands multiply as matrices; a 1-d first
/// operand is a row vector and a 1-d second operand a column vector (the added dimension is
/// removed from the result); for more dimensions the last two are the matrices and the leading
/// ones are batch dimensions that broadcast. The result has the promoted dtype.
/// float32/float64/complex64/complex128 run through CBLAS (OpenBLAS), float16/bfloat16 in
/// float32, integers and bool in an exact loop (integers wrap around on overflow, bool is
/// or-of-ands). Raises value_error for a 0-d operand, mismatched inner dimensions or batch
/// shapes that do not broadcast (naming both shapes).
ISTHMUS_API tensor matmul(const tensor& a, const tensor& b);

/// NumPy's dot: a 0-d operand multiplies elementwise; 1-d with 1-d is the inner product (0-d);
/// 2-d with 2-d is matmul; N-d with 1-d sums over the last axis of `a`; N-d with M-d (M >= 2)
/// sums over the last axis of `a` and the second-to-last of `b`, giving shape
/// a.shape[:-1] + b.shape[:-2] + b.shape[-1:]. Raises value_error when those axes differ.
ISTHMUS_API tensor dot(const tensor& a, const tensor& b);

/// NumPy's vdot: the flattened tensors' inner product, conjugating `a` when complex (0-d).
/// Raises value_error when the element counts differ.
ISTHMUS_API tensor vdot(const tensor& a, const tensor& b);

/// NumPy's inner: sums over the last axes of both (shape a.shape[:-1] + b.shape[:-1]); a 0-d
/// operand multiplies elementwise. Raises value_error when the last axes differ.
ISTHMUS_API tensor inner(const tensor& a, const tensor& b);

/// The BLAS library behind the CPU matmul as loaded at run time, and the thread pools it shares
/// the cores with (docs/threads.md). Python: `q.build_info()["blas"]`.
struct blas_info {
    const char* name;    ///< "scipy-openblas32", or "OpenBLAS (system)" (cmake/isthmus_blas.cmake)
    const char* version; ///< the version the library reports, e.g. "0.3.34.481.3"
    /// The kernel set it chose for this CPU, e.g. "SkylakeX", "Haswell", "Zen"; "Prescott" is
    /// the generic x86-64 one (a library older than the CPU).
    const char* core;
    const char* config; ///< its build configuration (OpenBLAS's openblas_get_config())
    int threads;        ///< the threads it uses for one large product now
    int openmp_threads; ///< isthmus's OpenMP pool (omp_get_max_threads()) that `threads` follows
    /// Other OpenBLAS copies in the process (NumPy's, SciPy's) whose threaded calls run on
    /// isthmus's OpenMP pool (see share_blas_pools).
    int shared_pools = 0;
    /// Threaded calls of those copies run on the pool so far.
    int64_t shared_calls = 0;
};

/// Gives every other OpenBLAS loaded in the process (NumPy's scipy-openblas64, SciPy's copy;
/// 0.3.28 or newer, pthread builds) isthmus's OpenMP pool for its threaded calls, so that no
/// second pool busy-waits on the cores after each of its products (docs/threads.md, Note [one
/// BLAS pool for the process]). Returns how many copies share the pool. `import isthmus` and
/// the first threaded product call it; a C++ host that loads NumPy later may call it again
/// (copies already seen are skipped). ISTHMUS_BLAS_THREADS=openblas turns it off (0).
ISTHMUS_API int share_blas_pools() noexcept;

/// What the CPU matmul runs on (see blas_info).
ISTHMUS_API blas_info cpu_blas_info() noexcept;

} // namespace isthmus
