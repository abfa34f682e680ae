// Tests for argmin/argmax (flat and along an axis) and cumsum/cumprod against references.
#include <doctest/doctest.h>

#include "sanitizer_build.hpp"
#include "test_support.hpp"
#include "value_checks.hpp"

#include "isthmus/ops/reduce.hpp"

#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace isthmus;

namespace {

using cd = std::complex<double>;

// Random integers in [lo, hi] (many ties) or uniform reals, as any dtype (complex: random
// imaginary parts too).
tensor random_input(dtype dt, const shape_t& shape, uint32_t seed, bool ties = false) {
    std::mt19937 rng(seed);
    std::vector<cd> v(static_cast<size_t>(numel_of(shape)));
    std::uniform_real_distribution<double> d(-2.0, 2.0);
    std::uniform_int_distribution<int> di(is_unsigned_int(dt) ? 0 : -3, 3);
    for (auto& x : v) {
        if (is_bool(dt))
            x = std::bernoulli_distribution(0.5)(rng) ? 1.0 : 0.0;
        else if (ties || is_integer(dt))
            x = cd(di(rng), is_complex(dt) ? di(rng) : 0);
        else
            x = cd(d(rng), is_complex(dt) ? d(rng) : 0.0);
    }
    return tensor::from_vector(v, shape).to(dt);
}

// Reference argmin/argmax along `axis` (or over the flattened tensor when axis < 0).
std::vector<int64_t> arg_reference(const tensor& t, int64_t axis, bool is_max) {
    const auto x = t.to_vector<cd>();
    const shape_t& s = t.shape();
    int64_t len = t.numel(), pre = 1, post = 1;
    if (axis >= 0) {
        len = s[static_cast<size_t>(axis)];
        for (int64_t d = 0; d < axis; ++d) pre *= s[static_cast<size_t>(d)];
        for (int64_t d = axis + 1; d < t.dim(); ++d) post *= s[static_cast<size_t>(d)];
    }
    std::vector<int64_t> out;
    for (int64_t p = 0; p < pre; ++p)
        for (int64_t q = 0; q < post; ++q) {
            int64_t best = 0;
            for (int64_t i = 0; i < len; ++i) {
                const cd v = x[static_cast<size_t>((p * len + i) * post + q)];
                const cd b = x[static_cast<size_t>((p * len + best) * post + q)];
                if (is_nan(b)) break;
                if (is_nan(v) || (is_max ? less(b, v) : less(v, b))) best = i;
            }
            out.push_back(best);
        }
    return out;
}

struct layout {
    std::string name;
    tensor t;
};
std::vector<layout> layouts(dtype dt, uint32_t seed, bool ties) {
    std::vector<layout> out;
    out.push_back({"contiguous", random_input(dt, {4, 5, 6}, seed, ties)});
    out.push_back({"permuted", random_input(dt, {6, 4, 5}, seed + 1, ties).permute({1, 2, 0})});
    out.push_back({"stepped", random_input(dt, {8, 5, 6}, seed + 2, ties).slice(0, 1, 8, 2)});
    out.push_back(
        {"reversed",
         random_input(dt, {4, 5, 6}, seed + 3, ties).slice(1, 4, -6, -1).slice(2, 5, -7, -1)});
    out.push_back({"broadcast", random_input(dt, {4, 1, 6}, seed + 4, ties).expand({4, 5, 6})});
    return out;
}

} // namespace

TEST_CASE("reduce: argmin/argmax flat and along each axis match the reference") {
    for (bool ties : {false, true})
        for (const layout& lay : layouts(dtype::float64, ties ? 100 : 200, ties)) {
            const std::string& name = lay.name; // not a structured binding: clang's OpenMP
            const tensor& t = lay.t;            // cannot capture those (CAPTURE, INFO)
            for (bool is_max : {false, true}) {
                CAPTURE(name);
                CAPTURE(ties);
                CAPTURE(is_max);
                const tensor flat = is_max ? argmax(t) : argmin(t);
                CHECK(flat.dim() == 0);
                CHECK(flat.dtype() == dtype::int64);
                CHECK(flat.item<int64_t>() == arg_reference(t, -1, is_max)[0]);
                for (int64_t axis = -3; axis < 3; ++axis) {
                    const int64_t a = axis < 0 ? axis + 3 : axis;
                    const tensor r = is_max ? argmax(t, axis) : argmin(t, axis, true);
                    shape_t want_shape = t.shape();
                    if (is_max)
                        want_shape.erase(want_shape.begin() + a);
                    else
                        want_shape[static_cast<size_t>(a)] = 1;
                    CHECK(r.shape() == want_shape);
                    CHECK(r.to_vector<int64_t>() == arg_reference(t, a, is_max));
                }
            }
        }
}

