// Tests for sort and argsort: every dtype against a reference order, NaN/-0/inf, axes, layouts.
#include <doctest/doctest.h>

#include "fake_resource.hpp"
#include "test_support.hpp"

#include "isthmus/ops/shape.hpp"
#include "isthmus/ops/sorting.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

using namespace isthmus;

namespace {

using cd = std::complex<double>;

// The reference order, written differently from the kernel's comparator: a key tuple whose
// first entry is NumPy's class of the element (0 no NaN part, 1 NaN imaginary part, 2 NaN real
// part, 3 both), then the parts (NaN parts as 0; -0.0 == 0.0).
std::tuple<int, double, double> key(cd v) {
    const bool nr = std::isnan(v.real()), ni = std::isnan(v.imag());
    const int cls = nr ? (ni ? 3 : 2) : (ni ? 1 : 0);
    return {cls, nr ? 0.0 : v.real(), ni ? 0.0 : v.imag()};
}

// Reference argsort of each row along `axis` (stable; descending reverses unequal keys).
std::vector<int64_t> argsort_reference(const tensor& t, int64_t axis, bool descending) {
    const auto x = t.to_vector<cd>();
    const shape_t& s = t.shape();
    int64_t pre = 1, post = 1;
    const int64_t len = s[static_cast<size_t>(axis)];
    for (int64_t d = 0; d < axis; ++d) pre *= s[static_cast<size_t>(d)];
    for (int64_t d = axis + 1; d < t.dim(); ++d) post *= s[static_cast<size_t>(d)];
    std::vector<int64_t> out(x.size());
    for (int64_t p = 0; p < pre; ++p)
        for (int64_t q = 0; q < post; ++q) {
            std::vector<int64_t> idx(static_cast<size_t>(len));
            for (int64_t i = 0; i < len; ++i) idx[static_cast<size_t>(i)] = i;
            auto at = [&](int64_t i) { return x[static_cast<size_t>((p * len + i) * post + q)]; };
            std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
                return descending ? key(at(b)) < key(at(a)) : key(at(a)) < key(at(b));
            });
            for (int64_t i = 0; i < len; ++i)
                out[static_cast<size_t>((p * len + i) * post + q)] = idx[static_cast<size_t>(i)];
        }
    return out;
}

// x's elements as complex doubles, with their bits where it matters (the sign of zero).
bool same(cd a, cd b) {
    auto eq = [](double u, double v) {
        return (std::isnan(u) && std::isnan(v)) || (u == v && std::signbit(u) == std::signbit(v));
    };
    return eq(a.real(), b.real()) && eq(a.imag(), b.imag());
}

// A random tensor with ties, NaN, +-0 and +-inf (what the dtype holds of them).
tensor awkward(dtype dt, const shape_t& shape, uint32_t seed) {
    std::mt19937 rng(seed);
    const double pool[] = {nan_v, -0.0, 0.0, inf_v, -inf_v, 1.0, -1.0, 2.5, 2.5, 7.0, -3.0};
    std::uniform_int_distribution<int> pick(0, 10);
    std::vector<cd> v(static_cast<size_t>(numel_of(shape)));
    for (auto& x : v) {
        double re = pool[pick(rng)], im = pool[pick(rng)];
        if (!is_inexact(dt)) {
            re = std::isfinite(re) ? std::trunc(re) : 3.0;
            if (is_unsigned_int(dt) || is_bool(dt)) re = std::fabs(re);
        }
        x = cd(re, is_complex(dt) ? im : 0.0);
    }
    return tensor::from_vector(v, shape).to(dt);
}

void check_sorted(const tensor& t, int64_t axis, bool descending) {
    CAPTURE(t.dtype());
    CAPTURE(shape_str(t.shape()));
    CAPTURE(axis);
    CAPTURE(descending);
    const int64_t a = axis < 0 ? axis + t.dim() : axis;
    const tensor i = argsort(t, axis, descending);
    const tensor v = sort(t, axis, descending);
    CHECK(i.dtype() == dtype::int64);
    CHECK(v.dtype() == t.dtype());
    CHECK(i.shape() == t.shape());
    CHECK(v.shape() == t.shape());
    CHECK(v.is_contiguous());
    const auto ref = argsort_reference(t, a, descending);
    CHECK(i.to_vector<int64_t>() == ref);
    // the values are the elements at the reference positions, bit for bit (-0.0 kept)
    const auto x = t.to_vector<cd>();
    const auto got = v.to_vector<cd>();
    const shape_t& s = t.shape();
    int64_t post = 1;
    for (int64_t d = a + 1; d < t.dim(); ++d) post *= s[static_cast<size_t>(d)];
    const int64_t len = s[static_cast<size_t>(a)];
    bool all_same = true;
    for (size_t k = 0; k < got.size(); ++k) {
        const int64_t q = static_cast<int64_t>(k) % post;
        const int64_t p = static_cast<int64_t>(k) / (post * len);
        const auto from = static_cast<size_t>((p * len + ref[k]) * post + q);
        all_same = all_same && same(got[k], x[from]);
    }
    CHECK(all_same);
}

} // namespace

TEST_CASE("sort and argsort: every dtype, both orders, every axis, both algorithms, against the "
          "reference") {
    uint32_t seed = 1;
    for (dtype dt : all_dtypes)
        for (bool descending : {false, true}) {
            check_sorted(awkward(dt, {23}, seed++), 0, descending);  // the comparison sort
            check_sorted(awkward(dt, {300}, seed++), 0, descending); // the radix sort
            check_sorted(awkward(dt, {70, 3}, seed++), 0, descending);
            const tensor t = awkward(dt, {4, 9, 3}, seed++);
            for (int64_t axis : {0, 1, 2, -1, -3}) check_sorted(t, axis, descending);
        }
}

