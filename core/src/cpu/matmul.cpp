// The CPU matrix product through CBLAS (OpenBLAS): layouts, gemm/gemv choice, batch loops.
#include "cpu/matmul.hpp"

#include "cpu/matmul_blas.hpp"
#include "isthmus/interrupt.hpp"
#include "isthmus/openmp_region.hpp"

#include <algorithm>
#include <limits>
#include <omp.h>

namespace isthmus::cpu {

namespace {

// Note [BLAS layouts]
// ~~~~~~~~~~~~~~~~~~~
// BLAS takes a matrix as a pointer, a leading dimension and a transpose flag, so any view with one
// unit stride is passed as it is: unit column stride is row-major (NoTrans, ld = row stride), unit
// row stride is a transposed row-major matrix (Trans, ld = column stride). A dimension of size 1
// has no meaningful stride and is normalised first. Anything else (negative or zero strides, both
// strides non-unit) is copied by the op layer.
struct layout {
    CBLAS_TRANSPOSE trans = CblasNoTrans;
    int64_t ld = 1;
};

bool layout_of(int64_t rows, int64_t cols, int64_t rs, int64_t cs, layout& out) {
    if (rows <= 1 && cols <= 1) {
        out = {CblasNoTrans, 1};
        return true;
    }
    if (rows <= 1) { // one row: only the column stride matters
        if (cs == 1)
            out = {CblasNoTrans, std::max<int64_t>(cols, 1)};
        else if (cs >= 1)
            out = {CblasTrans, cs};
        else
            return false;
        return true;
    }
    if (cols <= 1) { // one column: only the row stride matters
        if (rs == 1)
            out = {CblasTrans, std::max<int64_t>(rows, 1)};
        else if (rs >= 1)
            out = {CblasNoTrans, rs};
        else
            return false;
        return true;
    }
    if (cs == 1 && rs >= cols) {
        out = {CblasNoTrans, rs};
        return true;
    }
    if (rs == 1 && cs >= rows) {
        out = {CblasTrans, cs};
        return true;
    }
    return false;
}

template <typename T>
struct blas;

template <>
struct blas<float> {
    static void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n, blasint k,
                     const float* a, blasint lda, const float* b, blasint ldb, float* c,
                     blasint ldc) {
        ISTHMUS_BLAS(cblas_sgemm)
        (CblasRowMajor, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
    }
    static void gemv(CBLAS_TRANSPOSE t, blasint rows, blasint cols, const float* a, blasint lda,
                     const float* x, blasint incx, float* y) {
        ISTHMUS_BLAS(cblas_sgemv)(CblasRowMajor, t, rows, cols, 1.0f, a, lda, x, incx, 0.0f, y, 1);
    }
};

template <>
struct blas<double> {
    static void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n, blasint k,
                     const double* a, blasint lda, const double* b, blasint ldb, double* c,
                     blasint ldc) {
        ISTHMUS_BLAS(cblas_dgemm)(CblasRowMajor, ta, tb, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc);
    }
    static void gemv(CBLAS_TRANSPOSE t, blasint rows, blasint cols, const double* a, blasint lda,
                     const double* x, blasint incx, double* y) {
        ISTHMUS_BLAS(cblas_dgemv)(CblasRowMajor, t, rows, cols, 1.0, a, lda, x, incx, 0.0, y, 1);
    }
};

template <>
struct blas<complex64_t> {
    static void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n, blasint k,
                     const complex64_t* a, blasint lda, const complex64_t* b, blasint ldb,
                     complex64_t* c, blasint ldc) {
        const complex64_t one(1), zero(0);
        ISTHMUS_BLAS(cblas_cgemm)
        (CblasRowMajor, ta, tb, m, n, k, &one, a, lda, b, ldb, &zero, c, ldc);
    }
    static void gemv(CBLAS_TRANSPOSE t, blasint rows, blasint cols, const complex64_t* a,
                     blasint lda, const complex64_t* x, blasint incx, complex64_t* y) {
        const complex64_t one(1), zero(0);
        ISTHMUS_BLAS(cblas_cgemv)(CblasRowMajor, t, rows, cols, &one, a, lda, x, incx, &zero, y, 1);
    }
};