TEST_CASE("reduce: argmin/argmax of every dtype") {
    const dtype dts[] = {dtype::bool_,   dtype::int8,      dtype::int16,     dtype::int32,
                         dtype::int64,   dtype::uint8,     dtype::uint16,    dtype::uint32,
                         dtype::uint64,  dtype::float16,   dtype::bfloat16,  dtype::float32,
                         dtype::float64, dtype::complex64, dtype::complex128};
    for (dtype dt : dts) {
        CAPTURE(dt);
        const tensor t = random_input(dt, {7, 9}, 300, true);
        for (bool is_max : {false, true}) {
            CHECK((is_max ? argmax(t) : argmin(t)).item<int64_t>() ==
                  arg_reference(t, -1, is_max)[0]);
            for (int64_t axis : {0, 1})
                CHECK((is_max ? argmax(t, axis) : argmin(t, axis)).to_vector<int64_t>() ==
                      arg_reference(t, axis, is_max));
            CHECK((is_max ? argmax(t.t(), 1) : argmin(t.t(), 1)).to_vector<int64_t>() ==
                  arg_reference(t.t(), 1, is_max));
        }
    }
}

TEST_CASE("reduce: argmin/argmax: first occurrence wins, and the first NaN wins") {
    CHECK(argmax(tensor::from_vector(std::vector<double>{1, 3, 3, 2})).item<int64_t>() == 1);
    CHECK(argmin(tensor::from_vector(std::vector<int8_t>{5, 0, 7, 0})).item<int64_t>() == 1);
    CHECK(argmax(tensor::from_vector(std::vector<double>{0.0, -0.0})).item<int64_t>() == 0);
    CHECK(argmax(tensor::from_vector(std::vector<double>{1, nan_v, nan_v, 9})).item<int64_t>() ==
          1);
    CHECK(argmin(tensor::from_vector(std::vector<float>{1, -5, std::nanf("")})).item<int64_t>() ==
          2);
    CHECK(argmax(tensor::from_vector(std::vector<cd>{{1, 1}, {1, 2}, {0, 5}})).item<int64_t>() ==
          1);
    CHECK(argmin(tensor::from_vector(std::vector<cd>{{1, 1}, {1, 0}, {2, -5}})).item<int64_t>() ==
          1);
    // Along axis 0 (the column kernel) and axis 1 (rows), with NaN in some slices.
    const tensor t =
        tensor::from_vector(std::vector<double>{1, nan_v, 3, 4, 2, nan_v, 4, 0, 3}, {3, 3});
    CHECK(argmax(t, 0).to_vector<int64_t>() == std::vector<int64_t>{1, 0, 1});
    CHECK(argmin(t, 1).to_vector<int64_t>() == std::vector<int64_t>{1, 2, 1});
    // Long inputs: ties across blocks and threads keep the first index; NaN past many blocks.
    std::vector<float> v(200000, 1.0f);
    v[150000] = 2.0f;
    v[170000] = 2.0f;
    CHECK(argmax(tensor::from_vector(v)).item<int64_t>() == 150000);
    CHECK(argmin(tensor::from_vector(v)).item<int64_t>() == 0);
    v[190000] = std::nanf("");
    v[190001] = std::nanf("");
    CHECK(argmax(tensor::from_vector(v)).item<int64_t>() == 190000);
    std::vector<double> d(1000, -1.0);
    d[999] = 5.0;
    d[700] = nan_v;
    CHECK(argmax(tensor::from_vector(d)).item<int64_t>() == 700);
    CHECK(argmin(tensor::from_vector(d).view({10, 100}), 1).to_vector<int64_t>()[7] == 0);
    CHECK(argmax(tensor::from_vector(d).view({10, 100}), 1).to_vector<int64_t>()[7] == 0);
    CHECK(argmax(tensor::from_vector(d).view({10, 100}), 1).to_vector<int64_t>()[9] == 99);
    // Increasing data improves on every block and lane: the last index wins.
    std::vector<double> up(5000);
    for (size_t i = 0; i < up.size(); ++i) up[i] = static_cast<double>(i % 2500);
    CHECK(argmax(tensor::from_vector(up)).item<int64_t>() == 2499);
    CHECK(argmin(tensor::from_vector(up)).item<int64_t>() == 0);
    CHECK(argmin(tensor::from_vector(v).view({2000, 100}), 0).to_vector<int64_t>()[0] == 1900);
}

