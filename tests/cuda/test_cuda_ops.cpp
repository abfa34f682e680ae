// CUDA op coverage: every op the GPU runs gives the CPU's result on random inputs, per dtype.
#include <doctest/doctest.h>

#include <isthmus/cuda.hpp>
#include <isthmus/error.hpp>
#include <isthmus/ops.hpp>
#include <isthmus/schedule.hpp>
#include <isthmus/storage.hpp>
#include <isthmus/tensor.hpp>

#include <cmath>
#include <complex>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace isthmus;

namespace {

// Note [cross-backend tests]: each case builds its inputs on the CPU, then runs the same op
// under device_scope(CPU) (the reference) and under device_scope(cuda:0): the inputs are copied
// to the GPU by the coherence model and the op runs there. The GPU result must still be valid
// only on the GPU (so no silent CPU fallback passes) and equal the CPU's within the dtype's
// tolerance: exact for integers, bool and casts, a few units in the last place for floats
// (transcendental functions differ between CUDA and glibc by an ulp or two).

const std::vector<dtype> every_dtype = {
    dtype::bool_,    dtype::int8,    dtype::int16,   dtype::int32,     dtype::int64,
    dtype::uint8,    dtype::uint16,  dtype::uint32,  dtype::uint64,    dtype::float16,
    dtype::bfloat16, dtype::float32, dtype::float64, dtype::complex64, dtype::complex128};

const resource_id gpu = MEMRESOURCE_SINGLE_CUDA;

// Random values of `dt`: small integers (negative ones for signed types), normals for floats.
tensor random_tensor(dtype dt, const shape_t& shape, unsigned seed, double scale = 3.0) {
    std::mt19937 g(seed);
    const int64_t n = numel_of(shape);
    if (is_complex(dt)) {
        std::normal_distribution<double> d(0.0, scale);
        std::vector<complex128_t> v(static_cast<size_t>(n));
        for (auto& x : v) x = complex128_t(d(g), d(g));
        return tensor::from_vector(v, shape).to(dt);
    }
    std::vector<double> v(static_cast<size_t>(n));
    if (is_bool(dt)) {
        std::bernoulli_distribution d(0.5);
        for (double& x : v) x = d(g);
    } else if (is_integer(dt)) {
        std::uniform_int_distribution<int> d(is_unsigned_int(dt) ? 0 : -50, 50);
        for (double& x : v) x = d(g);
    } else {
        std::normal_distribution<double> d(0.0, scale);
        for (double& x : v) x = d(g);
    }
    return tensor::from_vector(v, shape).to(dt);
}

double tolerance(dtype dt) {
    switch (dt) {
    case dtype::float16:
        return 2e-3; // one float16 ulp: the float results may round to neighbouring halves
    case dtype::bfloat16:
        return 1.6e-2;
    case dtype::float32:
    case dtype::complex64:
        return 4e-6;
    case dtype::float64:
    case dtype::complex128:
        return 1e-13;
    default:
        return 0;
    }
}

bool close(double g, double r, double tol) {
    if (std::isnan(r)) return std::isnan(g);
    if (std::isinf(r)) return g == r;
    return std::abs(g - r) <= tol * (1 + std::abs(r));
}

// got (from the GPU) equals ref (from the CPU): same shape and dtype, values within `tol`
// relative (complex: on the modulus of the difference).
void check_same(const tensor& got, const tensor& ref, double tol, const std::string& what) {
    INFO(what);
    REQUIRE(got.shape() == ref.shape());
    REQUIRE(got.dtype() == ref.dtype());
    const dtype dt = ref.dtype();
    if (is_complex(dt)) {
        const auto gr = real(got).to_vector<double>(), gi = imag(got).to_vector<double>();
        const auto rr = real(ref).to_vector<double>(), ri = imag(ref).to_vector<double>();
        for (size_t i = 0; i < rr.size(); ++i) {
            const std::complex<double> g(gr[i], gi[i]), r(rr[i], ri[i]);
            if (std::isnan(rr[i]) || std::isnan(ri[i]) || std::isinf(rr[i]) || std::isinf(ri[i])) {
                CHECK(close(gr[i], rr[i], tol));
                CHECK(close(gi[i], ri[i], tol));
            } else if (!(std::abs(g - r) <= tol * (1 + std::abs(r)))) {
                FAIL_CHECK("element " << i << ": got " << g << ", CPU " << r);
            }
        }
    } else if (is_floating(dt)) {
        const auto g = got.to_vector<double>(), r = ref.to_vector<double>();
        for (size_t i = 0; i < r.size(); ++i)
            if (!close(g[i], r[i], tol))
                FAIL_CHECK("element " << i << ": got " << g[i] << ", CPU " << r[i]);
    } else if (is_signed_int(dt)) {
        CHECK(got.to_vector<int64_t>() == ref.to_vector<int64_t>());
    } else {
        CHECK(got.to_vector<uint64_t>() == ref.to_vector<uint64_t>());
    }
}

// Runs `op` on the CPU and on cuda:0 and compares (Note [cross-backend tests]).
// `on_device` false: the op is expected to fall back to the CPU (the values must still agree).
void both(const std::function<tensor()>& op, const std::string& what, double tol = -1,
          bool on_device = true) {
    tensor ref, got;
    {
        device_scope s(MEMRESOURCE_CPU);
        ref = op();
    }
    {
        device_scope s(gpu);
        got = op();
    }
    INFO(what);
    if (got.numel() > 0 && on_device) {
        CHECK(got.storage()->valid_on(gpu));
        CHECK_FALSE(got.storage()->valid_on(MEMRESOURCE_CPU));
    }
    check_same(got, ref, tol < 0 ? tolerance(ref.dtype()) : tol, what);
}

std::string name_of(dtype dt) {
    return std::string(isthmus::name(dt));
}

const std::vector<binary_op> every_binary = {
    binary_op::add,         binary_op::sub,        binary_op::mul,         binary_op::div,
    binary_op::floor_div,   binary_op::mod,        binary_op::pow,         binary_op::maximum,
    binary_op::minimum,     binary_op::atan2,      binary_op::eq,          binary_op::ne,
    binary_op::lt,          binary_op::le,         binary_op::gt,          binary_op::ge,
    binary_op::logical_and, binary_op::logical_or, binary_op::logical_xor, binary_op::bit_and,
    binary_op::bit_or,      binary_op::bit_xor,    binary_op::shift_left,  binary_op::shift_right};

const std::vector<unary_op> every_unary = {
    unary_op::neg,     unary_op::abs,    unary_op::sign,      unary_op::exp,
    unary_op::log,     unary_op::log2,   unary_op::log10,     unary_op::expm1,
    unary_op::log1p,   unary_op::sqrt,   unary_op::rsqrt,     unary_op::sin,
    unary_op::cos,     unary_op::tan,    unary_op::asin,      unary_op::acos,
    unary_op::atan,    unary_op::sinh,   unary_op::cosh,      unary_op::tanh,
    unary_op::floor,   unary_op::ceil,   unary_op::round,     unary_op::logical_not,
    unary_op::bit_not, unary_op::isnan,  unary_op::isinf,     unary_op::isfinite,
    unary_op::conj,    unary_op::square, unary_op::reciprocal};

bool supported(binary_op op, dtype dt) {
    try {
        (void)result_type(op, dt, dt);
        return true;
    } catch (const type_error&) {
        return false;
    }
}

bool supported(unary_op op, dtype dt) {
    try {
        (void)result_type(op, dt);
        return true;
    } catch (const type_error&) {
        return false;
    }
}

} // namespace