template <>
struct blas<complex128_t> {
    static void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n, blasint k,
                     const complex128_t* a, blasint lda, const complex128_t* b, blasint ldb,
                     complex128_t* c, blasint ldc) {
        const complex128_t one(1), zero(0);
        ISTHMUS_BLAS(cblas_zgemm)
        (CblasRowMajor, ta, tb, m, n, k, &one, a, lda, b, ldb, &zero, c, ldc);
    }
    static void gemv(CBLAS_TRANSPOSE t, blasint rows, blasint cols, const complex128_t* a,
                     blasint lda, const complex128_t* x, blasint incx, complex128_t* y) {
        const complex128_t one(1), zero(0);
        ISTHMUS_BLAS(cblas_zgemv)(CblasRowMajor, t, rows, cols, &one, a, lda, x, incx, &zero, y, 1);
    }
};

// One product c (m, n; row stride n) = a (m, k) @ b (k, n). A vector operand goes to gemv.
template <typename T>
void product(int64_t m, int64_t n, int64_t k, const T* a, const layout& la, const T* b,
             const layout& lb, T* c) {
    const auto M = static_cast<blasint>(m), N = static_cast<blasint>(n),
               K = static_cast<blasint>(k);
    if (n == 1) {
        // c = a @ x with x = column 0 of b: element i at i * ldb (NoTrans) or i (Trans).
        const blasint incx = lb.trans == CblasNoTrans ? static_cast<blasint>(lb.ld) : 1;
        if (la.trans == CblasNoTrans)
            blas<T>::gemv(CblasNoTrans, M, K, a, static_cast<blasint>(la.ld), b, incx, c);
        else
            blas<T>::gemv(CblasTrans, K, M, a, static_cast<blasint>(la.ld), b, incx, c);
        return;
    }
    if (m == 1) {
        // c^T = b^T @ x with x = row 0 of a: element i at i (NoTrans) or i * lda (Trans).
        const blasint incx = la.trans == CblasNoTrans ? 1 : static_cast<blasint>(la.ld);
        if (lb.trans == CblasNoTrans)
            blas<T>::gemv(CblasTrans, K, N, b, static_cast<blasint>(lb.ld), a, incx, c);
        else
            blas<T>::gemv(CblasNoTrans, N, K, b, static_cast<blasint>(lb.ld), a, incx, c);
        return;
    }
    blas<T>::gemm(la.trans, lb.trans, M, N, K, a, static_cast<blasint>(la.ld), b,
                  static_cast<blasint>(lb.ld), c, N);
}

// Note [interruptible products]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A product of more than 2^33 multiply-adds (about a second on two cores) runs as row panels of
// about 2^32 (at least 512 rows, where BLAS is as fast as on the whole) with an interrupt check
// between them (Note [interrupting long operations]), so a Ctrl-C stops an 8192^3 float64 product
// within a panel instead of after it. Each element of c is still one BLAS dot product over all of
// k: the results are those of the whole product.
constexpr int64_t panel_work = int64_t{1} << 32;

template <typename T>
void product_in_panels(interrupt_check& ic, int64_t m, int64_t n, int64_t k, const T* a,
                       const layout& la, const T* b, const layout& lb, T* c) {
    const int64_t row_work = std::max<int64_t>(n * k, 1);
    if (m < 1024 || n == 1 || m * row_work <= 2 * panel_work)
        return product(m, n, k, a, la, b, lb, c);
    const int64_t rows = std::max<int64_t>(512, panel_work / row_work);
    const int64_t a_row = la.trans == CblasNoTrans ? la.ld : 1; // element step between a's rows
    for (int64_t r = 0; r < m && !ic.stop(); r += rows)
        product(std::min(rows, m - r), n, k, a + r * a_row, la, b, lb, c + r * n);
}

// Element offsets of batch `bi` in a and b (C order over the batch dimensions).
void batch_offsets(const tensor& a, const tensor& b, int64_t bi, int64_t& ao, int64_t& bo) {
    ao = bo = 0;
    for (int64_t d = a.dim() - 3; d >= 0; --d) {
        const int64_t n = a.shape()[static_cast<size_t>(d)];
        const int64_t i = bi % n;
        bi /= n;
        ao += i * a.strides()[static_cast<size_t>(d)];
        bo += i * b.strides()[static_cast<size_t>(d)];
    }
}