TEST_CASE("reduce: argmin/argmax of large inputs (parallel scans, column tiles)") {
    // See Note [large cases under the sanitizer]
    const std::vector<dtype> types =
        isthmus_test::sanitized_build
            ? std::vector<dtype>{dtype::float64, dtype::int8}
            : std::vector<dtype>{dtype::float32, dtype::float64, dtype::int32, dtype::int8};
    for (dtype dt : types)
        for (const shape_t& shape : {shape_t{300000}, shape_t{3000, 300}, shape_t{300, 3000},
                                     shape_t{2, 70000}, shape_t{70000, 2}}) {
            // Integers get many ties (first occurrence across blocks and threads).
            const tensor base = random_input(dt, shape, 77);
            for (const tensor& t : {base, base.slice(0, shape[0] - 1, -shape[0] - 1, -1)}) {
                CAPTURE(dt);
                CAPTURE(shape_str(shape));
                CHECK(argmax(t).item<int64_t>() == arg_reference(t, -1, true)[0]);
                CHECK(argmin(t).item<int64_t>() == arg_reference(t, -1, false)[0]);
                for (int64_t axis = 0; axis < t.dim(); ++axis) {
                    CHECK(argmax(t, axis).to_vector<int64_t>() == arg_reference(t, axis, true));
                    CHECK(argmin(t, axis).to_vector<int64_t>() == arg_reference(t, axis, false));
                }
            }
        }
}

TEST_CASE("reduce: argmin/argmax errors") {
    const tensor e = tensor::empty({3, 0}, dtype::float32, MEMRESOURCE_CPU);
    CHECK_THROWS_AS((void)argmax(e), value_error);
    CHECK_THROWS_AS((void)argmin(e, 1), value_error);
    CHECK(contains(error_of([&] { (void)argmax(e); }), "empty sequence"));
    CHECK(contains(error_of([&] { (void)argmin(e, 1); }), "argmin"));
    // Reducing the non-empty axis of an empty tensor gives an empty result.
    CHECK(argmax(e, 0).shape() == shape_t{0});
    const tensor t = random_input(dtype::int32, {2, 3}, 5);
    const auto before = t.to_vector<int32_t>();
    CHECK_THROWS_AS((void)argmax(t, 2), index_error);
    CHECK_THROWS_AS((void)argmin(t, -3), index_error);
    CHECK(contains(error_of([&] { (void)argmax(t, 2); }), "axis 2"));
    CHECK_THROWS_AS((void)argmax(tensor()), value_error);
    CHECK_THROWS_AS((void)argmin(tensor::scalar_tensor(1.0), 0), index_error);
    CHECK(argmin(tensor::scalar_tensor(1.0)).item<int64_t>() == 0);
    CHECK(t.to_vector<int32_t>() == before);
}

namespace {

// Reference cumulative sum/product along `axis` in complex double; integers wrap via uint64.
std::vector<cd> cum_reference(const tensor& t, int64_t axis, bool is_prod) {
    const shape_t& s = t.shape();
    int64_t pre = 1, post = 1;
    const int64_t len = s[static_cast<size_t>(axis)];
    for (int64_t d = 0; d < axis; ++d) pre *= s[static_cast<size_t>(d)];
    for (int64_t d = axis + 1; d < t.dim(); ++d) post *= s[static_cast<size_t>(d)];
    const auto x = t.to_vector<cd>();
    std::vector<cd> out(x.size());
    for (int64_t p = 0; p < pre; ++p)
        for (int64_t q = 0; q < post; ++q) {
            cd acc = is_prod ? 1.0 : 0.0;
            for (int64_t i = 0; i < len; ++i) {
                const auto k = static_cast<size_t>((p * len + i) * post + q);
                acc = is_prod ? acc * x[k] : acc + x[k];
                out[k] = acc;
            }
        }
    return out;
}

} // namespace

TEST_CASE("reduce: cumsum/cumprod flat and along each axis match the reference") {
    for (const layout& lay : layouts(dtype::float64, 400, false)) {
        const std::string& name = lay.name; // not a structured binding: clang's OpenMP
        const tensor& t = lay.t;            // cannot capture those (CAPTURE, INFO)
        for (bool is_prod : {false, true}) {
            const std::string what = name + (is_prod ? " cumprod" : " cumsum");
            const tensor flat = is_prod ? cumprod(t) : cumsum(t);
            CHECK(flat.shape() == shape_t{t.numel()});
            check_values(flat, cum_reference(t.reshape({-1}), 0, is_prod), 1e-12, what);
            for (int64_t axis = -3; axis < 3; ++axis) {
                const tensor r = is_prod ? cumprod(t, axis) : cumsum(t, axis);
                CHECK(r.shape() == t.shape());
                check_values(r, cum_reference(t, axis < 0 ? axis + 3 : axis, is_prod), 1e-12,
                             what + " axis " + std::to_string(axis));
            }
        }
    }
}