TEST_CASE("cuda ops: binary elementwise on every dtype, broadcast, strided, scalar, 0-d, empty" *
          doctest::skip(!cuda::available())) {
    cuda::init(0);
    for (dtype dt : every_dtype)
        for (binary_op op : every_binary) {
            if (!supported(op, dt)) continue;
            const std::string what = std::string(name(op)) + " on " + name_of(dt);
            // integer powers need exponents >= 0 (negative ones raise before any kernel)
            const bool int_pow = op == binary_op::pow && is_integer(dt);
            const tensor a =
                int_pow ? abs(random_tensor(dt, {4, 5, 6}, 1)) : random_tensor(dt, {4, 5, 6}, 1);
            const tensor b =
                int_pow ? abs(random_tensor(dt, {5, 1}, 2)) : random_tensor(dt, {5, 1}, 2);
            const bool dev = true; // every op the CPU has for a dtype runs on the GPU
            both([&] { return binary(op, a, b); }, what + " (broadcast)", -1, dev);
            both(
                [&] {
                    return binary(op, a.permute({2, 0, 1}), b.t().expand({6, 4, 5}));
                },
                what + " (strided)", -1, dev);
            const tensor z = int_pow ? abs(random_tensor(dt, {}, 3)) : random_tensor(dt, {}, 3);
            const tensor e = random_tensor(dt, {0, 6}, 4);
            both([&] { return binary(op, z, a); }, what + " (0-d)", -1, dev);
            both([&] { return binary(op, e, a.select(0, 0).select(0, 0)); }, what + " (empty)", -1,
                 dev);
            if (!is_complex(dt) && !is_bool(dt))
                both([&] { return binary(op, a, scalar(int64_t{2})); }, what + " (scalar)", -1,
                     dev);
        }
    set_default_resource(MEMRESOURCE_CPU);
}

