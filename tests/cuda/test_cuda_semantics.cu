// The CUDA kernels' element functions run on the host against the CPU kernels (no GPU needed).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "cuda/elementwise_cmath.cuh"
#include "cuda/gemm.cuh"
#include "cuda/random.cuh"
#include "cuda/reduce.cuh"

#include <isthmus/error.hpp>
#include <isthmus/ops.hpp>
#include <isthmus/tensor.hpp>

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace isthmus;
namespace k = isthmus::cudak;

// Note [element semantics test]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The kernels of core/src/cuda compute each element with host-and-device functions (bapply, uapply,
// convert, the random maps). This suite calls those same functions on the host, element by element
// over CPU tensors, and compares with the CPU ops: the GPU's arithmetic, casting and random streams
// are checked on machines without a GPU. What it cannot check (indexing, vector loads, reductions,
// launches) is covered by test_cuda_ops.cpp on a GPU.

namespace {

const std::vector<dtype> every_dtype = {
    dtype::bool_,    dtype::int8,    dtype::int16,   dtype::int32,     dtype::int64,
    dtype::uint8,    dtype::uint16,  dtype::uint32,  dtype::uint64,    dtype::float16,
    dtype::bfloat16, dtype::float32, dtype::float64, dtype::complex64, dtype::complex128};

// Random values with the interesting ones mixed in: 0, -1, the type's extremes for integers;
// 0, -0, +-inf, NaN, halves for floats.
tensor values(dtype dt, int64_t n, unsigned seed) {
    std::mt19937 g(seed);
    std::normal_distribution<double> d(0.0, 4.0);
    std::uniform_int_distribution<int> small(-40, 40);
    std::vector<double> v(static_cast<size_t>(n));
    for (double& x : v) x = is_integer(dt) || is_bool(dt) ? small(g) : d(g);
    if (is_bool(dt))
        for (double& x : v) x = x > 0;
    tensor t = tensor::from_vector(v).to(dt);
    if (is_complex(dt)) {
        std::vector<double> w(static_cast<size_t>(n));
        for (double& x : w) x = d(g);
        imag(t).copy_from(tensor::from_vector(w));
    }
    // specials at fixed places
    const auto put = [&](int64_t i, double x) {
        if (i < n) t.select(0, i).fill(x);
    };
    if (is_floating(dt) || is_complex(dt)) {
        put(0, 0.0);
        put(1, -0.0);
        put(2, std::numeric_limits<double>::infinity());
        put(3, -std::numeric_limits<double>::infinity());
        put(4, std::nan(""));
        put(5, 2.5);
        put(6, -2.5);
    } else if (is_integer(dt)) {
        put(0, 0);
        put(1, is_signed_int(dt) ? -1.0 : 1.0);
        put(2, 1);
        if (n > 3) { // the extremes: the minimum of a signed type, the maximum of an unsigned
            if (is_signed_int(dt))
                t.select(0, 3).fill(-std::ldexp(1.0, static_cast<int>(8 * itemsize(dt)) - 1));
            else
                t.slice(0, 3, 4).copy_from(full({1}, scalar(std::numeric_limits<uint64_t>::max())));
        }
    }
    return t;
}

// Complex values for the complex functions: every pair of special parts (signed zeros, +-1,
// +-2 (past the branch points of asin/acos/atan/log), halves, tiny and huge magnitudes that
// overflow products, +-inf, NaN), so that every branch cut is met from both sides, then random
// ones.
tensor complex_values(dtype dt, unsigned seed) {
    const double inf = std::numeric_limits<double>::infinity();
    const bool single = dt == dtype::complex64;
    const double big = single ? 1e30 : 1e300, tiny = single ? 1e-30 : 1e-300;
    const std::vector<double> parts = {0.0,  -0.0, 1.0,  -1.0, 0.5, -0.5, 2.0,         -2.0,
                                       tiny, big,  -big, 30.0, inf, -inf, std::nan("")};
    std::vector<complex128_t> v;
    for (double re : parts)
        for (double im : parts) v.emplace_back(re, im);
    std::mt19937 g(seed);
    std::normal_distribution<double> d(0.0, 3.0);
    for (int i = 0; i < 64; ++i) v.emplace_back(d(g), d(g));
    return tensor::from_vector(v).to(dt);
}

template <class T>
std::vector<T> raw(const tensor& t) {
    const tensor c = t.contiguous();
    std::vector<T> v(static_cast<size_t>(c.numel()));
    void* p = c.lock(LOCK_READ, MEMRESOURCE_CPU);
    if (!v.empty()) std::memcpy(v.data(), p, v.size() * sizeof(T));
    c.unlock(LOCK_READ, MEMRESOURCE_CPU);
    return v;
}

template <k::kdt K>
tensor from_raw(const std::vector<k::storage_t<K>>& v, dtype dt) {
    tensor t = tensor::empty({static_cast<int64_t>(v.size())}, dt, MEMRESOURCE_CPU);
    void* p = t.lock(LOCK_WRITE, MEMRESOURCE_CPU);
    if (!v.empty()) std::memcpy(p, v.data(), v.size() * sizeof(v[0]));
    t.unlock(LOCK_WRITE, MEMRESOURCE_CPU);
    return t;
}

bool close(double g, double r, double tol) {
    if (std::isnan(r)) return std::isnan(g);
    if (std::isinf(r) || tol == 0) return g == r;
    return std::abs(g - r) <= tol * (1 + std::abs(r));
}

// Same values (NaN equals NaN; -0 equals 0); floats within tol relative.
void check_values(const tensor& got, const tensor& ref, double tol, const std::string& what) {
    INFO(what);
    REQUIRE(got.dtype() == ref.dtype());
    REQUIRE(got.numel() == ref.numel());
    if (is_complex(ref.dtype())) {
        check_values(real(got), real(ref), tol, what + " (real part)");
        check_values(imag(got), imag(ref), tol, what + " (imaginary part)");
    } else if (is_floating(ref.dtype())) {
        const auto g = got.to_vector<double>(), r = ref.to_vector<double>();
        for (size_t i = 0; i < r.size(); ++i)
            if (!close(g[i], r[i], tol))
                FAIL_CHECK("element " << i << ": kernel " << g[i] << ", CPU " << r[i]);
    } else if (is_signed_int(ref.dtype())) {
        CHECK(got.to_vector<int64_t>() == ref.to_vector<int64_t>());
    } else {
        CHECK(got.to_vector<uint64_t>() == ref.to_vector<uint64_t>());
    }
}

k::kdt kernel_type(dtype dt) {
    return static_cast<k::kdt>(static_cast<int>(dt));
}

// ---- binary ----

// The op layer's binary_op for each kernel op (the same names).
binary_op op_of(k::bop op) {
    static const binary_op table[] = {
        binary_op::add,         binary_op::sub,         binary_op::mul,
        binary_op::div,         binary_op::floor_div,   binary_op::mod,
        binary_op::pow,         binary_op::maximum,     binary_op::minimum,
        binary_op::atan2,       binary_op::eq,          binary_op::ne,
        binary_op::lt,          binary_op::le,          binary_op::gt,
        binary_op::ge,          binary_op::logical_and, binary_op::logical_or,
        binary_op::logical_xor, binary_op::bit_and,     binary_op::bit_or,
        binary_op::bit_xor,     binary_op::shift_left,  binary_op::shift_right};
    return table[static_cast<int>(op)];
}

template <k::bop OP, k::kdt K>
void check_binary(dtype dt) {
    if constexpr (k::binary_ok(OP, K)) {
        const binary_op op = op_of(OP);
        const std::string what = std::string(name(op)) + " on " + std::string(name(dt));
        tensor a = values(dt, 64, 1), b = values(dt, 64, 2);
        if (OP == k::bop::pow && k::is_int(K)) b = mod(b, 8); // exponents in [0, 8)
        if constexpr (k::is_cplx(K)) {
            // every special pair against a shuffled copy, and (for pow) against exponents that
            // take the CPU's integer-power path or not
            a = complex_values(dt, 1);
            std::vector<complex128_t> e;
            const std::vector<complex128_t> exps = {
                {2, 0},    {-2, 0}, {3, -0.0}, {-1, 0}, {0, 0},   {0.5, 0}, {2.5, 0},
                {-1.5, 0}, {1, 1},  {0, -1},   {99, 0}, {100, 0}, {-7, 0},  {1.5, -0.5}};
            const auto shuffled = raw<complex128_t>(complex_values(dtype::complex128, 2));
            for (size_t i = 0; i < shuffled.size(); ++i)
                e.push_back(OP == k::bop::pow && i % 3 != 0 ? exps[i % exps.size()]
                                                            : shuffled[(i * 37) % shuffled.size()]);
            b = tensor::from_vector(e).to(dt);
        }
        tensor ref;
        try {
            ref = binary(op, a, b);
        } catch (const type_error&) {
            FAIL("the GPU has a kernel the CPU refuses: " << what);
            return;
        }
        // the op layer computes in dt for every pair that reaches this kernel
        const bool to_bool = k::binary_gives_bool(OP);
        REQUIRE(ref.dtype() == (to_bool ? dtype::bool_ : dt));
        using S = k::storage_t<K>;
        using O = std::conditional_t<k::binary_gives_bool(OP), unsigned char, S>;
        const auto x = raw<S>(a), y = raw<S>(b);
        std::vector<O> out(x.size());
        for (size_t i = 0; i < x.size(); ++i) {
            const auto r = k::bapply<OP, K>(k::up<K>(x[i]), k::up<K>(y[i]));
            if constexpr (k::binary_gives_bool(OP))
                out[i] = r;
            else
                out[i] = k::down<K>(r);
        }
        tensor got;
        if constexpr (k::binary_gives_bool(OP))
            got = from_raw<k::kdt::b8>(out, dtype::bool_);
        else
            got = from_raw<K>(out, dt);
        // elementary arithmetic is exact; pow/atan2 and complex division go through libm or
        // a different division formula
        double tol = 0;
        if (OP == k::bop::pow || OP == k::bop::atan2 || (OP == k::bop::div && k::is_cplx(K)))
            tol = dt == dtype::float16 || dt == dtype::bfloat16 ? 1e-2 : 1e-6;
        if (OP == k::bop::pow && K == k::kdt::c128) tol = 1e-12;
        check_values(got, ref, tol, what);
    }
}

template <k::kdt K>
void check_binaries(dtype dt) {
#define ISTHMUS_OP(X, ...) check_binary<k::bop::X, K>(dt);
    ISTHMUS_BINARY_OPS(ISTHMUS_OP)
#undef ISTHMUS_OP
}

// ---- unary ----

template <k::uop OP, k::kdt K>
void check_unary(unary_op op, dtype dt) {
    if constexpr (k::unary_ok(OP, K)) {
        const std::string what = std::string(name(op)) + " on " + std::string(name(dt));
        const tensor a = k::is_cplx(K) ? complex_values(dt, 3) : values(dt, 64, 3);
        tensor ref;
        try {
            ref = unary(op, a);
        } catch (const type_error&) {
            FAIL("the GPU has a kernel the CPU refuses: " << what);
            return;
        }
        constexpr k::kdt RK = k::unary_result(OP, K);
        REQUIRE(kernel_type(ref.dtype()) == RK);
        using S = k::storage_t<K>;
        using O = k::storage_t<RK>;
        const auto x = raw<S>(a);
        std::vector<O> out(x.size());
        for (size_t i = 0; i < x.size(); ++i) {
            if constexpr (RK == K)
                out[i] = k::down<K>(k::uapply<OP, K>(k::up<K>(x[i])));
            else
                out[i] = static_cast<O>(k::uapply<OP, K>(k::up<K>(x[i])));
        }
        const bool exact = op == unary_op::neg || op == unary_op::sign || op == unary_op::floor ||
                           op == unary_op::ceil || op == unary_op::round ||
                           op == unary_op::logical_not || op == unary_op::bit_not ||
                           op == unary_op::conj || op == unary_op::isnan || op == unary_op::isinf ||
                           op == unary_op::isfinite || (!k::is_cplx(K) && op == unary_op::abs);
        const double tol = exact                                            ? 0
                           : dt == dtype::float16 || dt == dtype::bfloat16  ? 1e-2
                           : dt == dtype::complex128 && k::complex_math(OP) ? 1e-12
                                                                            : 1e-6;
        check_values(from_raw<RK>(out, ref.dtype()), ref, tol, what);
    }
}

template <k::kdt K>
void check_unaries(dtype dt) {
#define ISTHMUS_OP(X, ...) check_unary<k::uop::X, K>(unary_op::X, dt);
    ISTHMUS_UNARY_OPS(ISTHMUS_OP)
#undef ISTHMUS_OP
}

// ---- casts ----

template <k::kdt O, k::kdt I>
void check_cast(dtype to, dtype from) {
    // scaled past the small types' ranges (in float64 or complex128, then cast)
    const dtype wide = is_complex(from) ? dtype::complex128 : dtype::float64;
    const tensor src =
        is_bool(from) ? values(from, 64, 4) : mul(values(from, 64, 4).to(wide), 1000.0).to(from);
    const auto x = raw<k::storage_t<I>>(src);
    std::vector<k::storage_t<O>> out(x.size());
    for (size_t i = 0; i < x.size(); ++i) out[i] = k::convert<O, I>(x[i]);
    check_values(from_raw<O>(out, to), src.to(to), 0,
                 "cast " + std::string(name(from)) + " -> " + std::string(name(to)));
}

template <k::kdt O>
void check_casts_to(dtype to) {
    for (dtype from : every_dtype)
        ISTHMUS_KDT_DISPATCH(kernel_type(from), (check_cast<O, K>(to, from)))
}

} // namespace

