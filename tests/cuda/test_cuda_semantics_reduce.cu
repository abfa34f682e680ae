// The CUDA reduction and gemm kernels' combine orders run on the host against the CPU's.
#include <doctest/doctest.h>

#include "cuda_semantics_helpers.cuh"

using namespace semantics_helpers;

namespace {

constexpr int block_threads = 256; // reduce.cu's block

// The block tree of reduce.cu's block_reduce over one value per thread.
template <class A, class F>
A tree(std::vector<A> v, F c) {
    for (int s = block_threads / 2; s > 0; s >>= 1)
        for (int t = 0; t < s; ++t)
            v[static_cast<size_t>(t)] = c(v[t], v[static_cast<size_t>(t + s)]);
    return v[0];
}

// One row reduced as rows_kernel (+ partials_kernel) do with `chunks` pieces: each thread
// folds elements lo + t, lo + t + 256, ..., the block combines in a tree, the chunks' partials
// combine the same way.
template <k::rop OP, k::kdt I>
k::storage_t<k::acc_kdt(OP, I)> row_like_kernel(const k::storage_t<I>* p, int64_t cols,
                                                int64_t chunks) {
    using A = k::storage_t<k::acc_kdt(OP, I)>;
    const k::combine<OP, I> c;
    const int64_t per = (cols + chunks - 1) / chunks;
    std::vector<A> partial;
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
        const int64_t lo = chunk * per, hi = std::min(cols, lo + per);
        std::vector<A> th(block_threads, c.identity());
        for (int64_t j = lo; j < hi; ++j) {
            A& v = th[static_cast<size_t>((j - lo) % block_threads)];
            v = c(v, c.load(p[j]));
        }
        partial.push_back(tree(th, c));
    }
    if (chunks == 1) return partial[0];
    std::vector<A> th(block_threads, c.identity());
    for (size_t j = 0; j < partial.size(); ++j) {
        A& v = th[j % block_threads];
        v = c(v, partial[j]);
    }
    return tree(th, c);
}

template <k::rop OP, k::kdt I, k::kdt O>
void check_reduce_to(const tensor& x2, const tensor& ref, int64_t chunks, const std::string& what) {
    const int64_t rows = x2.size(0), cols = x2.size(1);
    const auto x = raw<k::storage_t<I>>(x2);
    std::vector<k::storage_t<O>> out(static_cast<size_t>(rows));
    const k::combine<OP, I> c;
    for (int64_t r = 0; r < rows; ++r)
        out[static_cast<size_t>(r)] =
            c.template result<O>(row_like_kernel<OP, I>(x.data() + r * cols, cols, chunks), cols);
    // sums in double (complex128) on both sides in different orders
    const dtype dt = ref.dtype();
    const double tol =
        is_floating(dt) || is_complex(dt)
            ? (itemsize(dt) <= 2 ? 1e-2
                                 : (dt == dtype::float32 || dt == dtype::complex64 ? 1e-6 : 1e-12))
            : 0;
    check_values(from_raw<O>(out, dt), ref, tol, what + " (" + std::to_string(chunks) + " chunks)");
}

template <k::rop OP, k::kdt I>
void check_reduce(const tensor& x2, const tensor& ref, const std::string& what) {
    REQUIRE(x2.is_contiguous());
    for (int64_t chunks : {1, 3})
        ISTHMUS_KDT_DISPATCH(kernel_type(ref.dtype()), ([&] {
                                 if constexpr (k::reduce_ok(OP, I, K))
                                     check_reduce_to<OP, I, K>(x2, ref, chunks, what);
                                 else
                                     FAIL("no kernel for " << what << " -> " << name(ref.dtype()));
                             }()))
}

// argmin/argmax as arg_rows_kernel: each thread scans j = t, t + 256, ..., then the tree.
template <bool MAX, k::kdt I>
std::vector<int64_t> arg_like_kernel(const tensor& x2) {
    using C = k::compute_t<I>;
    const int64_t rows = x2.size(0), cols = x2.size(1);
    const auto x = raw<k::storage_t<I>>(x2);
    const k::arg_combine<MAX, C> c;
    std::vector<int64_t> out;
    for (int64_t r = 0; r < rows; ++r) {
        std::vector<k::arg_acc<C>> th(block_threads, k::arg_acc<C>{C(), -1, false});
        for (int64_t j = 0; j < cols; ++j) {
            const C v = k::up<I>(x[static_cast<size_t>(r * cols + j)]);
            auto& t = th[static_cast<size_t>(j % block_threads)];
            t = c(t, k::arg_acc<C>{v, j, k::nan_of(v)});
        }
        out.push_back(tree(th, c).i);
    }
    return out;
}

// Rows with many ties: parts rounded to multiples of 2 (NaN and infinities stay).
tensor with_ties(dtype dt, int64_t rows, int64_t cols, unsigned seed) {
    const tensor v = values(dt, rows * cols, seed);
    if (is_bool(dt) || is_integer(dt))
        return floor_div(v, scalar(int64_t{8})).to(dt).view({rows, cols});
    auto c = raw<complex128_t>(v.to(dtype::complex128));
    for (auto& z : c) z = complex128_t(std::floor(z.real() / 2), std::floor(z.imag() / 2));
    tensor t = tensor::from_vector(c).to(dt);
    return t.view({rows, cols});
}

