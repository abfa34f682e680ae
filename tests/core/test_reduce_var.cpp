// Variance and standard deviation: the op against a two-pass float64 reference, and the one-pass
// CPU kernel.
#include <doctest/doctest.h>

#include "reduce_test_data.hpp"
#include "sanitizer_build.hpp"
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

// Two-pass variance reference in double (complex: squared magnitude of the deviation).
std::vector<double> var_reference(const tensor& t, const std::vector<bool>& red, int64_t ddof) {
    size_t outputs = 0;
    const auto idx = output_index(t.shape(), red, outputs);
    const auto x = t.to_vector<cd>();
    std::vector<cd> m(outputs, 0);
    std::vector<double> count(outputs, 0), s(outputs, 0);
    for (size_t i = 0; i < x.size(); ++i) {
        m[idx[i]] += x[i];
        count[idx[i]] += 1;
    }
    for (size_t o = 0; o < outputs; ++o) m[o] /= count[o];
    for (size_t i = 0; i < x.size(); ++i) s[idx[i]] += std::norm(x[i] - m[idx[i]]);
    for (size_t o = 0; o < outputs; ++o)
        s[o] /= std::max(count[o] - static_cast<double>(ddof), 0.0);
    return s;
}

std::vector<cd> as_complex(const std::vector<double>& v, bool root) {
    std::vector<cd> out;
    for (double x : v) out.emplace_back(root ? std::sqrt(x) : x);
    return out;
}

// One million float32 values in [10000, 10001): a mean large against the spread, where a one-pass
// variance in float32 would lose every digit.
tensor large_mean_floats() {
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> d(0.0f, 1.0f);
    std::vector<float> v(1'000'000);
    for (auto& x : v) x = 10000.0f + d(rng);
    return tensor::from_vector(v);
}

} // namespace

TEST_CASE("reduce: var and std match a two-pass float64 reference") {
    for (const auto& [name, t] : layouts_3d(dtype::float64, 41)) {
        for (int bits = 1; bits < 8; ++bits) {
            shape_t axes;
            std::vector<bool> red(3);
            for (int d = 0; d < 3; ++d)
                if (bits & (1 << d)) {
                    axes.push_back(d);
                    red[static_cast<size_t>(d)] = true;
                }
            for (int64_t ddof : {0, 1}) {
                const std::string what =
                    name + " axes " + shape_str(axes) + " ddof " + std::to_string(ddof);
                const auto want = var_reference(t, red, ddof);
                check_values(var(t, reduce_axes(axes), false, ddof), as_complex(want, false), 1e-12,
                             "var " + what);
                const tensor s = std_(t, reduce_axes(axes), true, ddof);
                CHECK(s.shape() == reduced_shape(t.shape(), red, true));
                check_values(s, as_complex(want, true), 1e-12, "std " + what);
            }
        }
    }
    for (dtype dt : all_dtypes) {
        const tensor t = random_tensor(dt, {5, 7}, 43, -3, 3);
        for (int64_t axis : {0, 1}) {
            std::vector<bool> red{axis == 0, axis == 1};
            const std::string what =
                std::string("var ") + std::string(name(dt)) + " axis " + std::to_string(axis);
            const double tol = dt == dtype::bfloat16 ? 2e-2 : tolerance(dt) * 4;
            check_values(var(t, axis, false, 1), as_complex(var_reference(t, red, 1), false), tol,
                         what);
        }
    }
}

TEST_CASE("reduce: var of float32 data with a large mean stays accurate (two passes)") {
    const tensor t = large_mean_floats();
    const double want = var_reference(t, {true}, 0)[0];
    CHECK(std::abs(var(t).item<double>() - want) / want < 1e-4);
    CHECK(std::abs(std_(t).item<double>() - std::sqrt(want)) / std::sqrt(want) < 1e-4);
}

TEST_CASE("reduce: var with ddof >= N gives inf or nan as NumPy") {
    const tensor t = tensor::from_vector(std::vector<double>{1, 2});
    CHECK(std::isinf(var(t, {}, false, 2).item<double>()));
    CHECK(std::isinf(var(t, {}, false, 3).item<double>()));
    CHECK(std::isnan(
        var(tensor::from_vector(std::vector<double>{1, 1}), {}, false, 2).item<double>()));
}