TEST_CASE("cuda kernels on the host: binary ops equal the CPU's on every dtype") {
    for (dtype dt : every_dtype) ISTHMUS_KDT_DISPATCH(kernel_type(dt), check_binaries<K>(dt))
}

TEST_CASE("cuda kernels on the host: every op the CPU has for a dtype has a GPU kernel") {
    // the supports_* table covers the op layer's signatures, except where noted in docs/cuda.md
    for (dtype dt : every_dtype) {
        for (int o = 0; o <= static_cast<int>(k::bop::shift_right); ++o) {
            const auto op = static_cast<k::bop>(o);
            dtype res;
            try {
                res = result_type(op_of(op), dt, dt);
            } catch (const type_error&) {
                continue;
            }
            // the op layer's compute dtype is dt unless it widens (div of ints, atan2 of ints,
            // bool arithmetic): those reach the kernels in another dtype
            if (res != dt && res != dtype::bool_) continue;
            if (is_bool(dt) && op != k::bop::eq && op != k::bop::ne && op != k::bop::lt &&
                op != k::bop::le && op != k::bop::gt && op != k::bop::ge &&
                op != k::bop::logical_and && op != k::bop::logical_or &&
                op != k::bop::logical_xor && op != k::bop::bit_and && op != k::bop::bit_or &&
                op != k::bop::bit_xor)
                continue; // bool add/mul/max/min run as logical ops
            INFO(name(op_of(op)), " on ", name(dt));
            CHECK(k::binary_ok(op, kernel_type(dt)));
        }
    }
}

