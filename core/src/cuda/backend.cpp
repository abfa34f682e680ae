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

std::optional<cudak::kdt> kernel_type(dtype dt) {
    switch (dt) {
    case dtype::bool_:
        return cudak::kdt::b8;
    case dtype::int8:
        return cudak::kdt::i8;
    case dtype::int16:
        return cudak::kdt::i16;
    case dtype::int32:
        return cudak::kdt::i32;
    case dtype::int64:
        return cudak::kdt::i64;
    case dtype::uint8:
        return cudak::kdt::u8;
    case dtype::float32:
        return cudak::kdt::f32;
    case dtype::float64:
        return cudak::kdt::f64;
    default:
        return std::nullopt;
    }
}

bool compute_type(dtype dt) {
    return dt == dtype::int32 || dt == dtype::int64 || dt == dtype::float32 || dt == dtype::float64;
}

std::optional<cudak::bop> kernel_op(binary_op op) {
    switch (op) {
    case binary_op::add:
        return cudak::bop::add;
    case binary_op::sub:
        return cudak::bop::sub;
    case binary_op::mul:
        return cudak::bop::mul;
    case binary_op::div:
        return cudak::bop::div;
    case binary_op::maximum:
        return cudak::bop::maximum;
    case binary_op::minimum:
        return cudak::bop::minimum;
    case binary_op::pow:
        return cudak::bop::pow;
    case binary_op::atan2:
        return cudak::bop::atan2;
    case binary_op::eq:
        return cudak::bop::eq;
    case binary_op::ne:
        return cudak::bop::ne;
    case binary_op::lt:
        return cudak::bop::lt;
    case binary_op::le:
        return cudak::bop::le;
    case binary_op::gt:
        return cudak::bop::gt;
    case binary_op::ge:
        return cudak::bop::ge;
    default:
        return std::nullopt;
    }
}

std::optional<cudak::uop> kernel_op(unary_op op) {
    switch (op) {
#define ISTHMUS_MAP(X)                                                                             \
    case unary_op::X:                                                                              \
        return cudak::uop::X;
        ISTHMUS_MAP(neg)
        ISTHMUS_MAP(abs)
        ISTHMUS_MAP(sign)
        ISTHMUS_MAP(exp)
        ISTHMUS_MAP(log)
        ISTHMUS_MAP(log2)
        ISTHMUS_MAP(log10)
        ISTHMUS_MAP(expm1)
        ISTHMUS_MAP(log1p)
        ISTHMUS_MAP(sqrt)
        ISTHMUS_MAP(rsqrt)
        ISTHMUS_MAP(sin)
        ISTHMUS_MAP(cos)
        ISTHMUS_MAP(tan)
        ISTHMUS_MAP(asin)
        ISTHMUS_MAP(acos)
        ISTHMUS_MAP(atan)
        ISTHMUS_MAP(sinh)
        ISTHMUS_MAP(cosh)
        ISTHMUS_MAP(tanh)
        ISTHMUS_MAP(floor)
        ISTHMUS_MAP(ceil)
        ISTHMUS_MAP(round)
        ISTHMUS_MAP(square)
        ISTHMUS_MAP(reciprocal)
        ISTHMUS_MAP(isnan)
        ISTHMUS_MAP(isinf)
        ISTHMUS_MAP(isfinite)
#undef ISTHMUS_MAP
    default:
        return std::nullopt;
    }
}

bool float_only(cudak::uop op) {
    using cudak::uop;
    return !(op == uop::neg || op == uop::abs || op == uop::sign || op == uop::square);
}

// Builds the launch's iteration space and operand strides, merging neighbouring dimensions
// where every operand allows it (so most launches have rank 1 or 2).
struct launch {
    cudak::space sp;
    cudak::arg args[3];

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
    dev_.activate();
    cublasHandle_t h = nullptr;
    const cublasStatus_t st = cublasCreate(&h);
    ISTHMUS_CHECK(st == CUBLAS_STATUS_SUCCESS, runtime_error, "cuBLAS error ",
                  cublasGetStatusName(st), " in cublasCreate for ", dev_.name());
    cublasSetStream(h, dev_.stream());
    blas_ = h;
#endif
}

cuda_compute::~cuda_compute() = default; // the handle lives as long as the process

std::string cuda_compute::name() const {
    return dev_.name();
}

bool cuda_compute::supports_binary(binary_op op, dtype dt) const {
    const auto k = kernel_op(op);
    if (!k || !compute_type(dt)) return false;
    using cudak::bop;
    if ((*k == bop::div || *k == bop::pow || *k == bop::atan2) && !is_floating(dt)) return false;
    return true;
}

void cuda_compute::binary(binary_op op, const shape_t& shape, const backend::operand& out,
                          const backend::operand& a, const backend::operand& b) {
    launch l(shape, {&out, &a, &b});
    if (l.sp.numel == 0) return;
    dev_.activate();
    cudak::launch_binary(dev_.stream(), *kernel_op(op), *kernel_type(a.dt), *kernel_type(out.dt),
                         l.sp, l.args[0], l.args[1], l.args[2]);
    ISTHMUS_CUDA_LAUNCHED(dev_.stream(), "binary");
}