TEST_CASE("sort: NaNs last ascending and first descending, -0.0 and 0.0 equal, stable ties") {
    const tensor t = tensor::from_vector(std::vector<double>{3, nan_v, 1, -0.0, 0.0, 2, nan_v, 1});
    CHECK(argsort(t).to_vector<int64_t>() == std::vector<int64_t>{3, 4, 2, 7, 5, 0, 1, 6});
    CHECK(argsort(t, -1, true).to_vector<int64_t>() ==
          std::vector<int64_t>{1, 6, 0, 5, 2, 7, 3, 4});
    const auto v = sort(t).to_vector<double>();
    CHECK(std::signbit(v[0]));
    CHECK_FALSE(std::signbit(v[1]));
    CHECK(std::isnan(v[6]));
    CHECK(std::isnan(v[7]));
    // NumPy's complex classes: R + Rj, R + nanj, nan + Rj, nan + nanj
    const tensor c = tensor::from_vector(
        std::vector<cd>{cd(nan_v, nan_v), cd(nan_v, 1), cd(1, nan_v), cd(2, 0), cd(1, 5)});
    CHECK(argsort(c).to_vector<int64_t>() == std::vector<int64_t>{4, 3, 2, 1, 0});
}

TEST_CASE("sort: strided, transposed and broadcast inputs, long rows and many rows") {
    const tensor base = awkward(dtype::float32, {6, 40}, 99);
    check_sorted(base.slice(1, 1, 40, 3), 1, false);                         // a strided view
    check_sorted(base.transpose(0, 1), 1, true);                             // a transposed view
    check_sorted(base.slice(0, 0, 6, 2).transpose(0, 1), 0, false);          // both
    check_sorted(awkward(dtype::int32, {1, 5}, 7).expand({4, 5}), 0, false); // broadcast
    check_sorted(random_tensor({70000}, dtype::float64, 5), 0, false);       // one long row
    check_sorted(random_tensor({3000, 17}, dtype::int16, 6), 1, true);       // many rows, threads
}

TEST_CASE("sort: empty dimensions, 0-d tensors, and the error cases") {
    for (int64_t axis : {0, 1}) {
        const tensor e = tensor::empty({0, 3}, dtype::float32, MEMRESOURCE_CPU);
        CHECK(sort(e, axis).shape() == shape_t{0, 3});
        CHECK(argsort(e, axis).dtype() == dtype::int64);
        CHECK(argsort(tensor::empty({2, 0}, dtype::int8, MEMRESOURCE_CPU), axis).shape() ==
              shape_t{2, 0});
    }
    const tensor z = tensor::from_vector(std::vector<double>{4.5}).reshape({});
    CHECK(sort(z).dim() == 0);
    CHECK(sort(z).item<double>() == 4.5);
    CHECK(argsort(z).dim() == 0);
    CHECK(argsort(z).item<int64_t>() == 0);
    const tensor t = tensor::from_vector(std::vector<double>{2, 1, 3}).reshape({1, 3});
    CHECK_ERROR((void)sort(t, 2), index_error, "sort", "axis 2", "rank 2");
    CHECK_ERROR((void)argsort(t, -3), index_error, "argsort", "axis -3");
    CHECK_ERROR((void)sort(tensor()), value_error, "undefined");
    CHECK(values(t) == std::vector<double>{2, 1, 3}); // the input untouched
}

TEST_CASE("searchsorted: both sides against std::lower_bound/upper_bound, NaN last, errors") {
    const std::vector<double> a{-inf_v, -1, 0, 0, 2.5, 2.5, 7, inf_v, nan_v, nan_v};
    const std::vector<double> v{-inf_v, -3, -0.0, 0, 1, 2.5, 8, inf_v, nan_v};
    const tensor at = tensor::from_vector(a), vt = tensor::from_vector(v).reshape({3, 3});
    // the reference: NaNs are past every number, so count them apart
    auto count = [&](double x, bool right) {
        int64_t n = 0;
        for (double e : a) {
            const bool e_nan = std::isnan(e), x_nan = std::isnan(x);
            const bool e_before = x_nan ? !e_nan : (!e_nan && e < x);
            const bool e_equal = x_nan ? e_nan : (!e_nan && e == x);
            n += e_before || (right && e_equal);
        }
        return n;
    };
    for (bool right : {false, true}) {
        const tensor r = searchsorted(at, vt, right);
        CHECK(r.shape() == shape_t{3, 3});
        CHECK(r.dtype() == dtype::int64);
        std::vector<int64_t> want;
        for (double x : v) want.push_back(count(x, right));
        CHECK(r.to_vector<int64_t>() == want);
    }
    // promotion: int32 sorted, float values
    const tensor ints = tensor::from_vector(std::vector<int32_t>{1, 3, 5});
    CHECK(searchsorted(ints, tensor::from_vector(std::vector<double>{2.5, 5.0}))
              .to_vector<int64_t>() == std::vector<int64_t>{1, 2});
    CHECK(searchsorted(tensor::empty({0}, dtype::float32, MEMRESOURCE_CPU), vt)
              .to_vector<int64_t>() == std::vector<int64_t>(9, 0));
    CHECK_ERROR((void)searchsorted(vt, at), value_error, "one-dimensional", "(3, 3)");
    CHECK_ERROR((void)searchsorted(tensor(), at), value_error, "undefined");
}