TEST_CASE("cuda kernels on the host: every unary op the CPU has for a float or complex dtype has a "
          "GPU kernel") {
    for (dtype dt : every_dtype) {
        if (!is_floating(dt) && !is_complex(dt)) continue;
#define ISTHMUS_OP(X, ...)                                                                         \
    try {                                                                                          \
        (void)result_type(unary_op::X, dt);                                                        \
        INFO(name(unary_op::X), " on ", name(dt));                                                 \
        /* conj of a real: a copy; logical_not, bit_not: of the bool / integer conversion */       \
        if ((unary_op::X != unary_op::conj || is_complex(dt)) &&                                   \
            unary_op::X != unary_op::logical_not && unary_op::X != unary_op::bit_not)              \
            CHECK(k::unary_ok(k::uop::X, kernel_type(dt)));                                        \
    } catch (const type_error&) {                                                                  \
    }
        ISTHMUS_UNARY_OPS(ISTHMUS_OP)
#undef ISTHMUS_OP
    }
}

TEST_CASE("cuda kernels on the host: unary ops equal the CPU's on every dtype") {
    for (dtype dt : every_dtype) ISTHMUS_KDT_DISPATCH(kernel_type(dt), check_unaries<K>(dt))
}

TEST_CASE("cuda kernels on the host: casts between every pair of dtypes equal the CPU's") {
    for (dtype to : every_dtype) ISTHMUS_KDT_DISPATCH(kernel_type(to), check_casts_to<K>(to))
}