namespace {

// var/std through the one-pass CPU kernel (cpu::variance), called as the op layer does: the
// output has the kept dimensions, the divisor is max(N - ddof, 0).
tensor kernel_var(const tensor& t, const std::vector<bool>& red, int64_t ddof, bool root = false) {
    shape_t kept;
    int64_t count = 1;
    for (size_t d = 0; d < red.size(); ++d)
        if (red[d])
            count *= t.shape()[d];
        else
            kept.push_back(t.shape()[d]);
    tensor out = tensor::empty(kept, ops::var_result_dtype(t.dtype()), MEMRESOURCE_CPU);
    const void* in = t.lock(lock_mode::read, MEMRESOURCE_CPU);
    void* o = out.lock(lock_mode::write, MEMRESOURCE_CPU);
    cpu::variance(out, o, t, in, red, static_cast<double>(std::max<int64_t>(count - ddof, 0)),
                  root);
    out.unlock(lock_mode::write, MEMRESOURCE_CPU);
    t.unlock(lock_mode::read, MEMRESOURCE_CPU);
    return out;
}

std::vector<bool> flags(size_t rank, std::initializer_list<int> axes) {
    std::vector<bool> red(rank, axes.size() == 0);
    for (int a : axes) red[static_cast<size_t>(a)] = true;
    return red;
}

} // namespace

TEST_CASE("reduce: the one-pass variance kernel matches the two-pass reference") {
    SUBCASE("every layout and axis set, float64") {
        for (const auto& [name, t] : layouts_3d(dtype::float64, 61))
            for (int bits = 1; bits < 8; ++bits) {
                std::vector<bool> red(3);
                for (int d = 0; d < 3; ++d) red[static_cast<size_t>(d)] = (bits & (1 << d)) != 0;
                for (int64_t ddof : {0, 1}) {
                    const std::string what = name + " axes bits " + std::to_string(bits) +
                                             " ddof " + std::to_string(ddof);
                    const auto want = var_reference(t, red, ddof);
                    check_values(kernel_var(t, red, ddof), as_complex(want, false), 1e-12,
                                 "var " + what);
                    check_values(kernel_var(t, red, ddof, true), as_complex(want, true), 1e-12,
                                 "std " + what);
                }
            }
    }
    SUBCASE("every dtype, both axes and all") {
        for (dtype dt : all_dtypes) {
            const tensor t = random_tensor(dt, {9, 70}, 63, -3, 3);
            for (const auto& red : {flags(2, {0}), flags(2, {1}), flags(2, {})}) {
                const std::string what =
                    std::string(name(dt)) + (red[0] ? " axis0" : "") + (red[1] ? " axis1" : "");
                const tensor got = kernel_var(t, red, 1);
                CHECK(got.dtype() == ops::var_result_dtype(dt));
                const double tol = dt == dtype::bfloat16 ? 2e-2 : tolerance(dt) * 4;
                check_values(got, as_complex(var_reference(t, red, 1), false), tol, what);
            }
        }
    }
    SUBCASE("large inputs: pieces, blocks, column tiles, strided runs, reversed views") {
        struct shape_case {
            shape_t shape;
            std::vector<bool> red;
        };
        const shape_case cases[] = {
            {{3, 70001}, {false, true}},          // inner, few outputs split into pieces
            {{70001, 3}, {true, false}},          // column, three columns
            {{200, 3001}, {true, false}},         // column, several tiles
            {{40, 50, 300}, {true, true, false}}, // column, two reduced dimensions
            {{3000, 201}, {false, true}},         // inner, many outputs
            {{301, 400}, {true, true}},           // full reduction
            {{50, 60, 70}, {true, false, true}},  // inner with an outer reduced dimension
            {{1, 1'000'003}, {true, true}},       // one long run: many blocks and pieces
        };
        // See Note [large cases under the sanitizer]
        const std::vector<dtype> types = isthmus_test::sanitized_build
                                             ? std::vector<dtype>{dtype::float32, dtype::complex64}
                                             : std::vector<dtype>{dtype::float32, dtype::float64,
                                                                  dtype::complex64, dtype::int32};
        for (dtype dt : types) {
            for (const auto& c : cases) {
                const tensor base = random_tensor(dt, c.shape, 65, -1, 3);
                const int64_t n0 = c.shape[0];
                const tensor views[] = {base, base.slice(0, n0 - 1, -n0 - 1, -1)};
                for (const tensor& t : views) {
                    const std::string what = std::string(name(dt)) + " " + shape_str(c.shape);
                    const double tol = dt == dtype::float64 || dt == dtype::int32 ? 1e-11 : 1e-6;
                    check_values(kernel_var(t, c.red, 0),
                                 as_complex(var_reference(t, c.red, 0), false), tol, "var " + what);
                }
            }
            // A stepped innermost dimension: runs gathered into blocks (Note [gathered runs]).
            const tensor wide = random_tensor(dt, {4, 6001}, 67, -1, 3).slice(1, 0, 6001, 3);
            for (const auto& red : {flags(2, {1}), flags(2, {})})
                check_values(kernel_var(wide, red, 1),
                             as_complex(var_reference(wide, red, 1), false),
                             dt == dtype::float64 || dt == dtype::int32 ? 1e-11 : 1e-6,
                             std::string("stepped ") + std::string(name(dt)));
        }
    }
}

