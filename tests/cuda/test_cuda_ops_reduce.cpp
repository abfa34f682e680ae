// CUDA op coverage, reductions, matmul, random numbers and scans: the CPU's results on cuda:0.
#include "cuda_ops_helpers.hpp"

using namespace isthmus;
using namespace cuda_ops_test;

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