bool cuda_compute::supports_unary(unary_op op, dtype dt) const {
    const auto k = kernel_op(op);
    if (!k || !compute_type(dt)) return false;
    return !float_only(*k) || is_floating(dt);
}

void cuda_compute::unary(unary_op op, const shape_t& shape, const backend::operand& out,
                         const backend::operand& a) {
    launch l(shape, {&out, &a});
    if (l.sp.numel == 0) return;
    dev_.activate();
    cudak::launch_unary(dev_.stream(), *kernel_op(op), *kernel_type(a.dt), *kernel_type(out.dt),
                        l.sp, l.args[0], l.args[1]);
    ISTHMUS_CUDA_LAUNCHED(dev_.stream(), "unary");
}

bool cuda_compute::supports_fill(dtype dt) const {
    return kernel_type(dt).has_value();
}

void cuda_compute::fill(const shape_t& shape, const backend::operand& out,
                        const backend::operand& value) {
    copy(shape, out, value);
}

bool cuda_compute::supports_copy(dtype out, dtype in) const {
    return kernel_type(out).has_value() && kernel_type(in).has_value();
}

void cuda_compute::copy(const shape_t& shape, const backend::operand& out,
                        const backend::operand& in) {
    launch l(shape, {&out, &in});
    if (l.sp.numel == 0) return;
    dev_.activate();
    cudak::launch_copy(dev_.stream(), *kernel_type(out.dt), *kernel_type(in.dt), l.sp, l.args[0],
                       l.args[1]);
    ISTHMUS_CUDA_LAUNCHED(dev_.stream(), "copy");
}

bool cuda_compute::supports_reduce(backend::reduce_kind, dtype in, dtype out) const {
    return kernel_type(in).has_value() && kernel_type(out).has_value();
}

void cuda_compute::reduce(backend::reduce_kind kind, int64_t rows, int64_t cols, void* out,
                          dtype out_dt, const void* in, dtype in_dt) {
    if (rows == 0) return;
    dev_.activate();
    const int64_t chunks = cudak::reduce_chunks(rows, cols);
    void* scratch = chunks > 1 ? dev_.scratch(static_cast<size_t>(rows * chunks) * 8) : nullptr;
    try {
        cudak::launch_reduce(dev_.stream(), static_cast<cudak::rop>(static_cast<int>(kind)),
                             *kernel_type(in_dt), *kernel_type(out_dt), rows, cols, in, out,
                             scratch);
        ISTHMUS_CUDA_LAUNCHED(dev_.stream(), "reduce");
    } catch (...) {
        dev_.free_scratch(scratch);
        throw;
    }
    dev_.free_scratch(scratch); // reused only by later work on the same stream
}

bool cuda_compute::supports_matmul(dtype dt) const {
    return dt == dtype::float32 || dt == dtype::float64;
}

void cuda_compute::matmul(dtype dt, int64_t batch, int64_t m, int64_t n, int64_t k, const void* a,
                          const void* b, void* c) {
    if (batch == 0 || m == 0 || n == 0) return;
    dev_.activate();
    if (k == 0) {
        ISTHMUS_CUDA_CHECK(cudaMemsetAsync(c, 0, static_cast<size_t>(batch * m * n) * itemsize(dt),
                                           dev_.stream()));
        return;
    }
#if ISTHMUS_HAVE_CUBLAS
    // Note [row-major gemm]: cuBLAS is column-major; a row-major C = A B is the column-major
    // C^T = B^T A^T, so B and A are passed in swapped order with their row lengths as leading
    // dimensions, and nothing is transposed or copied.
    std::lock_guard lk(blas_mu_);
    auto h = static_cast<cublasHandle_t>(blas_);
    cublasStatus_t st;
    const int M = static_cast<int>(m), N = static_cast<int>(n), K = static_cast<int>(k);
    ISTHMUS_CHECK(m <= INT32_MAX && n <= INT32_MAX && k <= INT32_MAX, value_error, "matmul on ",
                  name(), ": dimensions past 2^31 are not supported by cuBLAS");
    if (dt == dtype::float32) {
        const float one = 1.f, zero = 0.f;
        st = cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one,
                                       static_cast<const float*>(b), N, k * n,
                                       static_cast<const float*>(a), K, m * k, &zero,
                                       static_cast<float*>(c), N, m * n, static_cast<int>(batch));
    } else {
        const double one = 1.0, zero = 0.0;
        st = cublasDgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one,
                                       static_cast<const double*>(b), N, k * n,
                                       static_cast<const double*>(a), K, m * k, &zero,
                                       static_cast<double*>(c), N, m * n, static_cast<int>(batch));
    }
    ISTHMUS_CHECK(st == CUBLAS_STATUS_SUCCESS, runtime_error, "cuBLAS error ",
                  cublasGetStatusName(st), " in cublas", dt == dtype::float32 ? "S" : "D",
                  "gemmStridedBatched(", m, "x", k, " @ ", k, "x", n, ", batch ", batch, ") on ",
                  name(), " at ", __FILE__, ":", __LINE__);
#else
    cudak::launch_gemm(dev_.stream(), *kernel_type(dt), batch, m, n, k, a, b, c);
    ISTHMUS_CUDA_LAUNCHED(dev_.stream(), "gemm");
#endif
}

} // namespace isthmus::cudabk
