// Internal: the one place that names the BLAS library (cblas.h, its symbol prefix, its threads).
#pragma once

#include <cblas.h>

// Note [blas symbol prefix]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// scipy-openblas32 (Note [which blas] in cmake/isthmus_blas.cmake) exports every symbol with the
// prefix `scipy_` (scipy_cblas_sgemm, scipy_openblas_get_corename), so that it shares a process
// with NumPy's scipy-openblas64, torch's libraries or a system libopenblas without one interposing
// on another; its cblas.h declares the prefixed names. The build defines ISTHMUS_BLAS_PREFIX
// (scipy_, or nothing for a system OpenBLAS) and the code spells every BLAS symbol as
// ISTHMUS_BLAS(cblas_sgemm), here and in matmul*.cpp only.
#ifndef ISTHMUS_BLAS_PREFIX
#define ISTHMUS_BLAS_PREFIX
#endif
#ifndef ISTHMUS_BLAS_NAME
#define ISTHMUS_BLAS_NAME "OpenBLAS"
#endif
#define ISTHMUS_BLAS_JOIN_(prefix, name) prefix##name
#define ISTHMUS_BLAS_JOIN(prefix, name) ISTHMUS_BLAS_JOIN_(prefix, name)
/// The BLAS library's symbol `name` (cblas_sgemm, openblas_get_corename, ...) as the linked
/// library spells it.
#define ISTHMUS_BLAS(name) ISTHMUS_BLAS_JOIN(ISTHMUS_BLAS_PREFIX, name)

namespace isthmus::cpu {

/// Called on the calling thread before a product large enough for OpenBLAS to thread: keeps
/// OpenBLAS's pool at the size of the OpenMP pool (Note [BLAS threads] in matmul_blas.cpp).
void blas_sync_threads() noexcept;

} // namespace isthmus::cpu