TEST_CASE("cuda ops: in-place binary ops with casting and aliasing" *
          doctest::skip(!cuda::available())) {
    cuda::init(0);
    for (dtype dt :
         {dtype::int16, dtype::uint32, dtype::float16, dtype::float32, dtype::complex64}) {
        const tensor a = random_tensor(dt, {7, 9}, 5), b = random_tensor(dt, {9}, 6);
        both(
            [&] {
                tensor t = a.clone();
                binary_inplace(binary_op::add, t, b);
                binary_inplace(binary_op::mul, t, t.t().contiguous().t());
                return t;
            },
            "in place on " + name_of(dt));
    }
    set_default_resource(MEMRESOURCE_CPU);
}

TEST_CASE("cuda ops: unary elementwise on every dtype" * doctest::skip(!cuda::available())) {
    cuda::init(0);
    for (dtype dt : every_dtype)
        for (unary_op op : every_unary) {
            if (!supported(op, dt)) continue;
            const std::string what = std::string(name(op)) + " on " + name_of(dt);
            const bool dev = true; // complex math included (elementwise_cmath.cu)
            const tensor a = random_tensor(dt, {6, 33}, 7, 1.5);
            both([&] { return unary(op, a); }, what, -1, dev);
            both([&] { return unary(op, a.t()); }, what + " (strided)", -1, dev);
            both([&] { return unary(op, random_tensor(dt, {}, 8)); }, what + " (0-d)", -1, dev);
            both(
                [&] {
                    return unary(op, random_tensor(dt, {3, 0}, 9));
                },
                what + " (empty)", -1, dev);
        }
    set_default_resource(MEMRESOURCE_CPU);
}

// Every pair of special parts (signed zeros, +-1, +-2 past the branch points, infinities,
// NaN, huge parts whose products overflow) as a (15, 15) complex tensor.
tensor complex_specials(dtype dt) {
    const double inf = std::numeric_limits<double>::infinity();
    const double big = dt == dtype::complex64 ? 1e30 : 1e300;
    const std::vector<double> parts = {0.0,  -0.0, 1.0,  -1.0, 0.5, -0.5, 2.0,         -2.0,
                                       1e-3, big,  -big, 30.0, inf, -inf, std::nan("")};
    std::vector<complex128_t> v;
    for (double re : parts)
        for (double im : parts) v.emplace_back(re, im);
    return tensor::from_vector(v, {15, 15}).to(dt);
}

TEST_CASE("cuda ops: complex math, pow and division at special values and branch cuts" *
          doctest::skip(!cuda::available())) {
    cuda::init(0);
    for (dtype dt : {dtype::complex64, dtype::complex128}) {
        const tensor z = complex_specials(dt);
        for (unary_op op : every_unary) {
            if (!supported(op, dt)) continue;
            const std::string what = std::string(name(op)) + " at special values, " + name_of(dt);
            // CUDA's libm differs from glibc by an ulp or two: complex64 at float tolerance
            both([&] { return unary(op, z); }, what, dt == dtype::complex64 ? 1e-5 : 1e-12);
            both([&] { return unary(op, z.t()); }, what + " (strided)",
                 dt == dtype::complex64 ? 1e-5 : 1e-12);
        }
        // exponents through the CPU's integer-power path (|n| < 100) and through exp(b log a)
        const std::vector<complex128_t> exps = {{2, 0},     {-2, 0}, {3, -0.0}, {0, 0},  {0.5, 0},
                                                {-1.5, 0},  {1, 1},  {0, -1},   {99, 0}, {100, 0},
                                                {1.5, -.5}, {-7, 0}, {2.5, 0},  {1, 0},  {-1, 0}};
        const tensor e = tensor::from_vector(exps, {15}).to(dt);
        both([&] { return binary(binary_op::pow, z, e); }, "pow at special values " + name_of(dt),
             dt == dtype::complex64 ? 1e-4 : 1e-11);
        both([&] { return binary(binary_op::pow, z.t(), z); }, "pow of specials " + name_of(dt),
             dt == dtype::complex64 ? 1e-4 : 1e-11);
        both([&] { return binary(binary_op::div, z, z.t()); }, "div of specials " + name_of(dt));
        both([&] { return binary(binary_op::mul, z, z.t()); }, "mul of specials " + name_of(dt));
        both([&] { return binary(binary_op::pow, z, scalar(complex128_t(2, 0))); },
             "pow by a scalar " + name_of(dt));
    }
    set_default_resource(MEMRESOURCE_CPU);
}

