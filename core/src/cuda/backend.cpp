// The CUDA compute backend: maps the op layer's requests onto the kernels and cuBLAS.
#include "cuda/backend.hpp"
#include "cuda/check.hpp"

#include <cstring>
#include <optional>

#if ISTHMUS_HAVE_CUBLAS
#include <cublas_v2.h>
#endif

namespace isthmus::cudabk {

namespace {

// Every isthmus dtype has a kernel type (the enums list them in the same order).
cudak::kdt kernel_type(dtype dt) {
    static_assert(dtype_count == 15 && static_cast<int>(dtype::complex128) == 14 &&
                  static_cast<int>(cudak::kdt::c128) == 14);
    return static_cast<cudak::kdt>(static_cast<int>(dt));
}

// Builds the launch's iteration space and operand strides, merging neighbouring dimensions
// where every operand allows it (so most launches have rank 1 or 2).
struct launch {
    cudak::space sp;
    cudak::arg args[4];

    launch(const shape_t& shape, std::initializer_list<const backend::operand*> ops) {
        const int n = static_cast<int>(ops.size());
        std::vector<int64_t> dims;
        std::vector<std::vector<int64_t>> st(static_cast<size_t>(n));
        for (size_t d = 0; d < shape.size(); ++d) {
            if (shape[d] == 1) continue; // size-1 dims move nothing
            const bool first = dims.empty();
            bool merge = !first;
            int k = 0;
            for (const backend::operand* o : ops) {
                const int64_t s = o->data ? (*o->strides)[d] : 0;
                if (merge && st[static_cast<size_t>(k)].back() != s * shape[d]) merge = false;
                ++k;
            }
            k = 0;
            for (const backend::operand* o : ops) {
                const int64_t s = o->data ? (*o->strides)[d] : 0;
                if (merge)
                    st[static_cast<size_t>(k)].back() = s;
                else
                    st[static_cast<size_t>(k)].push_back(s);
                ++k;
            }
            if (merge)
                dims.back() *= shape[d];
            else
                dims.push_back(shape[d]);
        }
        ISTHMUS_ASSERT(dims.size() <= static_cast<size_t>(cudak::max_dims), "rank too large");
        sp.rank = static_cast<int>(dims.size());
        sp.numel = 1;
        for (size_t d = 0; d < dims.size(); ++d) {
            sp.shape[d] = dims[d];
            sp.numel *= dims[d];
        }
        sp.contiguous = true;
        int k = 0;
        for (const backend::operand* o : ops) {
            cudak::arg& a = args[k];
            a.data = o->data;
            std::memcpy(a.value, o->value, sizeof a.value);
            for (size_t d = 0; d < dims.size(); ++d) a.strides[d] = st[static_cast<size_t>(k)][d];
            // contiguous: rank <= 1 with unit stride (after merging, a dense row-major operand
            // is one dimension)
            if (o->data && !(sp.rank == 0 || (sp.rank == 1 && a.strides[0] == 1)))
                sp.contiguous = false;
            ++k;
        }
    }
};

} // namespace

cuda_compute::cuda_compute(device& dev) : dev_(dev) {
#if ISTHMUS_HAVE_CUBLAS
    const device_guard on(dev_.ordinal());
    cublasHandle_t h = nullptr;
    const cublasStatus_t st = cublasCreate(&h);
    ISTHMUS_CHECK(st == CUBLAS_STATUS_SUCCESS, runtime_error, "cuBLAS error ",
                  cublasGetStatusName(st), " in cublasCreate for ", dev_.name());
    // every cuBLAS call must run on the device's stream (on the legacy default stream it would
    // race with the kernels queued on it: isthmus's stream is non-blocking)
    const cublasStatus_t ss = cublasSetStream(h, dev_.stream());
    if (ss != CUBLAS_STATUS_SUCCESS) cublasDestroy(h);
    ISTHMUS_CHECK(ss == CUBLAS_STATUS_SUCCESS, runtime_error, "cuBLAS error ",
                  cublasGetStatusName(ss), " in cublasSetStream for ", dev_.name());
    blas_ = h;
#endif
}

cuda_compute::~cuda_compute() = default; // the handle lives as long as the process

std::string cuda_compute::name() const {
    return dev_.name();
}

bool cuda_compute::supports_binary(binary_op op, dtype dt) const {
    return cudak::binary_ok(op, kernel_type(dt));
}

void cuda_compute::binary(binary_op op, dtype dt, const shape_t& shape, const backend::operand& out,
                          const backend::operand& a, const backend::operand& b) {
    const cudak::bop k = op;
    ISTHMUS_ASSERT(a.dt == dt && b.dt == dt && cudak::binary_ok(k, kernel_type(a.dt)) &&
                       out.dt == (cudak::binary_gives_bool(k) ? dtype::bool_ : a.dt),
                   "cuda binary ", isthmus::name(op), ": operands ", a.dt, ", ", b.dt, " -> ",
                   out.dt);
    launch l(shape, {&out, &a, &b});
    if (l.sp.numel == 0) return;
    const device_guard on(dev_.ordinal());
    cudak::launch_binary(dev_.stream(), k, kernel_type(a.dt), l.sp, l.args[0], l.args[1],
                         l.args[2]);
    ISTHMUS_CUDA_LAUNCHED(dev_.stream(), "binary");
}

bool cuda_compute::supports_unary(unary_op op, dtype dt) const {
    return cudak::unary_ok(op, kernel_type(dt));
}

void cuda_compute::unary(unary_op op, dtype dt, const shape_t& shape, const backend::operand& out,
                         const backend::operand& a) {
    const cudak::uop k = op;
    ISTHMUS_ASSERT(a.dt == dt && cudak::unary_ok(k, kernel_type(a.dt)) &&
                       kernel_type(out.dt) == cudak::unary_result(k, kernel_type(a.dt)),
                   "cuda unary ", isthmus::name(op), ": operand ", a.dt, " -> ", out.dt);
    launch l(shape, {&out, &a});
    if (l.sp.numel == 0) return;
    const device_guard on(dev_.ordinal());
    cudak::launch_unary(dev_.stream(), k, kernel_type(a.dt), l.sp, l.args[0], l.args[1]);
    ISTHMUS_CUDA_LAUNCHED(dev_.stream(), "unary");
}

bool cuda_compute::supports_ternary(backend::ternary_op op, dtype dt) const {
    return cudak::ternary_ok(static_cast<cudak::top>(static_cast<int>(op)), kernel_type(dt));
}

void cuda_compute::ternary(backend::ternary_op op, dtype dt, const shape_t& shape,
                           const backend::operand& out, const backend::operand& a,
                           const backend::operand& b, const backend::operand& c) {
    static_assert(static_cast<int>(backend::ternary_op::clamp) ==
                      static_cast<int>(cudak::top::clamp) &&
                  static_cast<int>(backend::ternary_op::fma) == static_cast<int>(cudak::top::fma));
    const auto k = static_cast<cudak::top>(static_cast<int>(op));
    ISTHMUS_ASSERT(out.dt == dt && cudak::ternary_ok(k, kernel_type(out.dt)) && b.dt == out.dt &&
                       c.dt == out.dt &&
                       a.dt == (op == backend::ternary_op::where ? dtype::bool_ : out.dt),
                   "cuda ternary: operands ", a.dt, ", ", b.dt, ", ", c.dt, " -> ", out.dt);
    launch l(shape, {&out, &a, &b, &c});
    if (l.sp.numel == 0) return;
    const device_guard on(dev_.ordinal());
    cudak::launch_ternary(dev_.stream(), k, kernel_type(out.dt), l.sp, l.args[0], l.args[1],
                          l.args[2], l.args[3]);
    ISTHMUS_CUDA_LAUNCHED(dev_.stream(), "ternary");
}

bool cuda_compute::supports_fill(dtype) const {
    return true;
}

namespace {
// A tensor operand of an elementwise launch over its own shape.
backend::operand operand_of(const tensor& t, const void* data) {
    backend::operand o;
    o.data = data;
    o.dt = t.dtype();
    o.strides = &t.strides();
    return o;
}
} // namespace

void cuda_compute::fill(const tensor& out, void* out_data, const backend::operand& value) {
    launch_copy(out.shape(), operand_of(out, out_data), value);
}

bool cuda_compute::supports_copy(dtype, dtype) const {
    return true;
}

void cuda_compute::copy(const tensor& out, void* out_data, const tensor& in, const void* in_data) {
    launch_copy(out.shape(), operand_of(out, out_data), operand_of(in, in_data));
}

void cuda_compute::launch_copy(const shape_t& shape, const backend::operand& out,
                               const backend::operand& in) {
    launch l(shape, {&out, &in});
    if (l.sp.numel == 0) return;
    const device_guard on(dev_.ordinal());
    cudak::launch_copy(dev_.stream(), kernel_type(out.dt), kernel_type(in.dt), l.sp, l.args[0],
                       l.args[1]);
    ISTHMUS_CUDA_LAUNCHED(dev_.stream(), "copy");
}

namespace {
cudak::rop kernel_reduce(backend::reduce_kind kind) {
    static_assert(static_cast<int>(backend::reduce_kind::argmax) ==
                  static_cast<int>(cudak::rop::argmax));
    return static_cast<cudak::rop>(static_cast<int>(kind));
}
} // namespace

bool cuda_compute::supports_reduce(backend::reduce_kind kind, dtype in, dtype out) const {
    return cudak::reduce_ok(kernel_reduce(kind), kernel_type(in), kernel_type(out));
}

// The canonical form (Note [canonical forms]): `in` contiguous with the reduced dimensions
// last, so each output reduces one contiguous row of `cols` elements.
void cuda_compute::reduce(backend::reduce_kind kind, const tensor& out_t, void* out,
                          const tensor& in_t, const void* in, const std::vector<bool>& reduced) {
    const int64_t rows = out_t.numel();
    int64_t cols = 1;
    for (size_t d = 0; d < reduced.size(); ++d)
        if (reduced[d]) cols *= in_t.shape()[d];
    const dtype out_dt = out_t.dtype(), in_dt = in_t.dtype();
    ISTHMUS_ASSERT(in_t.is_contiguous() && out_t.is_contiguous(),
                   "cuda reduce: operands not in the canonical (contiguous) form");
    if (rows == 0) return;
    const device_guard on(dev_.ordinal());
    const int64_t chunks = cudak::reduce_chunks(kernel_reduce(kind), rows, cols);
    void* scratch = chunks > 1
                        ? dev_.scratch(static_cast<size_t>(rows * chunks * cudak::reduce_acc_bytes))
                        : nullptr;
    try {
        cudak::launch_reduce(dev_.stream(), kernel_reduce(kind), kernel_type(in_dt),
                             kernel_type(out_dt), rows, cols, in, out, scratch);
        ISTHMUS_CUDA_LAUNCHED(dev_.stream(), "reduce");
    } catch (...) {
        dev_.free_scratch(scratch);
        throw;
    }
    dev_.free_scratch(scratch); // reused only by later work on the same stream
}

bool cuda_compute::supports_cumulative(bool, dtype dt) const {
    return cudak::cumulative_ok(kernel_type(dt));
}

void cuda_compute::cumulative(bool prod, const tensor& out_t, void* out, const tensor& in_t,
                              const void* in, int64_t axis) {
    const dtype dt = in_t.dtype();
    int64_t pre = 1, post = 1; // the dimensions before and after the axis
    for (int64_t d = 0; d < axis; ++d) pre *= in_t.shape()[static_cast<size_t>(d)];
    for (int64_t d = axis + 1; d < in_t.dim(); ++d) post *= in_t.shape()[static_cast<size_t>(d)];
    const int64_t len = in_t.shape()[static_cast<size_t>(axis)];
    ISTHMUS_ASSERT(cudak::cumulative_ok(kernel_type(dt)) && out_t.dtype() == dt &&
                       in_t.is_contiguous() && out_t.is_contiguous(),
                   "cuda cumulative: no kernel for ", dt);
    if (pre * len * post == 0) return;
    const device_guard on(dev_.ordinal());
    const int64_t chunks = cudak::cumulative_chunks(pre, len, post);
    void* scratch = chunks > 1
                        ? dev_.scratch(static_cast<size_t>(
                              pre * post * chunks * cudak::cumulative_acc_bytes(kernel_type(dt))))
                        : nullptr;
    try {
        cudak::launch_cumulative(dev_.stream(), prod, kernel_type(dt), pre, len, post, in, out,
                                 scratch);
        ISTHMUS_CUDA_LAUNCHED(dev_.stream(), "cumulative");
    } catch (...) {
        dev_.free_scratch(scratch);
        throw;
    }
    dev_.free_scratch(scratch); // reused only by later work on the same stream
}

bool cuda_compute::supports_sort(dtype dt) const {
    return cudak::sort_ok(kernel_type(dt));
}

void cuda_compute::sort(const tensor& in_t, const void* in, void* values, int64_t* indices,
                        bool descending) {
    ISTHMUS_ASSERT(cudak::sort_ok(kernel_type(in_t.dtype())) && in_t.is_contiguous() &&
                       in_t.dim() >= 1,
                   "cuda sort: no kernel for ", in_t.dtype());
    const int64_t len = in_t.shape().back();
    const int64_t rows = len == 0 ? 0 : in_t.numel() / len;
    if (rows == 0) return;
    const device_guard on(dev_.ordinal());
    const cudak::kdt t = kernel_type(in_t.dtype());
    const size_t bytes = cudak::sort_scratch_bytes(dev_.stream(), t, rows, len);
    void* scratch = dev_.scratch(bytes);
    const cudaError_t rc = cudak::launch_sort(dev_.stream(), t, rows, len, in, values, indices,
                                              descending, scratch, bytes);
    dev_.free_scratch(scratch); // reused only by later work on the same stream
    ISTHMUS_CUDA_CHECK(rc);
    ISTHMUS_CUDA_LAUNCHED(dev_.stream(), "sort");
}

bool cuda_compute::supports_searchsorted(dtype dt) const {
    return cudak::sort_ok(kernel_type(dt));
}

void cuda_compute::searchsorted(const tensor& sorted_t, const void* sorted, const tensor& values_t,
                                const void* values, int64_t* out, bool right) {
    ISTHMUS_ASSERT(cudak::sort_ok(kernel_type(sorted_t.dtype())) &&
                       sorted_t.dtype() == values_t.dtype() && sorted_t.numel() > 0,
                   "cuda searchsorted: no kernel for ", sorted_t.dtype());
    if (values_t.numel() == 0) return;
    const device_guard on(dev_.ordinal());
    cudak::launch_searchsorted(dev_.stream(), kernel_type(sorted_t.dtype()), sorted,
                               sorted_t.numel(), values, values_t.numel(), out, right);
    ISTHMUS_CUDA_LAUNCHED(dev_.stream(), "searchsorted");
}

namespace {
cudak::rest_layout rest_of(const shape_t& rest, const shape_t& a, const shape_t& b) {
    ISTHMUS_ASSERT(rest.size() <= static_cast<size_t>(cudak::max_dims) && a.size() == rest.size() &&
                       b.size() == rest.size(),
                   "cuda index: rank ", rest.size());
    cudak::rest_layout g;
    g.rank = static_cast<int>(rest.size());
    for (size_t d = 0; d < rest.size(); ++d) {
        g.shape[d] = rest[d];
        g.a[d] = a[d];
        g.b[d] = b[d];
        g.numel *= rest[d];
    }
    return g;
}
} // namespace

bool cuda_compute::supports_index(size_t itemsize) const {
    return itemsize == 1 || itemsize == 2 || itemsize == 4 || itemsize == 8 || itemsize == 16;
}

// The canonical index rows: a device array of byte offsets (rows_inner is a CPU loop hint).
void cuda_compute::gather(size_t itemsize, const backend::index_rows& at, void* out,
                          int64_t out_row, const void* src, const shape_t& rest,
                          const shape_t& out_rest, const shape_t& src_rest, bool) {
    ISTHMUS_ASSERT(at.off != nullptr, "cuda gather: index rows not in the canonical form");
    const int64_t rows = at.count;
    const int64_t* row_off = at.off;
    const cudak::rest_layout g = rest_of(rest, src_rest, out_rest);
    if (rows == 0 || g.numel == 0) return;
    const device_guard on(dev_.ordinal());
    cudak::launch_index(dev_.stream(), false, itemsize, rows, row_off, const_cast<void*>(src), out,
                        out_row, g);
    ISTHMUS_CUDA_LAUNCHED(dev_.stream(), "gather");
}

void cuda_compute::scatter(size_t itemsize, const backend::index_rows& at, void* dst,
                           const void* val, int64_t val_row, const shape_t& rest,
                           const shape_t& dst_rest, const shape_t& val_rest, bool) {
    ISTHMUS_ASSERT(at.off != nullptr, "cuda scatter: index rows not in the canonical form");
    const int64_t rows = at.count;
    const int64_t* row_off = at.off;
    const cudak::rest_layout g = rest_of(rest, dst_rest, val_rest);
    if (rows == 0 || g.numel == 0) return;
    const device_guard on(dev_.ordinal());
    cudak::launch_index(dev_.stream(), true, itemsize, rows, row_off, dst, const_cast<void*>(val),
                        val_row, g);
    ISTHMUS_CUDA_LAUNCHED(dev_.stream(), "scatter");
}

bool cuda_compute::supports_random(dtype dt, bool integer) const {
    if (integer) return !is_complex(dt);
    return is_floating(dt);
}

void cuda_compute::random_real(dtype dt, bool normal, void* data, int64_t n, uint64_t seed,
                               uint64_t first_block, double a, double b) {
    ISTHMUS_ASSERT(is_floating(dt), "cuda random_real: not a real floating dtype: ", dt);
    if (n == 0) return;
    const device_guard on(dev_.ordinal());
    cudak::launch_random_real(dev_.stream(), kernel_type(dt), normal, data, n, seed, first_block, a,
                              b);
    ISTHMUS_CUDA_LAUNCHED(dev_.stream(), "random_real");
}

void cuda_compute::random_int(dtype dt, void* data, int64_t n, uint64_t seed, uint64_t first_block,
                              int64_t lo, uint64_t range) {
    ISTHMUS_ASSERT(!is_complex(dt), "cuda random_int: complex dtype");
    if (n == 0) return;
    const device_guard on(dev_.ordinal());
    cudak::launch_random_int(dev_.stream(), kernel_type(dt), data, n, seed, first_block, lo, range);
    ISTHMUS_CUDA_LAUNCHED(dev_.stream(), "random_int");
}

bool cuda_compute::supports_matmul(dtype dt) const {
    return cudak::gemm_ok(kernel_type(dt));
}

// The canonical form: contiguous operands of one batch shape, c's (Note [canonical forms]).
void cuda_compute::matmul(const tensor& c_t, void* c, const tensor& a_t, const void* a,
                          const tensor&, const void* b) {
    const dtype dt = c_t.dtype();
    const int64_t m = c_t.size(-2), n = c_t.size(-1), k = a_t.size(-1);
    int64_t batch = 1;
    for (int64_t d = 0; d + 2 < c_t.dim(); ++d) batch *= c_t.size(d);
    if (batch == 0 || m == 0 || n == 0) return;
    const device_guard on(dev_.ordinal());
    if (k == 0) {
        ISTHMUS_CUDA_CHECK(cudaMemsetAsync(c, 0, static_cast<size_t>(batch * m * n) * itemsize(dt),
                                           dev_.stream()));
        return;
    }
#if ISTHMUS_HAVE_CUBLAS
    if (!cudak::gemm_blas(kernel_type(dt))) {
        // integers and bool: the module's kernel (cuBLAS has no wrapping integer gemm)
        cudak::launch_gemm(dev_.stream(), kernel_type(dt), batch, m, n, k, a, b, c);
        ISTHMUS_CUDA_LAUNCHED(dev_.stream(), "gemm");
        return;
    }
    // Note [row-major gemm]
    // ~~~~~~~~~~~~~~~~~~~~~
    // cuBLAS is column-major; a row-major C = A B is the column-major C^T = B^T A^T, so B and A are
    // passed in swapped order with their row lengths as leading dimensions, and nothing is
    // transposed or copied.
    ISTHMUS_CHECK(m <= INT32_MAX && n <= INT32_MAX && k <= INT32_MAX && batch <= INT32_MAX,
                  value_error, "matmul on ", name(), ": dimensions past 2^31 are not supported by ",
                  "cuBLAS (got ", m, "x", k, " @ ", k, "x", n, ", batch ", batch, ")");
    std::lock_guard lk(blas_mu_);
    auto h = static_cast<cublasHandle_t>(blas_);
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    const char* fn = "";
    const int M = static_cast<int>(m), N = static_cast<int>(n), K = static_cast<int>(k),
              B = static_cast<int>(batch);
    const long long sa = m * k, sb = k * n, sc = m * n;
    switch (dt) {
    case dtype::float32: {
        const float one = 1.f, zero = 0.f;
        fn = "cublasSgemmStridedBatched";
        st = cublasSgemmStridedBatched(
            h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, static_cast<const float*>(b), N, sb,
            static_cast<const float*>(a), K, sa, &zero, static_cast<float*>(c), N, sc, B);
        break;
    }
    case dtype::float64: {
        const double one = 1.0, zero = 0.0;
        fn = "cublasDgemmStridedBatched";
        st = cublasDgemmStridedBatched(
            h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, static_cast<const double*>(b), N, sb,
            static_cast<const double*>(a), K, sa, &zero, static_cast<double*>(c), N, sc, B);
        break;
    }
    case dtype::float16:
    case dtype::bfloat16: {
        // Note [half gemm]
        // ~~~~~~~~~~~~~~~~
        // Half inputs and output, float32 accumulation (the tensor cores' mode), one rounding at
        // the end: the CPU path's result (Note [matmul dtypes]).
        const float one = 1.f, zero = 0.f;
        const cudaDataType t = dt == dtype::float16 ? CUDA_R_16F : CUDA_R_16BF;
        fn = "cublasGemmStridedBatchedEx";
        st = cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, b, t, N, sb, a,
                                        t, K, sa, &zero, c, t, N, sc, B, CUBLAS_COMPUTE_32F,
                                        CUBLAS_GEMM_DEFAULT);
        break;
    }
    case dtype::complex64: {
        const cuComplex one{1.f, 0.f}, zero{0.f, 0.f};
        fn = "cublasCgemmStridedBatched";
        st = cublasCgemmStridedBatched(
            h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, static_cast<const cuComplex*>(b), N, sb,
            static_cast<const cuComplex*>(a), K, sa, &zero, static_cast<cuComplex*>(c), N, sc, B);
        break;
    }
    case dtype::complex128: {
        const cuDoubleComplex one{1.0, 0.0}, zero{0.0, 0.0};
        fn = "cublasZgemmStridedBatched";
        st = cublasZgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one,
                                       static_cast<const cuDoubleComplex*>(b), N, sb,
                                       static_cast<const cuDoubleComplex*>(a), K, sa, &zero,
                                       static_cast<cuDoubleComplex*>(c), N, sc, B);
        break;
    }
    default:
        ISTHMUS_ASSERT(false, "cuda matmul: no kernel for ", dt);
    }
    ISTHMUS_CHECK(st == CUBLAS_STATUS_SUCCESS, runtime_error, "cuBLAS error ",
                  cublasGetStatusName(st), " in ", fn, "(", m, "x", k, " @ ", k, "x", n, ", batch ",
                  batch, ", ", dt, ") on ", name(), " at ", __FILE__, ":", __LINE__);
#else
    ISTHMUS_ASSERT(cudak::gemm_ok(kernel_type(dt)), "cuda matmul: no kernel for ", dt);
    cudak::launch_gemm(dev_.stream(), kernel_type(dt), batch, m, n, k, a, b, c);
    ISTHMUS_CUDA_LAUNCHED(dev_.stream(), "gemm");
#endif
}

} // namespace isthmus::cudabk