// Note [matmul batch folding]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// When b is the same matrix for every batch (stride 0) and a's batches are rows of one row-major
// matrix, the whole batch is one gemm with nb * m rows: one BLAS call instead of nb small ones, as
// NumPy does.
bool fold_batches(const tensor& a, const tensor& b, const layout& la, int64_t m) {
    if (la.trans != CblasNoTrans) return false;
    int64_t expected = m * la.ld;
    for (int64_t d = a.dim() - 3; d >= 0; --d) {
        const auto i = static_cast<size_t>(d);
        if (a.shape()[i] == 1) continue;
        if (b.strides()[i] != 0 || a.strides()[i] != expected) return false;
        expected *= a.shape()[i];
    }
    return true;
}

// Note [BLAS threads]
// ~~~~~~~~~~~~~~~~~~~
// OpenBLAS threads a large gemm itself (its pthread pool, one thread per core), so large products
// run one after another on the calling thread and never inside an OpenMP region: the two pools are
// never busy at once. Products of at most 2^18 multiply-adds run single-threaded inside OpenBLAS
// (its own threshold); a batch of medium ones (from 2^15) is spread over OpenMP threads. Tiny ones
// stay on one thread: OpenBLAS's pthread build takes a lock for its work buffer on every call, and
// two threads calling it back to back contend on that lock (measured: 8x8x8 products 3.7x slower on
// two threads than on one).
constexpr int64_t medium_product = int64_t{1} << 15;
constexpr int64_t small_product = int64_t{1} << 18;

template <typename T>
void matmul_blas(const tensor& c, T* cp, const tensor& a, const T* ap, const tensor& b,
                 const T* bp) {
    const int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
    const int64_t nb = c.numel() / std::max<int64_t>(m * n, 1);
    layout la, lb;
    const bool ok = layout_of(m, k, a.stride(-2), a.stride(-1), la) &&
                    layout_of(k, n, b.stride(-2), b.stride(-1), lb);
    ISTHMUS_ASSERT(ok, "matmul: operand layouts must be BLAS-compatible");
    constexpr int64_t lim = std::numeric_limits<blasint>::max();
    const bool fold = nb > 1 && fold_batches(a, b, la, m);
    const int64_t rows = fold ? nb * m : m;
    if (rows > lim || n > lim || k > lim || la.ld > lim || lb.ld > lim) {
        // Beyond BLAS's 32-bit sizes: the exact loop, batch by batch.
        const auto isz = static_cast<int64_t>(sizeof(T));
        for (int64_t bi = 0; bi < nb; ++bi) {
            int64_t ao, bo;
            batch_offsets(a, b, bi, ao, bo);
            matmul_loop(c.dtype(), m, n, k, reinterpret_cast<const char*>(ap + ao),
                        a.stride(-2) * isz, a.stride(-1) * isz,
                        reinterpret_cast<const char*>(bp + bo), b.stride(-2) * isz,
                        b.stride(-1) * isz, reinterpret_cast<char*>(cp + bi * m * n));
        }
        return;
    }
    blas_sync_threads(); // See Note [BLAS pool size] (matmul_blas.cpp)
    interrupt_check ic;
    if (fold) {
        product_in_panels(ic, rows, n, k, ap, la, bp, lb, cp);
        return ic.raise_if_stopped("matmul");
    }
    auto one = [&](int64_t bi) {
        int64_t ao, bo;
        batch_offsets(a, b, bi, ao, bo);
        product_in_panels(ic, m, n, k, ap + ao, la, bp + bo, lb, cp + bi * m * n);
    };
    const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
    const int64_t work = m * n * k;
    if (nb > 1 && threads > 1 && work >= medium_product && work <= small_product) {
        openmp_region([&] {
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
            for (int64_t bi = 0; bi < nb; ++bi)
                if (!ic.stop()) one(bi);
        });
        return ic.raise_if_stopped("matmul");
    }
    for (int64_t bi = 0; bi < nb && !ic.stop(); ++bi) one(bi);
    ic.raise_if_stopped("matmul");
}

} // namespace

