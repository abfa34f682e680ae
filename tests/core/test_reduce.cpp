// Tests for sum, prod, mean, min, max, any and all against float64 references (var/std:
// test_reduce_var.cpp).
#include <doctest/doctest.h>

#include "reduce_test_data.hpp"
#include "test_support.hpp"

#include "../../core/src/cpu/reduce.hpp" // cpu::variance, called directly below
#include "../../core/src/ops/reduce_types.hpp"
#include "fake_resource.hpp"
#include "isthmus/ops/reduce.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <limits>
#include <omp.h>
#include <random>
#include <string>
#include <vector>

using namespace isthmus;

namespace {

enum class kind { sum, prod, mean, min, max, any, all };
const char* kind_name(kind k) {
    const char* names[] = {"sum", "prod", "mean", "min", "max", "any", "all"};
    return names[static_cast<int>(k)];
}

tensor run(kind k, const tensor& t, const reduce_axes& axes, bool keepdims) {
    switch (k) {
    case kind::sum:
        return sum(t, axes, keepdims);
    case kind::prod:
        return prod(t, axes, keepdims);
    case kind::mean:
        return mean(t, axes, keepdims);
    case kind::min:
        return min(t, axes, keepdims);
    case kind::max:
        return max(t, axes, keepdims);
    case kind::any:
        return any(t, axes, keepdims);
    case kind::all:
        return all(t, axes, keepdims);
    }
    return {};
}

// The reference reduction, in complex double (real dtypes have zero imaginary parts).
std::vector<cd> reference(kind k, const tensor& t, const std::vector<bool>& red) {
    size_t outputs = 0;
    const auto idx = output_index(t.shape(), red, outputs);
    const auto x = t.to_vector<cd>();
    std::vector<cd> acc(outputs, k == kind::prod ? cd(1) : cd(0));
    std::vector<size_t> count(outputs, 0);
    std::vector<bool> flag(outputs, k == kind::all);
    for (size_t i = 0; i < x.size(); ++i) {
        const size_t o = idx[i];
        const cd v = x[i];
        switch (k) {
        case kind::sum:
        case kind::mean:
            acc[o] += v;
            break;
        case kind::prod:
            acc[o] *= v;
            break;
        case kind::min:
            if (count[o] == 0 || (!is_nan(acc[o]) && (is_nan(v) || less(v, acc[o])))) acc[o] = v;
            break;
        case kind::max:
            if (count[o] == 0 || (!is_nan(acc[o]) && (is_nan(v) || less(acc[o], v)))) acc[o] = v;
            break;
        case kind::any:
            flag[o] = flag[o] || v != cd(0);
            break;
        case kind::all:
            flag[o] = flag[o] && v != cd(0);
            break;
        }
        ++count[o];
    }
    for (size_t o = 0; o < outputs; ++o) {
        if (k == kind::mean) acc[o] /= static_cast<double>(count[o]);
        if (k == kind::any || k == kind::all) acc[o] = flag[o] ? 1.0 : 0.0;
    }
    return acc;
}

} // namespace

TEST_CASE("reduce: every op over every axis set and layout matches a float64 reference") {
    const kind kinds[] = {kind::sum, kind::prod, kind::mean, kind::min,
                          kind::max, kind::any,  kind::all};
    for (const auto& [name, t] : layouts_3d(dtype::float64, 11)) {
        for (int bits = 0; bits < 8; ++bits) {
            shape_t axes;
            std::vector<bool> red(3);
            for (int d = 0; d < 3; ++d)
                if (bits & (1 << d)) {
                    axes.push_back(bits == 7 && d == 0 ? -3 : d); // one negative axis
                    red[static_cast<size_t>(d)] = true;
                }
            for (kind k : kinds)
                for (bool keep : {false, true}) {
                    const std::string what = std::string(kind_name(k)) + " " + name + " axes " +
                                             shape_str(axes) + (keep ? " keepdims" : "");
                    const tensor r = run(k, t, reduce_axes(axes), keep);
                    CHECK_MESSAGE(r.shape() == reduced_shape(t.shape(), red, keep), what);
                    check_values(r, reference(k, t, red), 1e-12, what);
                }
        }
        // Default axes: all of them, a 0-d result (or all ones with keepdims).
        const std::vector<bool> every(3, true);
        CHECK(sum(t).dim() == 0);
        CHECK(sum(t, {}, true).shape() == shape_t{1, 1, 1});
        check_values(sum(t), reference(kind::sum, t, every), 1e-12, name);
        check_values(max(t, {}), reference(kind::max, t, every), 0, name);
        // A single integer axis.
        check_values(mean(t, 1), reference(kind::mean, t, {false, true, false}), 1e-12, name);
        check_values(min(t, {-1}), reference(kind::min, t, {false, false, true}), 0, name);
    }
}