TEST_CASE("cuda ops: casts between every pair of dtypes, special values included" *
          doctest::skip(!cuda::available())) {
    cuda::init(0);
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<double> special = {0.0,           -0.0,
                                         1.0,           -1.0,
                                         2.5,           -3.7,
                                         127.6,         -129.2,
                                         255.9,         300.5,
                                         65504.0,       70000.0,
                                         1e10,          -1e10,
                                         9.3e18,        -9.3e18,
                                         2e19,          1e300,
                                         inf,           -inf,
                                         std::nan(""),  1 + 1.0 / 2048 + 1e-9,
                                         1 + 1.0 / 256, 0.1};
    const tensor base = tensor::from_vector(special, {4, 6});
    for (dtype from : every_dtype) {
        const tensor src = base.to(from);
        for (dtype to : every_dtype)
            both([&] { return src.t().to(to); }, "cast " + name_of(from) + " -> " + name_of(to), 0);
    }
    // fills of every dtype
    for (dtype dt : every_dtype) {
        both([&] { return full({3, 5}, scalar(2.75), dt); }, "full " + name_of(dt), 0);
        both([&] { return ones({4}, dt); }, "ones " + name_of(dt), 0);
    }
    set_default_resource(MEMRESOURCE_CPU);
}

TEST_CASE("cuda ops: where, clamp and fma with broadcasting and scalars" *
          doctest::skip(!cuda::available())) {
    cuda::init(0);
    for (dtype dt : {dtype::bool_, dtype::int8, dtype::uint64, dtype::float16, dtype::bfloat16,
                     dtype::float32, dtype::float64, dtype::complex64}) {
        const std::string what = name_of(dt);
        const tensor c = random_tensor(dtype::int32, {5, 1}, 10); // nonzero -> true
        const tensor a = random_tensor(dt, {3, 5, 4}, 11), b = random_tensor(dt, {4}, 12);
        both([&] { return where(c, a, b); }, "where " + what);
        const tensor s = random_tensor(dt, {4, 5, 3}, 14).permute({2, 1, 0}); // (3, 5, 4) strided
        both([&] { return where(c, s, b); }, "where strided " + what);
        both([&] { return where(c, a, scalar(int64_t{1})); }, "where scalar " + what);
        both([&] { return where(c.select(0, 0), scalar(1.5), scalar(int64_t{2})); },
             "where two scalars " + what);
        both([&] { return fma(a, s, random_tensor(dt, {5, 1}, 34)); }, "fma " + what);
        if (is_complex(dt) || is_bool(dt)) continue;
        const int64_t lo = is_unsigned_int(dt) ? 1 : -2; // weak scalars must fit the dtype
        both([&] { return clamp(a, scalar(lo), scalar(int64_t{3})); }, "clamp " + what);
        both([&] { return clamp(s, scalar(int64_t{3}), scalar(lo)); }, "clamp lo > hi " + what);
        both([&] { return clamp(a, b, random_tensor(dt, {5, 1}, 13)); }, "clamp tensors " + what);
        both(
            [&] {
                tensor t = a.clone();
                clamp_inplace(t, scalar(lo), scalar(int64_t{1}));
                return t;
            },
            "clamp in place " + what);
    }
    set_default_resource(MEMRESOURCE_CPU);
}

TEST_CASE("cuda ops: reductions over axes, per dtype" * doctest::skip(!cuda::available())) {
    cuda::init(0);
    using R = tensor (*)(const tensor&, const reduce_axes&, bool);
    const std::vector<std::pair<const char*, R>> reds = {
        {"sum", &sum}, {"prod", &prod}, {"mean", &mean}, {"min", &min},
        {"max", &max}, {"any", &any},   {"all", &all}};
    for (dtype dt :
         {dtype::bool_, dtype::int8, dtype::uint16, dtype::int32, dtype::int64, dtype::float16,
          dtype::bfloat16, dtype::float32, dtype::float64, dtype::complex64, dtype::complex128}) {
        tensor x = random_tensor(dt, {7, 130, 3}, 14);
        for (const auto& [label, fn] : reds) {
            // products of floats stay near 1, so that they neither overflow nor vanish
            const bool inexact = is_floating(dt) || is_complex(dt);
            const tensor in = std::string(label) == "prod" && inexact
                                  ? add(mul(random_tensor(dt, {7, 130, 3}, 15), 0.01), 1.0)
                                  : x;
            const std::string what = std::string(label) + " on " + name_of(dt);
            // sums in double on both sides: float results agree to a float32 rounding
            const double tol = inexact ? tolerance(dt) * 4 : 0;
            both([&] { return fn(in, {}, false); }, what + " (all axes)", tol);
            both([&] { return fn(in, {1}, false); }, what + " (axis 1)", tol);
            both([&] { return fn(in, {0, 2}, true); }, what + " (axes 0, 2, keepdims)", tol);
            both([&] { return fn(in.permute({2, 0, 1}), {0}, false); }, what + " (strided)", tol);
            if (std::string(label) != "min" && std::string(label) != "max")
                both(
                    [&] {
                        return fn(random_tensor(dt, {0, 4}, 16), {0}, false);
                    },
                    what + " (empty)", tol);
        }
    }
    // a long row: many chunks per row
    const tensor big = random_tensor(dtype::float32, {3000001}, 17);
    both([&] { return sum(big); }, "sum of 3M float32", 1e-6);
    both([&] { return prod(add(mul(big, 1e-4), 1.0)); }, "prod of 3M float32", 1e-5);
    // complex: 16-byte partials in the scratch of a many-chunk row
    const tensor bigc = random_tensor(dtype::complex64, {2, 1000003}, 27);
    both([&] { return sum(bigc, {1}); }, "sum of 1M complex64 rows", 1e-6);
    both([&] { return mean(bigc.to(dtype::complex128), {1}); }, "mean of 1M complex128 rows",
         1e-12);
    both([&] { return prod(add(mul(bigc, 1e-4), 1.0), {1}); }, "prod of 1M complex64 rows", 1e-5);
    // complex min/max: lexicographic, NaN (in either part) wins
    tensor mc = random_tensor(dtype::complex128, {5, 301}, 28);
    mc.select(0, 1).select(0, 40).copy_from(
        full({}, scalar(complex128_t(std::nan(""), 1.0)), dtype::complex128, MEMRESOURCE_CPU));
    mc.select(0, 3).select(0, 200).copy_from(
        full({}, scalar(complex128_t(2.0, std::nan(""))), dtype::complex128, MEMRESOURCE_CPU));
    both([&] { return max(mc, {1}); }, "max of complex128 with NaN", 0);
    both([&] { return min(mc, {1}); }, "min of complex128 with NaN", 0);
    set_default_resource(MEMRESOURCE_CPU);
}