TEST_CASE("reduce: the variance kernel: large means, NaN, inf, empty and 0-d inputs") {
    const double inf = std::numeric_limits<double>::infinity();
    SUBCASE("float32 data with a large mean: as accurate as float64 two passes") {
        const tensor t = large_mean_floats();
        const double want = var_reference(t, {true}, 0)[0];
        CHECK(std::abs(kernel_var(t, {true}, 0).item<double>() - want) / want < 1e-6);
        const tensor cols = t.view({1000, 1000});
        const auto want_cols = var_reference(cols, {true, false}, 0);
        check_values(kernel_var(cols, {true, false}, 0), as_complex(want_cols, false), 2e-6,
                     "column var with a large mean");
    }
    SUBCASE("NaN and inf give NaN, as NumPy") {
        std::vector<double> v(5000, 1.5);
        v[4321] = nan_v;
        CHECK(std::isnan(kernel_var(tensor::from_vector(v), {true}, 0).item<double>()));
        const auto rows = kernel_var(tensor::from_vector(v).view({50, 100}), {false, true}, 0)
                              .to_vector<double>();
        CHECK(std::isnan(rows[43]));
        CHECK(rows[42] == 0.0);
        const auto cols = kernel_var(tensor::from_vector(v).view({50, 100}), {true, false}, 0)
                              .to_vector<double>();
        CHECK(std::isnan(cols[21]));
        CHECK(cols[20] == 0.0);
        v[4321] = inf;
        CHECK(std::isnan(kernel_var(tensor::from_vector(v), {true}, 0).item<double>()));
        CHECK(std::isnan(
            kernel_var(tensor::from_vector(std::vector<float>{1, -static_cast<float>(inf)}), {true},
                       0)
                .item<float>()));
    }
    SUBCASE("ddof >= N, empty reductions, 0-d") {
        const tensor two = tensor::from_vector(std::vector<double>{1, 2});
        CHECK(std::isinf(kernel_var(two, {true}, 2).item<double>()));
        CHECK(std::isnan(
            kernel_var(tensor::from_vector(std::vector<double>{1, 1}), {true}, 2).item<double>()));
        const tensor e = tensor::empty({0, 3}, dtype::float32, MEMRESOURCE_CPU);
        for (double x : kernel_var(e, {true, false}, 0).to_vector<double>()) CHECK(std::isnan(x));
        CHECK(kernel_var(e, {false, true}, 0).shape() == shape_t{0});
        CHECK(std::isnan(kernel_var(e, {true, true}, 0).item<double>()));
        CHECK(kernel_var(tensor::scalar_tensor(2.5f), {}, 0).item<double>() == 0.0);
        CHECK(kernel_var(tensor::scalar_tensor(int16_t{3}), {}, 0).dtype() == dtype::float64);
    }
}

TEST_CASE("reduce: the variance kernel is bit-identical on any number of threads") {
    check_bit_identical_on_any_thread_count(
        17, -1.0f, 3.0f, [](const tensor& t, const tensor& cols) {
            return std::vector<double>{
                kernel_var(t, {true}, 0).item<double>(),
                kernel_var(t.view({3, 1'000'000}), {false, true}, 1).to_vector<double>()[2],
                kernel_var(t.view({1'000'000, 3}), {true, false}, 0).to_vector<double>()[1],
                kernel_var(cols, {true, false}, 0).to_vector<double>()[7],
                kernel_var(t.view({1000, 3000}).slice(1, 0, 3000, 3), {true, true}, 0)
                    .item<double>()};
        });
}