TEST_CASE("reduce: result dtypes follow NumPy") {
    struct row {
        dtype in, sum, mean, var;
    };
    const row rows[] = {
        {dtype::bool_, dtype::int64, dtype::float64, dtype::float64},
        {dtype::int8, dtype::int64, dtype::float64, dtype::float64},
        {dtype::int32, dtype::int64, dtype::float64, dtype::float64},
        {dtype::uint8, dtype::uint64, dtype::float64, dtype::float64},
        {dtype::uint64, dtype::uint64, dtype::float64, dtype::float64},
        {dtype::float16, dtype::float16, dtype::float16, dtype::float16},
        {dtype::bfloat16, dtype::bfloat16, dtype::bfloat16, dtype::bfloat16},
        {dtype::float32, dtype::float32, dtype::float32, dtype::float32},
        {dtype::float64, dtype::float64, dtype::float64, dtype::float64},
        {dtype::complex64, dtype::complex64, dtype::complex64, dtype::float32},
        {dtype::complex128, dtype::complex128, dtype::complex128, dtype::float64},
    };
    for (const row& r : rows) {
        CAPTURE(r.in);
        const tensor t = random_tensor(r.in, {2, 3}, 5);
        CHECK(sum(t).dtype() == r.sum);
        CHECK(prod(t, 0).dtype() == r.sum);
        CHECK(mean(t).dtype() == r.mean);
        CHECK(var(t).dtype() == r.var);
        CHECK(std_(t, 1).dtype() == r.var);
        CHECK(min(t).dtype() == r.in);
        CHECK(max(t, 0).dtype() == r.in);
        CHECK(any(t).dtype() == dtype::bool_);
        CHECK(all(t, 1).dtype() == dtype::bool_);
    }
}

TEST_CASE("reduce: every dtype against the reference, contiguous and transposed") {
    const kind kinds[] = {kind::sum, kind::prod, kind::mean, kind::min,
                          kind::max, kind::any,  kind::all};
    for (dtype dt : all_dtypes) {
        for (bool transposed : {false, true}) {
            // Small integers keep integer products exact in double.
            tensor t = transposed ? random_tensor(dt, {6, 4}, 21, -3, 3).t()
                                  : random_tensor(dt, {4, 6}, 21, -3, 3);
            for (int which = 0; which < 3; ++which) {
                const std::vector<bool> red = which == 0   ? std::vector<bool>{true, false}
                                              : which == 1 ? std::vector<bool>{false, true}
                                                           : std::vector<bool>{true, true};
                const reduce_axes axes = which == 0   ? reduce_axes(0)
                                         : which == 1 ? reduce_axes(1)
                                                      : reduce_axes();
                for (kind k : kinds) {
                    const std::string what =
                        std::string(kind_name(k)) + " " + std::string(name(dt)) + " case " +
                        std::to_string(which) + (transposed ? " transposed" : "");
                    // Half-precision results are rounded once from the exact value.
                    const double tol = k == kind::prod ? tolerance(dt) * 4 : tolerance(dt);
                    check_values(run(k, t, axes, false), reference(k, t, red), tol, what);
                }
            }
        }
    }
}