bool blas_dtype(dtype dt) {
    return dt == dtype::float32 || dt == dtype::float64 || dt == dtype::complex64 ||
           dt == dtype::complex128;
}

bool blas_layout_ok(const tensor& m) {
    layout l;
    return m.dim() >= 2 && layout_of(m.size(-2), m.size(-1), m.stride(-2), m.stride(-1), l);
}

void matmul(const tensor& c, void* c_data, const tensor& a, const void* a_data, const tensor& b,
            const void* b_data) {
    ISTHMUS_ASSERT(a.dtype() == c.dtype() && b.dtype() == c.dtype() && c.is_contiguous() &&
                   a.dim() == c.dim() && b.dim() == c.dim() && c.dim() >= 2);
    const int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
    if (c.numel() == 0) return;
    if (k == 0) { // an empty sum: zeros
        std::fill_n(static_cast<char*>(c_data), c.nbytes(), char(0));
        return;
    }
    switch (c.dtype()) {
    case dtype::float32:
        return matmul_blas(c, static_cast<float*>(c_data), a, static_cast<const float*>(a_data), b,
                           static_cast<const float*>(b_data));
    case dtype::float64:
        return matmul_blas(c, static_cast<double*>(c_data), a, static_cast<const double*>(a_data),
                           b, static_cast<const double*>(b_data));
    case dtype::complex64:
        return matmul_blas(c, static_cast<complex64_t*>(c_data), a,
                           static_cast<const complex64_t*>(a_data), b,
                           static_cast<const complex64_t*>(b_data));
    case dtype::complex128:
        return matmul_blas(c, static_cast<complex128_t*>(c_data), a,
                           static_cast<const complex128_t*>(a_data), b,
                           static_cast<const complex128_t*>(b_data));
    default:
        break;
    }
    // The exact loop: batches in parallel, or row blocks in parallel inside matmul_loop.
    const int64_t nb = c.numel() / (m * n);
    const auto as = static_cast<int64_t>(a.itemsize());
    const auto* ap = static_cast<const char*>(a_data);
    const auto* bp = static_cast<const char*>(b_data);
    auto* cp = static_cast<char*>(c_data);
    auto one = [&](int64_t bi) {
        int64_t ao, bo;
        batch_offsets(a, b, bi, ao, bo);
        matmul_loop(c.dtype(), m, n, k, ap + ao * as, a.stride(-2) * as, a.stride(-1) * as,
                    bp + bo * as, b.stride(-2) * as, b.stride(-1) * as, cp + bi * m * n * as);
    };
    const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
    if (nb > 1 && threads > 1) {
        openmp_region([&] {
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
            for (int64_t bi = 0; bi < nb; ++bi) one(bi);
        });
        return;
    }
    for (int64_t bi = 0; bi < nb; ++bi) one(bi);
}

void dotc(dtype dt, int64_t n, const void* a, const void* b, void* out) {
    ISTHMUS_ASSERT(dt == dtype::complex64 || dt == dtype::complex128);
    constexpr int64_t chunk = int64_t{1} << 30;
    if (dt == dtype::complex64) {
        complex64_t total(0), part;
        const auto* x = static_cast<const complex64_t*>(a);
        const auto* y = static_cast<const complex64_t*>(b);
        for (int64_t i = 0; i < n; i += chunk) {
            ISTHMUS_BLAS(cblas_cdotc_sub)
            (static_cast<blasint>(std::min(chunk, n - i)), x + i, 1, y + i, 1, &part);
            total += part;
        }
        *static_cast<complex64_t*>(out) = total;
    } else {
        complex128_t total(0), part;
        const auto* x = static_cast<const complex128_t*>(a);
        const auto* y = static_cast<const complex128_t*>(b);
        for (int64_t i = 0; i < n; i += chunk) {
            ISTHMUS_BLAS(cblas_zdotc_sub)
            (static_cast<blasint>(std::min(chunk, n - i)), x + i, 1, y + i, 1, &part);
            total += part;
        }
        *static_cast<complex128_t*>(out) = total;
    }
}

} // namespace isthmus::cpu