TEST_CASE("cuda ops: argmin/argmax take the first extreme, NaN wins" *
          doctest::skip(!cuda::available())) {
    cuda::init(0);
    for (dtype dt : {dtype::int8, dtype::uint8, dtype::int64, dtype::float16, dtype::float32,
                     dtype::float64}) {
        // few distinct values: many ties
        const tensor x = random_tensor(dt, {9, 40, 3}, 18).to(dtype::float64);
        tensor t = floor_div(x, 20.0).to(dt);
        for (int64_t axis : {0, 1, 2, -1}) {
            both([&] { return argmax(t, axis); }, "argmax axis " + std::to_string(axis));
            both([&] { return argmin(t, axis, true); }, "argmin axis " + std::to_string(axis));
        }
        both([&] { return argmax(t); }, "flat argmax " + name_of(dt));
        both([&] { return argmin(t.permute({1, 2, 0})); }, "flat argmin strided " + name_of(dt));
        if (is_floating(dt)) {
            tensor n = t.clone();
            n.select(0, 2).select(0, 5).fill(std::nan(""));
            n.select(0, 2).select(0, 7).fill(std::nan(""));
            both([&] { return argmax(n, 1); }, "argmax with NaN " + name_of(dt));
            both([&] { return argmin(n); }, "flat argmin with NaN " + name_of(dt));
        }
    }
    set_default_resource(MEMRESOURCE_CPU);
}

TEST_CASE("cuda ops: complex argmin/argmax, lexicographic with ties and NaN" *
          doctest::skip(!cuda::available())) {
    cuda::init(0);
    for (dtype dt : {dtype::complex64, dtype::complex128}) {
        // few distinct real and imaginary parts: ties in both
        const tensor re = floor_div(random_tensor(dtype::float64, {9, 40, 3}, 29), 3.0);
        const tensor im = floor_div(random_tensor(dtype::float64, {9, 40, 3}, 30), 3.0);
        tensor t = add(re.to(dt), mul(im.to(dt), scalar(complex128_t(0, 1))));
        for (int64_t axis : {0, 1, 2}) {
            both([&] { return argmax(t, axis); }, "argmax axis " + std::to_string(axis));
            both([&] { return argmin(t, axis); }, "argmin axis " + std::to_string(axis));
        }
        both([&] { return argmax(t.permute({1, 2, 0})); }, "flat argmax strided " + name_of(dt));
        t.select(0, 2).select(0, 5).copy_from(
            full({}, scalar(complex128_t(1.0, std::nan(""))), dtype::complex128, MEMRESOURCE_CPU));
        t.select(0, 2).select(0, 9).copy_from(
            full({}, scalar(complex128_t(std::nan(""), 0.0)), dtype::complex128, MEMRESOURCE_CPU));
        both([&] { return argmin(t, 1); }, "argmin with NaN " + name_of(dt));
        both([&] { return argmax(t); }, "flat argmax with NaN " + name_of(dt));
    }
    set_default_resource(MEMRESOURCE_CPU);
}