TEST_CASE("reduce: cumsum/cumprod dtypes follow sum's") {
    struct row {
        dtype in, out;
        double tol;
    };
    const row rows[] = {{dtype::bool_, dtype::int64, 0},
                        {dtype::int8, dtype::int64, 0},
                        {dtype::int32, dtype::int64, 0},
                        {dtype::uint8, dtype::uint64, 0},
                        {dtype::uint16, dtype::uint64, 0},
                        {dtype::int64, dtype::int64, 0},
                        {dtype::float16, dtype::float16, 1e-2},
                        {dtype::bfloat16, dtype::bfloat16, 5e-2},
                        {dtype::float32, dtype::float32, 1e-6},
                        {dtype::float64, dtype::float64, 1e-12},
                        {dtype::complex64, dtype::complex64, 1e-6},
                        {dtype::complex128, dtype::complex128, 1e-12}};
    for (const row& r : rows) {
        CAPTURE(r.in);
        const tensor t = random_input(r.in, {4, 6}, 500);
        for (bool is_prod : {false, true})
            for (int64_t axis : {0, 1}) {
                const tensor c = is_prod ? cumprod(t, axis) : cumsum(t, axis);
                CHECK(c.dtype() == r.out);
                check_values(c, cum_reference(t, axis, is_prod), r.tol,
                             std::string(name(r.in)) + (is_prod ? " cumprod" : " cumsum"));
            }
    }
    // int8 values do not wrap at 8 bits; int64 wraps.
    CHECK(cumsum(tensor::from_vector(std::vector<int8_t>{100, 100, 100})).to_vector<int64_t>() ==
          std::vector<int64_t>{100, 200, 300});
    const int64_t big = std::numeric_limits<int64_t>::max();
    CHECK(cumsum(tensor::from_vector(std::vector<int64_t>{big, 1})).to_vector<int64_t>()[1] ==
          std::numeric_limits<int64_t>::min());
}

TEST_CASE("reduce: cumsum/cumprod of large inputs, empty and 0-d tensors") {
    for (const shape_t& shape :
         {shape_t{100000}, shape_t{3000, 100}, shape_t{30, 5000}, shape_t{4, 3000, 5}}) {
        const tensor t = random_input(dtype::float64, shape, 600);
        for (int64_t axis = 0; axis < t.dim(); ++axis)
            check_values(cumsum(t, axis), cum_reference(t, axis, false), 1e-10,
                         "cumsum " + shape_str(shape));
    }
    // float32 running sums accumulate in double.
    const tensor ones = tensor::from_vector(std::vector<float>(3'000'000, 0.1f));
    const double last = cumsum(ones).to_vector<double>().back();
    CHECK(std::abs(last - 3e6 * static_cast<double>(0.1f)) / 3e5 < 1e-6);
    const tensor e = tensor::empty({0, 4}, dtype::int32, MEMRESOURCE_CPU);
    CHECK(cumsum(e, 0).shape() == shape_t{0, 4});
    CHECK(cumprod(e, 1).dtype() == dtype::int64);
    CHECK(cumsum(e).shape() == shape_t{0});
    const tensor s = tensor::scalar_tensor(3.0f);
    CHECK(cumsum(s).shape() == shape_t{1});
    CHECK(cumsum(s).item<float>() == 3.0f);
}

TEST_CASE("reduce: cumsum/cumprod errors leave the input unchanged") {
    const tensor t = random_input(dtype::float32, {2, 3}, 700);
    const auto before = t.to_vector<float>();
    CHECK_THROWS_AS((void)cumsum(t, 2), index_error);
    CHECK_THROWS_AS((void)cumprod(t, -3), index_error);
    CHECK(contains(error_of([&] { (void)cumsum(t, 2); }), "cumsum"));
    CHECK(contains(error_of([&] { (void)cumsum(t, 2); }), "(2, 3)"));
    CHECK_THROWS_AS((void)cumsum(tensor::scalar_tensor(1.0), 0), index_error);
    CHECK_THROWS_AS((void)cumsum(tensor()), value_error);
    CHECK_THROWS_AS((void)cumprod(tensor(), 0), value_error);
    CHECK(t.to_vector<float>() == before);
}