namespace {

template <k::kdt K>
tensor real32_draw(bool normal, int64_t n, uint64_t seed, uint64_t first, double a, double b,
                   dtype dt) {
    if constexpr (K == k::kdt::f16 || K == k::kdt::bf16 || K == k::kdt::f32) {
        std::vector<k::storage_t<K>> out(static_cast<size_t>(n));
        const auto p = k::make_real32<K>(a, b);
        for (int64_t blk = 0; blk < (n + 3) / 4; ++blk)
            k::real32_block<K>(out.data(), normal, n, seed, first, blk, p);
        return from_raw<K>(out, dt);
    } else {
        std::vector<double> out(static_cast<size_t>(n));
        for (int64_t blk = 0; blk < (n + 1) / 2; ++blk)
            k::real64_block(out.data(), normal, n, seed, first, blk, a, b);
        return from_raw<k::kdt::f64>(out, dt);
    }
}

template <k::kdt K>
tensor int_draw(int64_t n, uint64_t seed, uint64_t first, int64_t lo, int64_t hi, dtype dt) {
    std::vector<k::storage_t<K>> out(static_cast<size_t>(n));
    for (int64_t blk = 0; blk < (n + 1) / 2; ++blk)
        k::int_block<K>(out.data(), n, seed, first, blk, lo, static_cast<uint64_t>(hi - lo));
    return from_raw<K>(out, dt);
}

} // namespace