TEST_CASE("cuda ops: var and std" * doctest::skip(!cuda::available())) {
    cuda::init(0);
    for (dtype dt : {dtype::int32, dtype::float16, dtype::float32, dtype::float64}) {
        const tensor x = random_tensor(dt, {11, 50, 4}, 19);
        for (int64_t ddof : {0, 1}) {
            const std::string what = name_of(dt) + " ddof " + std::to_string(ddof);
            const double tol = dt == dtype::float64 ? 1e-12 : 2e-5;
            both([&] { return var(x, {}, false, ddof); }, "var " + what,
                 dt == dtype::float16 ? 2e-3 : tol);
            both([&] { return var(x, {1}, true, ddof); }, "var axis 1 " + what,
                 dt == dtype::float16 ? 2e-3 : tol);
            both(
                [&] {
                    return std_(x.permute({2, 0, 1}), {0, 2}, false, ddof);
                },
                "std strided " + what, dt == dtype::float16 ? 2e-3 : tol);
        }
    }
    // complex: a real result; the mean runs on the GPU, the squared deviations on the host
    // (Note [variance] in core/src/ops/reduce.cpp), so only the values are compared
    for (dtype dt : {dtype::complex64, dtype::complex128}) {
        const tensor x = random_tensor(dt, {11, 50, 4}, 31);
        const double tol = dt == dtype::complex128 ? 1e-12 : 2e-5;
        both([&] { return var(x, {1}, false, 1); }, "var " + name_of(dt), tol, false);
        both(
            [&] {
                return std_(x.permute({2, 0, 1}), {0, 2}, true, 0);
            },
            "std " + name_of(dt), tol, false);
    }
    set_default_resource(MEMRESOURCE_CPU);
}

TEST_CASE("cuda ops: matmul for float, half and complex dtypes" *
          doctest::skip(!cuda::available())) {
    cuda::init(0);
    for (dtype dt : {dtype::float16, dtype::bfloat16, dtype::float32, dtype::float64,
                     dtype::complex64, dtype::complex128}) {
        const tensor a = random_tensor(dt, {3, 37, 50}, 20, 1.0);
        const tensor b = random_tensor(dt, {50, 29}, 21, 1.0);
        // float32 accumulation on both sides, in different orders: compare relative to sqrt(k)
        const double tol = dt == dtype::float16                   ? 8e-3
                           : dt == dtype::bfloat16                ? 3e-2
                           : is_floating(dt) && itemsize(dt) == 8 ? 1e-12
                           : dt == dtype::complex128              ? 1e-12
                                                                  : 1e-5;
        both([&] { return matmul(a, b); }, "matmul " + name_of(dt), tol);
        both([&] { return matmul(a.select(0, 1).t(), a.select(0, 2)); },
             "matmul transposed " + name_of(dt), tol);
        both([&] { return matmul(b.t(), random_tensor(dt, {50}, 22, 1.0)); },
             "matrix @ vector " + name_of(dt), tol);
    }
    set_default_resource(MEMRESOURCE_CPU);
}

TEST_CASE("cuda ops: matmul for integers and bool wraps as the CPU's" *
          doctest::skip(!cuda::available())) {
    cuda::init(0);
    for (dtype dt : {dtype::bool_, dtype::int8, dtype::uint8, dtype::int16, dtype::uint16,
                     dtype::int32, dtype::uint32, dtype::int64, dtype::uint64}) {
        const std::string what = "matmul " + name_of(dt);
        // values up to 50 and k = 50: 8- and 16-bit sums overflow and wrap
        const tensor a = random_tensor(dt, {3, 37, 50}, 32), b = random_tensor(dt, {50, 29}, 33);
        both([&] { return matmul(a, b); }, what, 0);
        both([&] { return matmul(a.select(0, 1).t(), a.select(0, 2)); }, what + " (transposed)", 0);
        both([&] { return matmul(b.t(), random_tensor(dt, {50}, 34)); }, what + " (vector)", 0);
        both(
            [&] {
                return matmul(random_tensor(dt, {2, 1, 70, 20}, 35),
                              random_tensor(dt, {3, 20, 33}, 36));
            },
            what + " (batch broadcast)", 0);
        both(
            [&] {
                return matmul(random_tensor(dt, {4, 0}, 37), random_tensor(dt, {0, 5}, 38));
            },
            what + " (k = 0)", 0);
        both(
            [&] {
                return matmul(random_tensor(dt, {0, 3}, 39), random_tensor(dt, {3, 5}, 40));
            },
            what + " (empty)", 0);
    }
    // extremes: INT64_MIN * -1 and uint64 products past 2^64 wrap
    const tensor ext =
        tensor::from_vector(std::vector<int64_t>{INT64_MIN, -1, INT64_MAX, 3}, {2, 2});
    both([&] { return matmul(ext, ext); }, "matmul int64 extremes", 0);
    both([&] { return matmul(ext.to(dtype::uint64), ext.t().to(dtype::uint64)); },
         "matmul uint64 extremes", 0);
    set_default_resource(MEMRESOURCE_CPU);
}

