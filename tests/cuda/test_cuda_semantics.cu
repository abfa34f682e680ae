// The CUDA kernels' element functions run on the host against the CPU kernels (no GPU needed).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "cuda/elementwise_ops.cuh"
#include "cuda/random.cuh"

#include <isthmus/error.hpp>
#include <isthmus/ops.hpp>
#include <isthmus/tensor.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace isthmus;
namespace k = isthmus::cudak;

// Note [element semantics test]: the kernels of core/src/cuda compute each element with
// host-and-device functions (bapply, uapply, convert, the random maps). This suite calls those
// same functions on the host, element by element over CPU tensors, and compares with the CPU
// ops: the GPU's arithmetic, casting and random streams are checked on machines without a GPU.
// What it cannot check (indexing, vector loads, reductions, launches) is covered by
// test_cuda_ops.cpp on a GPU.

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
        check_values(got, ref, tol, what);
    }
}

template <k::kdt K>
void check_binaries(dtype dt) {
#define ISTHMUS_OP(X) check_binary<k::bop::X, K>(dt);
    ISTHMUS_OP(add)
    ISTHMUS_OP(sub)
    ISTHMUS_OP(mul)
    ISTHMUS_OP(div)
    ISTHMUS_OP(floor_div)
    ISTHMUS_OP(mod)
    ISTHMUS_OP(pow)
    ISTHMUS_OP(maximum)
    ISTHMUS_OP(minimum)
    ISTHMUS_OP(atan2)
    ISTHMUS_OP(eq)
    ISTHMUS_OP(ne)
    ISTHMUS_OP(lt)
    ISTHMUS_OP(le)
    ISTHMUS_OP(gt)
    ISTHMUS_OP(ge)
    ISTHMUS_OP(logical_and)
    ISTHMUS_OP(logical_or)
    ISTHMUS_OP(logical_xor)
    ISTHMUS_OP(bit_and)
    ISTHMUS_OP(bit_or)
    ISTHMUS_OP(bit_xor)
    ISTHMUS_OP(shift_left)
    ISTHMUS_OP(shift_right)
#undef ISTHMUS_OP
}

// ---- unary ----

template <k::uop OP, k::kdt K>
void check_unary(unary_op op, dtype dt) {
    if constexpr (k::unary_ok(OP, K)) {
        const std::string what = std::string(name(op)) + " on " + std::string(name(dt));
        const tensor a = values(dt, 64, 3);
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
        const double tol =
            exact ? 0 : (dt == dtype::float16 || dt == dtype::bfloat16 ? 1e-2 : 1e-6);
        check_values(from_raw<RK>(out, ref.dtype()), ref, tol, what);
    }
}

template <k::kdt K>
void check_unaries(dtype dt) {
#define ISTHMUS_OP(X) check_unary<k::uop::X, K>(unary_op::X, dt);
    ISTHMUS_OP(neg)
    ISTHMUS_OP(abs)
    ISTHMUS_OP(sign)
    ISTHMUS_OP(exp)
    ISTHMUS_OP(log)
    ISTHMUS_OP(log2)
    ISTHMUS_OP(log10)
    ISTHMUS_OP(expm1)
    ISTHMUS_OP(log1p)
    ISTHMUS_OP(sqrt)
    ISTHMUS_OP(rsqrt)
    ISTHMUS_OP(sin)
    ISTHMUS_OP(cos)
    ISTHMUS_OP(tan)
    ISTHMUS_OP(asin)
    ISTHMUS_OP(acos)
    ISTHMUS_OP(atan)
    ISTHMUS_OP(sinh)
    ISTHMUS_OP(cosh)
    ISTHMUS_OP(tanh)
    ISTHMUS_OP(floor)
    ISTHMUS_OP(ceil)
    ISTHMUS_OP(round)
    ISTHMUS_OP(square)
    ISTHMUS_OP(reciprocal)
    ISTHMUS_OP(isnan)
    ISTHMUS_OP(isinf)
    ISTHMUS_OP(isfinite)
    ISTHMUS_OP(logical_not)
    ISTHMUS_OP(bit_not)
    ISTHMUS_OP(conj)
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
            if (op == k::bop::pow && is_complex(dt)) continue; // complex pow stays on the CPU
            INFO(name(op_of(op)), " on ", name(dt));
            CHECK(k::binary_ok(op, kernel_type(dt)));
        }
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
