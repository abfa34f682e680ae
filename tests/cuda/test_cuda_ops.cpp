// CUDA op coverage, elementwise: every op the GPU runs gives the CPU's result, per dtype.
#include "cuda_ops_helpers.hpp"

using namespace isthmus;
using namespace cuda_ops_test;

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