TEST_CASE("cuda ops: random numbers equal the CPU's for the same seed" *
          doctest::skip(!cuda::available())) {
    cuda::init(0);
    // uniforms and integers are bit-identical; normals within a few ulp (device libm)
    auto draw = [](resource_id where, const std::function<tensor(generator*, resource_id)>& f) {
        generator g(12345);
        g.set_offset(77);
        return f(&g, where);
    };
    auto same = [&](const std::function<tensor(generator*, resource_id)>& f,
                    const std::string& what, double tol) {
        const tensor ref = draw(MEMRESOURCE_CPU, f), got = draw(gpu, f);
        CHECK(got.storage()->valid_on(gpu));
        check_same(got, ref, tol, what);
    };
    for (dtype dt : {dtype::float16, dtype::bfloat16, dtype::float32, dtype::float64}) {
        same([&](generator* g, resource_id r) { return uniform({1001}, -2.0, 5.0, dt, g, r); },
             "uniform " + name_of(dt), 0);
        same([&](generator* g, resource_id r) { return normal({1001}, 1.0, 3.0, dt, g, r); },
             "normal " + name_of(dt), tolerance(dt) * 4);
    }
    same([](generator* g, resource_id r) { return randn({333}, dtype::complex64, g, r); },
         "randn complex64", 2e-5);
    for (dtype dt : {dtype::bool_, dtype::int8, dtype::uint16, dtype::int64, dtype::uint64,
                     dtype::float16, dtype::float32})
        same(
            [&](generator* g, resource_id r) {
                return dt == dtype::bool_
                           ? randint(0, 2, {999}, dt, g, r)
                           : randint(-5 * !is_unsigned_int(dt), 100, {999}, dt, g, r);
            },
            "randint " + name_of(dt), 0);
    same(
        [](generator* g, resource_id r) {
            return randint(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                           {513}, dtype::int64, g, r);
        },
        "randint full int64 range", 0);
    set_default_resource(MEMRESOURCE_CPU);
}

TEST_CASE("cuda ops: cumsum and cumprod along every axis" * doctest::skip(!cuda::available())) {
    cuda::init(0);
    for (dtype dt : {dtype::bool_, dtype::int8, dtype::uint32, dtype::int64, dtype::float16,
                     dtype::float32, dtype::float64, dtype::complex64, dtype::complex128}) {
        const tensor x = random_tensor(dt, {5, 300, 7}, 23);
        // products of floats (and complex numbers) near 1; of integers in {-1, 0, 1, 2}
        // (wrapping alike on both sides)
        const bool real_or_complex = is_floating(dt) || is_complex(dt);
        const tensor p =
            real_or_complex ? add(mul(random_tensor(dt, {5, 300, 7}, 24), 0.01), 1.0) : x;
        // double (complex128) accumulation on both sides, in another order on the GPU: the
        // 64-bit sums may differ in the last bits of the largest partial sums
        const double tol = dt == dtype::float64 || dt == dtype::complex128
                               ? 1e-11
                               : (real_or_complex ? tolerance(dt) : 0);
        for (int64_t axis : {0, 1, 2, -1}) {
            const std::string what = name_of(dt) + " axis " + std::to_string(axis);
            both([&] { return cumsum(x, axis); }, "cumsum " + what, tol);
            both([&] { return cumprod(p, axis); }, "cumprod " + what, tol);
            both([&] { return cumsum(x.permute({2, 0, 1}), axis); }, "cumsum strided " + what, tol);
        }
        both([&] { return cumsum(x); }, "flat cumsum " + name_of(dt), tol);
        both([&] { return cumsum(random_tensor(dt, {0, 3}, 25), 0); }, "empty cumsum", tol);
    }
    // one long line: many chunks, pass 2 by a block per line (Note [gpu cumulative])
    const tensor big = random_tensor(dtype::float32, {2000003}, 26);
    both([&] { return cumsum(big); }, "cumsum of 2M float32", 1e-5);
    // a few long lines, strided (post > 1): the block pass again, exact on integers
    const tensor mid = random_tensor(dtype::int64, {3, 20000, 2}, 27);
    both([&] { return cumsum(mid, 1); }, "cumsum int64 (3, 20000, 2) axis 1", 0);
    both([&] { return cumprod(mid, 1); }, "cumprod int64 (3, 20000, 2) axis 1 (wraps)", 0);
    set_default_resource(MEMRESOURCE_CPU);
}