TEST_CASE("reduce: large inputs take the parallel inner and column kernels") {
    struct shape_case {
        shape_t shape;
        shape_t axes;
    };
    const shape_case cases[] = {
        {{3, 70000}, {1}},       // inner, few outputs: each output split over threads
        {{70000, 3}, {0}},       // column, one tile: reduced rows split over threads
        {{200, 3000}, {0}},      // column, two tiles
        {{40, 50, 300}, {0, 1}}, // column with two reduced dimensions
        {{3000, 200}, {1}},      // inner, many outputs
        {{300, 400}, {}},        // full reduction
        {{50, 60, 70}, {0, 2}},  // inner with an outer reduced dimension
    };
    for (const auto& c : cases) {
        const tensor base = random_tensor(dtype::float64, c.shape, 31);
        for (const tensor& t : {base, base.slice(0, c.shape[0] - 1, -c.shape[0] - 1, -1)}) {
            std::vector<bool> red(c.shape.size(), c.axes.empty());
            for (int64_t a : c.axes) red[static_cast<size_t>(a)] = true;
            const reduce_axes axes = c.axes.empty() ? reduce_axes() : reduce_axes(c.axes);
            const std::string what = shape_str(c.shape) + " axes " + shape_str(c.axes);
            check_values(sum(t, axes), reference(kind::sum, t, red), 1e-11, "sum " + what);
            check_values(max(t, axes), reference(kind::max, t, red), 0, "max " + what);
            check_values(any(t, axes), reference(kind::any, t, red), 0, "any " + what);
            // The transposed view reduces the same way with kept/reduced roles swapped.
            if (t.dim() == 2 && !c.axes.empty()) {
                const tensor tt = t.t();
                const std::vector<bool> rt{red[1], red[0]};
                check_values(sum(tt, reduce_axes(1 - c.axes[0])), reference(kind::sum, tt, rt),
                             1e-11, "sum transposed " + what);
            }
        }
    }
}

TEST_CASE("reduce: float32 sums of 10M elements stay accurate") {
    const size_t n = 10'000'000;
    {
        const tensor t = tensor::from_vector(std::vector<float>(n, 0.1f));
        const double want = static_cast<double>(n) * static_cast<double>(0.1f);
        const double got = sum(t).item<double>();
        CHECK(std::abs(got - want) / want < 1e-6);
        CHECK(std::abs(mean(t).item<double>() - static_cast<double>(0.1f)) / 0.1 < 1e-6);
        // Column sums keep double accumulators as well.
        const tensor cols = sum(t.view({static_cast<int64_t>(n / 2), 2}), 0);
        for (double v : cols.to_vector<double>()) CHECK(std::abs(v - want / 2) / (want / 2) < 1e-6);
    }
    {
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> d(0.0f, 1.0f);
        std::vector<float> v(n);
        double want = 0;
        for (auto& x : v) {
            x = d(rng);
            want += x;
        }
        const double got = sum(tensor::from_vector(v)).item<double>();
        CHECK(std::abs(got - want) / want < 1e-6);
    }
}