template <k::kdt I>
void check_reductions(dtype dt) {
    const int64_t rows = 3, cols = 1000;
    const std::string n = std::string(name(dt));
    const tensor x = values(dt, rows * cols, 11).view({rows, cols});
    // products of values near 1 (neither overflow nor vanish), except for integers (wrap)
    const tensor px =
        is_floating(dt) || is_complex(dt)
            ? add(mul(values(dt, rows * cols, 12), 0.01), 1.0).to(dt).view({rows, cols})
            : x;
    check_reduce<k::rop::sum, I>(x, sum(x, {1}), "sum " + n);
    check_reduce<k::rop::mean, I>(x, mean(x, {1}), "mean " + n);
    check_reduce<k::rop::prod, I>(px, prod(px, {1}), "prod " + n);
    check_reduce<k::rop::min, I>(x, min(x, {1}), "min " + n);
    check_reduce<k::rop::max, I>(x, max(x, {1}), "max " + n);
    check_reduce<k::rop::any, I>(x, any(x, {1}), "any " + n);
    check_reduce<k::rop::all, I>(x, all(x, {1}), "all " + n);
    // rows without the special values (NaN, infinities: row 0) compare the finite sums too
    const tensor fin = x.slice(0, 1, rows).contiguous();
    check_reduce<k::rop::sum, I>(fin, sum(fin, {1}), "sum (finite rows) " + n);
    check_reduce<k::rop::min, I>(fin, min(fin, {1}), "min (finite rows) " + n);
    check_reduce<k::rop::max, I>(fin, max(fin, {1}), "max (finite rows) " + n);
    const tensor t = with_ties(dt, 4, 700, 13);
    INFO("argmin/argmax with ties, ", n);
    check_reduce<k::rop::min, I>(t, min(t, {1}), "min with ties " + n);
    check_reduce<k::rop::max, I>(t, max(t, {1}), "max with ties " + n);
    CHECK(arg_like_kernel<false, I>(t) == argmin(t, 1).template to_vector<int64_t>());
    CHECK(arg_like_kernel<true, I>(t) == argmax(t, 1).template to_vector<int64_t>());
    const tensor tf = t.slice(0, 1, 4).contiguous(); // no NaN: the extremes and their ties
    CHECK(arg_like_kernel<false, I>(tf) == argmin(tf, 1).template to_vector<int64_t>());
    CHECK(arg_like_kernel<true, I>(tf) == argmax(tf, 1).template to_vector<int64_t>());
}

// ---- matmul: the gemm kernel's operand types and multiply-add, in its k order ----

template <k::kdt K>
void check_gemm(dtype dt) {
    const int64_t m = 5, kk = 37, n = 6;
    // the extremes and small values of `values`: integer products and sums wrap
    // (floats: without the special values, whose NaN/inf outcome depends on BLAS's order)
    const int64_t skip = is_floating(dt) || is_complex(dt) ? 7 : 0;
    auto draw = [&](int64_t r, int64_t c, unsigned seed) {
        return values(dt, r * c + skip, seed)
            .slice(0, skip, r * c + skip)
            .contiguous()
            .view({r, c});
    };
    const tensor a2 = draw(m, kk, 21), b = draw(kk, n, 22);
    const int64_t m2 = m;
    const auto x = raw<k::storage_t<K>>(a2), y = raw<k::storage_t<K>>(b);
    std::vector<k::storage_t<K>> out(static_cast<size_t>(m2 * n));
    for (int64_t i = 0; i < m2; ++i)
        for (int64_t j = 0; j < n; ++j) {
            auto acc = k::gemm_zero<K>();
            for (int64_t q = 0; q < kk; ++q)
                acc = k::gemm_fma<K>(acc, k::gemm_load<K>(x[static_cast<size_t>(i * kk + q)]),
                                     k::gemm_load<K>(y[static_cast<size_t>(q * n + j)]));
            out[static_cast<size_t>(i * n + j)] = k::gemm_store<K>(acc);
        }
    // floats: BLAS sums in another order (half types: float32 both sides, rounded once)
    const double tol =
        is_floating(dt) || is_complex(dt)
            ? (itemsize(dt) <= 2 ? 1e-2
                                 : (dt == dtype::float32 || dt == dtype::complex64 ? 1e-5 : 1e-12))
            : 0;
    check_values(from_raw<K>(out, dt).view({m2, n}), matmul(a2, b), tol,
                 "matmul " + std::string(name(dt)));
}

} // namespace

TEST_CASE("cuda kernels on the host: reductions combine as the CPU's on every dtype") {
    for (dtype dt : every_dtype) ISTHMUS_KDT_DISPATCH(kernel_type(dt), check_reductions<K>(dt))
}

TEST_CASE("cuda kernels on the host: the gemm kernel's products equal the CPU's matmul") {
    for (dtype dt : every_dtype) {
        INFO(name(dt));
        ISTHMUS_KDT_DISPATCH(kernel_type(dt), check_gemm<K>(dt))
    }
}