TEST_CASE("cuda ops: gather and scatter by integer index arrays and masks" *
          doctest::skip(!cuda::available())) {
    cuda::init(0);
    for (dtype dt :
         {dtype::bool_, dtype::int16, dtype::float32, dtype::float64, dtype::complex128}) {
        const std::string what = name_of(dt);
        const tensor x = random_tensor(dt, {6, 7, 5}, 27);
        // indices with negatives and repeats (a gather may repeat rows)
        const tensor i = tensor::from_vector<int64_t>({0, -1, 3, 3, 5, -6});
        const tensor j = tensor::from_vector<int32_t>({6, 0, -7}, {3, 1}); // axis 1 (7)
        const tensor k = tensor::from_vector<int32_t>({4, 0, -5}, {3, 1}); // axis 2 (5)
        const index_slice all;
        both([&] { return index(x, {i}); }, "x[i] " + what);
        both([&] { return index(x, {all, j}); }, "x[:, j] " + what);
        both(
            [&] {
                return index(x, {i.slice(0, 0, 3), all, k.view({3, 1})});
            },
            "x[i, :, j] (separated) " + what);
        both([&] { return index(x.permute({2, 0, 1}), {all, i}); }, "strided source " + what);
        both(
            [&] {
                return take(x, tensor::from_vector<int64_t>({0, 209, -1, 17}));
            },
            "take flat " + what);
        both([&] { return take_along_axis(x, argmax(x.to(dtype::float64), 1, true), 1); },
             "take_along_axis " + what);
        const tensor mask = gt(random_tensor(dtype::float32, {6, 7}, 28), 0.0);
        both([&] { return index(x, {mask}); }, "x[mask] " + what);
        both([&] { return index(x, {tensor::from_vector<int64_t>({}, {0})}); }, "empty " + what);
        // assignment on the GPU; repeated rows keep the last value (Note [repeated scatter rows])
        const tensor vals = random_tensor(dt, {3, 7, 5}, 29);
        both(
            [&] {
                tensor t = x.clone();
                index_put(t, {tensor::from_vector<int64_t>({4, 0, -1})}, vals);
                return t;
            },
            "x[rows] = v " + what);
        both(
            [&] {
                tensor t = x.clone();
                index_put(t, {all, j.view({3})}, vals.select(0, 0).slice(0, 0, 3).t().t());
                return t;
            },
            "x[:, j] = v " + what);
        both(
            [&] {
                tensor t = x.clone();
                index_put(t, {mask}, scalar(int64_t{1}));
                return t;
            },
            "x[mask] = 1 " + what);
        both(
            [&] {
                tensor t = x.clone();
                index_put(t, {tensor::from_vector<int64_t>({2, 2, 5})}, vals);
                return t;
            },
            "repeated rows, last wins " + what, 0);
        both(
            [&] {
                tensor t = x.clone(); // repeated (row, column) pairs, a broadcast value row
                index_put(t,
                          {tensor::from_vector<int64_t>({1, 4, 1, 1}), all,
                           tensor::from_vector<int64_t>({0, 2, 0, 0})},
                          vals.select(0, 1).select(1, 0));
                return t;
            },
            "repeated pairs, last wins " + what, 0);
    }
    // an out-of-range index raises before anything is written, on the GPU too
    device_scope s(gpu);
    const tensor x = random_tensor(dtype::float32, {4, 3}, 30);
    const tensor before = x.clone();
    CHECK_THROWS_AS(index(x, {tensor::from_vector<int64_t>({1, 4})}), index_error);
    CHECK_THROWS_AS(index_put(x, {tensor::from_vector<int64_t>({-5})}, scalar(1.0)), index_error);
    check_same(x, before, 0, "unchanged after the errors");
    set_default_resource(MEMRESOURCE_CPU);
}

TEST_CASE("cuda ops: concat, stack, pad, tile and repeat copy on the GPU" *
          doctest::skip(!cuda::available())) {
    cuda::init(0);
    for (dtype dt :
         {dtype::bool_, dtype::uint8, dtype::bfloat16, dtype::float64, dtype::complex64}) {
        const std::string what = name_of(dt);
        const tensor a = random_tensor(dt, {3, 4, 5}, 31), b = random_tensor(dt, {3, 2, 5}, 32);
        both([&] { return concat({a, b, a.slice(1, 0, 1)}, 1); }, "concat " + what);
        both(
            [&] {
                return concat({a, random_tensor(dtype::int16, {3, 4, 5}, 33)}, -1);
            },
            "concat with promotion " + what);
        both([&] { return stack({a, a.permute({0, 1, 2}), a}, 3); }, "stack " + what);
        for (pad_mode m : {pad_mode::constant, pad_mode::edge, pad_mode::reflect,
                           pad_mode::symmetric, pad_mode::wrap})
            both(
                [&] {
                    return pad(a, {{1, 2}, {0, 3}, {2, 2}}, m, scalar(int64_t{1}));
                },
                "pad " + what);
        both([&] { return tile(a.t(), {2, 1, 3}); }, "tile " + what);
        both([&] { return repeat(a, 3, 1); }, "repeat " + what);
        both(
            [&] {
                return repeat(a, tensor::from_vector<int64_t>({2, 0, 1}), 0);
            },
            "repeat counts " + what);
    }
    set_default_resource(MEMRESOURCE_CPU);
}