TEST_CASE("reduce: empty, 0-d and size-1 cases") {
    SUBCASE("an empty reduced dimension gives the identity") {
        const tensor e = tensor::empty({0, 3}, dtype::float32, MEMRESOURCE_CPU);
        CHECK(sum(e, 0).shape() == shape_t{3});
        CHECK(sum(e, 0).to_vector<double>() == std::vector<double>{0, 0, 0});
        CHECK(prod(e, 0).to_vector<double>() == std::vector<double>{1, 1, 1});
        for (double v : mean(e, 0).to_vector<double>()) CHECK(std::isnan(v));
        CHECK(any(e, 0).to_vector<bool>() == std::vector<bool>{false, false, false});
        CHECK(all(e, 0).to_vector<bool>() == std::vector<bool>{true, true, true});
        CHECK(sum(e).item<double>() == 0.0);
        CHECK(sum(e, {}, true).shape() == shape_t{1, 1});
        // Reducing the non-empty axis leaves an empty result.
        CHECK(sum(e, 1).shape() == shape_t{0});
        CHECK(max(e, 1).shape() == shape_t{0});
        CHECK(sum(e, 1, true).shape() == shape_t{0, 1});
        CHECK(std::isnan(var(e).item<double>()));
    }
    SUBCASE("min/max of nothing raise value_error") {
        const tensor e = tensor::empty({0, 3}, dtype::float64, MEMRESOURCE_CPU);
        CHECK_THROWS_AS((void)min(e, 0), value_error);
        CHECK_THROWS_AS((void)max(e), value_error);
        CHECK_THROWS_AS((void)max(tensor::empty({0, 0}, dtype::int32, MEMRESOURCE_CPU), 0),
                        value_error);
        CHECK(contains(error_of([&] { (void)max(e); }), "no identity"));
        CHECK(contains(error_of([&] { (void)max(e); }), "(0, 3)"));
        CHECK(e.shape() == shape_t{0, 3});
    }
    SUBCASE("0-d tensors reduce to themselves") {
        const tensor s = tensor::scalar_tensor(2.5f);
        CHECK(sum(s).dim() == 0);
        CHECK(sum(s).item<float>() == 2.5f);
        CHECK(max(s, {}, true).dim() == 0);
        CHECK(mean(s).item<double>() == 2.5);
        CHECK(var(s).item<double>() == 0.0);
        CHECK(sum(tensor::scalar_tensor(int8_t{7})).dtype() == dtype::int64);
        CHECK_THROWS_AS((void)sum(s, 0), index_error);
    }
    SUBCASE("no axes maps each element on its own") {
        const tensor t = random_tensor(dtype::int16, {2, 3}, 3);
        const tensor r = sum(t, reduce_axes::none());
        CHECK(r.shape() == shape_t{2, 3});
        CHECK(r.dtype() == dtype::int64);
        CHECK(r.to_vector<int64_t>() == t.to_vector<int64_t>());
        CHECK(max(t, reduce_axes::none(), true).to_vector<int64_t>() == t.to_vector<int64_t>());
    }
    SUBCASE("size-1 dimensions") {
        const tensor t = random_tensor(dtype::float64, {1, 5, 1}, 4);
        CHECK(sum(t, {0, 2}).to_vector<double>() == t.to_vector<double>());
        CHECK(sum(t, {0, 2}, true).shape() == shape_t{1, 5, 1});
    }
}

TEST_CASE("reduce: integer sums and products wrap like NumPy's int64") {
    const int64_t big = std::numeric_limits<int64_t>::max();
    const tensor t = tensor::from_vector(std::vector<int64_t>{big, 1, 1});
    CHECK(sum(t).item<int64_t>() == std::numeric_limits<int64_t>::min() + 1);
    const tensor u = tensor::from_vector(std::vector<uint64_t>{~uint64_t{0}, 2});
    CHECK(sum(u).item<uint64_t>() == 1);
    // int8 does not wrap at 8 bits: the sum is int64.
    const tensor i8 = tensor::from_vector(std::vector<int8_t>(100, int8_t{100}));
    CHECK(sum(i8).item<int64_t>() == 10000);
    CHECK(prod(tensor::from_vector(std::vector<int64_t>(64, 2))).item<int64_t>() == 0);
    CHECK(prod(tensor::from_vector(std::vector<int8_t>{-2, 3, -4})).item<int64_t>() == 24);
    CHECK(sum(tensor::from_vector(std::vector<bool>{true, true, false, true})).item<int64_t>() ==
          3);
}