TEST_CASE("cuda kernels on the host: random streams equal the CPU's for the same seed") {
    const uint64_t seed = 987654321, first = 5;
    const int64_t n = 1003; // odd: a partial last block
    auto cpu_gen = [&] {
        generator g(seed);
        g.set_offset(first);
        return g;
    };
    for (dtype dt : {dtype::float16, dtype::bfloat16, dtype::float32, dtype::float64})
        for (bool normal : {false, true}) {
            generator g = cpu_gen();
            const double a = normal ? 0.5 : -1.0, b = normal ? 2.0 : 3.0;
            const tensor ref = normal ? isthmus::normal({n}, a, b, dt, &g, MEMRESOURCE_CPU)
                                      : uniform({n}, a, b, dt, &g, MEMRESOURCE_CPU);
            tensor got;
            if (dt == dtype::float16)
                got = real32_draw<k::kdt::f16>(normal, n, seed, first, a, b, dt);
            else if (dt == dtype::bfloat16)
                got = real32_draw<k::kdt::bf16>(normal, n, seed, first, a, b, dt);
            else if (dt == dtype::float32)
                got = real32_draw<k::kdt::f32>(normal, n, seed, first, a, b, dt);
            else
                got = real32_draw<k::kdt::f64>(normal, n, seed, first, a, b, dt);
            // the same libm on the host: normals are exact here too
            check_values(got, ref, 0,
                         std::string(normal ? "normal " : "uniform ") + std::string(name(dt)));
        }
    for (dtype dt : {dtype::bool_, dtype::int8, dtype::uint16, dtype::int64, dtype::uint64,
                     dtype::float16, dtype::float32}) {
        const int64_t lo = is_bool(dt) ? 0 : (is_unsigned_int(dt) ? 3 : -7);
        const int64_t hi = is_bool(dt) ? 2 : 120;
        generator g = cpu_gen();
        const tensor ref = randint(lo, hi, {n}, dt, &g, MEMRESOURCE_CPU);
        tensor got;
        ISTHMUS_KDT_DISPATCH(kernel_type(dt), (got = int_draw<K>(n, seed, first, lo, hi, dt)))
        check_values(got, ref, 0, "randint " + std::string(name(dt)));
    }
}

// ---- reductions: the kernels' accumulate-and-combine order, run on the host ----

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