TEST_CASE("reduce: NaN propagates through min and max; any/all treat NaN as true") {
    const double inf = std::numeric_limits<double>::infinity();
    const tensor t = tensor::from_vector(std::vector<double>{1, nan_v, -inf, 5, 2, 3}, {2, 3});
    CHECK(std::isnan(min(t).item<double>()));
    CHECK(std::isnan(max(t).item<double>()));
    const auto cols = max(t, 0).to_vector<double>();
    CHECK(cols[0] == 5);
    CHECK(std::isnan(cols[1]));
    CHECK(cols[2] == 3);
    const auto rows = min(t, 1).to_vector<double>();
    CHECK(std::isnan(rows[0]));
    CHECK(rows[1] == 2);
    CHECK(all(tensor::from_vector(std::vector<double>{nan_v, 1})).item<bool>());
    // Long rows: the NaN sits past the lane kernel's first blocks.
    std::vector<float> v(100000, 1.0f);
    v[77777] = std::numeric_limits<float>::quiet_NaN();
    CHECK(std::isnan(min(tensor::from_vector(v)).item<float>()));
    CHECK(std::isnan(max(tensor::from_vector(v).view({1000, 100}), 0).to_vector<float>()[77]));
    std::vector<double> d(1000, 2.0);
    d[999] = -7.0;
    CHECK(min(tensor::from_vector(d)).item<double>() == -7.0);
    d[333] = nan_v;
    CHECK(std::isnan(min(tensor::from_vector(d)).item<double>()));
    CHECK(std::isnan(max(tensor::from_vector(d).view({10, 100}), 1).to_vector<double>()[3]));
    CHECK(max(tensor::from_vector(d).view({10, 100}), 1).to_vector<double>()[4] == 2.0);
    // -0.0 and 0.0 compare equal; infinities are ordinary values.
    CHECK(max(tensor::from_vector(std::vector<double>{-inf, -1})).item<double>() == -1);
    CHECK(min(tensor::from_vector(std::vector<float>{static_cast<float>(inf), 3})).item<float>() ==
          3);
}

TEST_CASE("reduce: complex min/max compare lexicographically, NaN wins") {
    const tensor t = tensor::from_vector(std::vector<cd>{{1, 5}, {1, -2}, {0, 9}, {3, -1}, {3, 1}});
    CHECK(min(t).item<cd>() == cd(0, 9));
    CHECK(max(t).item<cd>() == cd(3, 1));
    const tensor n = tensor::from_vector(std::vector<cd>{{1, 0}, {2, nan_v}, {3, 0}});
    CHECK(is_nan(max(n).item<cd>()));
    CHECK(is_nan(min(n.to(dtype::complex64)).item<cd>()));
}

TEST_CASE("reduce: bad axes and inputs raise typed errors and leave the input unchanged") {
    const tensor t = random_tensor(dtype::float32, {2, 3, 4}, 9);
    const auto before = t.to_vector<float>();
    CHECK_THROWS_AS((void)sum(t, 3), index_error);
    CHECK_THROWS_AS((void)mean(t, {0, -4}), index_error);
    CHECK_THROWS_AS((void)var(t, 5), index_error);
    CHECK_THROWS_AS((void)any(t, {1, 1}), value_error);
    CHECK_THROWS_AS((void)max(t, {0, -3}), value_error);
    CHECK_THROWS_AS((void)sum(tensor()), value_error);
    CHECK_THROWS_AS((void)std_(tensor()), value_error);
    const std::string out_of_range = error_of([&] { (void)sum(t, 3); });
    CHECK(contains(out_of_range, "sum"));
    CHECK(contains(out_of_range, "axis 3"));
    CHECK(contains(out_of_range, "rank 3"));
    CHECK(contains(out_of_range, "(2, 3, 4)"));
    const std::string repeated = error_of([&] { (void)all(t, {0, -3}); });
    CHECK(contains(repeated, "all"));
    CHECK(contains(repeated, "repeated"));
    CHECK(contains(error_of([] { (void)prod(tensor()); }), "undefined"));
    CHECK(t.shape() == shape_t{2, 3, 4});
    CHECK(t.dtype() == dtype::float32);
    CHECK(t.to_vector<float>() == before);
}

TEST_CASE("reduce: inputs valid only on another resource are read on the CPU") {
    isthmus_test::registered_fake dev(MEMRESOURCE_DEVICE4);
    const tensor t = random_tensor(dtype::float64, {30, 40}, 51);
    const auto want = reference(kind::sum, t, {true, false});
    // Move the only valid copy to the fake device.
    t.lock(lock_mode::readwrite, dev.id());
    t.unlock(lock_mode::readwrite, dev.id());
    CHECK(t.location() == dev.id());
    const size_t before = dev->bytes_to_host;
    const tensor r = sum(t, 0);
    CHECK(dev->bytes_to_host > before);
    CHECK(r.location() == MEMRESOURCE_CPU);
    check_values(r, want, 1e-12, "sum of a device tensor");
    CHECK(argmax(t, 1).location() == MEMRESOURCE_CPU);
}

TEST_CASE("reduce: float sums are bit-identical on any number of threads") {
    check_bit_identical_on_any_thread_count(
        13, -1.0f, 1.0f, [](const tensor& t, const tensor& cols) {
            return std::vector<double>{sum(t).item<double>(), mean(t).item<double>(),
                                       sum(t.view({3, 1'000'000}), 1).to_vector<double>()[2],
                                       sum(t.view({1'000'000, 3}), 0).to_vector<double>()[1],
                                       sum(cols, 0).to_vector<double>()[7]};
        });
}

TEST_CASE("reduce: min/max lanes find NaN and infinities anywhere in long runs") {
    const double inf = std::numeric_limits<double>::infinity();
    for (int64_t n : {64, 65, 1000, 100'003}) {
        for (int64_t pos : {int64_t{0}, n / 2, n - 1}) {
            std::vector<double> d(static_cast<size_t>(n));
            std::vector<float> f(static_cast<size_t>(n));
            for (int64_t i = 0; i < n; ++i) {
                d[static_cast<size_t>(i)] = std::sin(static_cast<double>(i));
                f[static_cast<size_t>(i)] = static_cast<float>(d[static_cast<size_t>(i)]);
            }
            const std::string what = std::to_string(n) + " at " + std::to_string(pos);
            d[static_cast<size_t>(pos)] = 7.0;
            f[static_cast<size_t>(pos)] = -7.0f;
            CHECK_MESSAGE(max(tensor::from_vector(d)).item<double>() == 7.0, what);
            CHECK_MESSAGE(min(tensor::from_vector(f)).item<float>() == -7.0f, what);
            // An infinity takes the exact rescan and stays an ordinary value.
            d[static_cast<size_t>(pos)] = inf;
            f[static_cast<size_t>(pos)] = static_cast<float>(inf);
            CHECK_MESSAGE(max(tensor::from_vector(d)).item<double>() == inf, what);
            CHECK_MESSAGE(min(tensor::from_vector(d)).item<double>() ==
                              *std::min_element(d.begin(), d.end()),
                          what);
            CHECK_MESSAGE(min(tensor::from_vector(f)).item<float>() > -1.5f, what);
            CHECK_MESSAGE(max(tensor::from_vector(f)).item<float>() == static_cast<float>(inf),
                          what);
            d[static_cast<size_t>(pos)] = -inf;
            CHECK_MESSAGE(min(tensor::from_vector(d)).item<double>() == -inf, what);
            CHECK_MESSAGE(max(tensor::from_vector(d)).item<double>() < 1.5, what);
            d[static_cast<size_t>(pos)] = nan_v;
            f[static_cast<size_t>(pos)] = std::numeric_limits<float>::quiet_NaN();
            CHECK_MESSAGE(std::isnan(max(tensor::from_vector(d)).item<double>()), what);
            CHECK_MESSAGE(std::isnan(min(tensor::from_vector(d)).item<double>()), what);
            CHECK_MESSAGE(std::isnan(max(tensor::from_vector(f)).item<float>()), what);
            CHECK_MESSAGE(std::isnan(min(tensor::from_vector(f)).item<float>()), what);
        }
    }
}
