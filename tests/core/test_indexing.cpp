// Tests for basic indexing (integers, slices, newaxis, ellipsis), its assignment, and errors.
#include <doctest/doctest.h>

#include "test_support.hpp"

#include "isthmus/ops/creation.hpp"
#include "isthmus/ops/indexing.hpp"

#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace isthmus;

namespace {

// The indices a Python slice selects from a dimension of size n (slice.indices + range).
std::vector<int64_t> py_slice(int64_t n, std::optional<int64_t> start, std::optional<int64_t> stop,
                              std::optional<int64_t> step_in) {
    const int64_t step = step_in.value_or(1);
    auto norm = [&](std::optional<int64_t> v, int64_t dflt) {
        if (!v) return dflt;
        int64_t x = *v;
        if (x < 0) {
            x += n;
            if (x < 0) x = step < 0 ? -1 : 0;
        } else if (x >= n) {
            x = step < 0 ? n - 1 : n;
        }
        return x;
    };
    const int64_t b = norm(start, step < 0 ? n - 1 : 0);
    const int64_t e = norm(stop, step < 0 ? -1 : n);
    std::vector<int64_t> out;
    for (int64_t i = b; step > 0 ? i < e : i > e; i += step) out.push_back(i);
    return out;
}

} // namespace

TEST_CASE("indexing: random slices of a 3-d tensor match Python's slice semantics") {
    const tensor a = random_tensor({5, 6, 7}, dtype::float64, 1);
    const std::vector<double> av = values(a);
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> pick(-9, 9), coin(0, 3);
    auto opt = [&](bool nonzero) -> std::optional<int64_t> {
        if (coin(rng) == 0) return std::nullopt;
        int v = pick(rng);
        if (nonzero && v == 0) v = 1;
        return v;
    };
    for (int trial = 0; trial < 200; ++trial) {
        index_slice s[3];
        for (auto& x : s) x = {opt(false), opt(false), opt(true)};
        const tensor r = index(a, {s[0], s[1], s[2]});
        CHECK(r.storage() == a.storage()); // a view
        std::vector<int64_t> ix[3];
        for (int d = 0; d < 3; ++d)
            ix[d] = py_slice(a.shape()[d], s[d].start, s[d].stop, s[d].step);
        REQUIRE(r.shape() == shape_t{static_cast<int64_t>(ix[0].size()),
                                     static_cast<int64_t>(ix[1].size()),
                                     static_cast<int64_t>(ix[2].size())});
        const std::vector<double> rv = values(r);
        size_t k = 0;
        for (int64_t i : ix[0])
            for (int64_t j : ix[1])
                for (int64_t l : ix[2])
                    REQUIRE(rv[k++] == av[static_cast<size_t>((i * 6 + j) * 7 + l)]);
    }
}

TEST_CASE("indexing: integers, newaxis and ellipsis give views with NumPy's shapes") {
    const tensor a = random_tensor({4, 5, 6}, dtype::float32, 2);
    const std::vector<double> av = values(a);
    auto at = [&](int64_t i, int64_t j, int64_t k) {
        return av[static_cast<size_t>((i * 5 + j) * 6 + k)];
    };

    tensor r = index(a, {1, index_slice{}, -1});
    CHECK(r.shape() == shape_t{5});
    CHECK(r.storage() == a.storage());
    for (int64_t j = 0; j < 5; ++j) CHECK(values(r)[static_cast<size_t>(j)] == at(1, j, 5));

    CHECK(index(a, {ellipsis, 2}).shape() == shape_t{4, 5});
    CHECK(index(a, {newaxis, ellipsis, newaxis}).shape() == shape_t{1, 4, 5, 6, 1});
    CHECK(index(a, {1, newaxis, index_slice{1, 3}}).shape() == shape_t{1, 2, 6});
    CHECK(index(a, {ellipsis}).shape() == a.shape());
    CHECK(index(a, {}).shape() == a.shape());
    CHECK(index(a, {2, 3, 4}).dim() == 0);
    CHECK(index(a, {2, 3, 4}).item<double>() == at(2, 3, 4));
    CHECK(index(a, {-4, -5, -6}).item<double>() == at(0, 0, 0));
    // A 0-d integer tensor acts as an integer; unless every item is one, the result is a copy,
    // as in NumPy (Note [NumPy's subscript rules]).
    tensor r0 = index(a, {tensor::scalar_tensor<int32_t>(3)});
    CHECK(r0.shape() == shape_t{5, 6});
    CHECK(r0.storage() != a.storage());
    CHECK(values(r0)[7] == at(3, 1, 1));
    CHECK(index(a, {tensor::scalar_tensor<int32_t>(3), 1, 1}).storage() == a.storage());

    // Non-contiguous input: a transposed view with a negative-step slice on top.
    const tensor t = a.permute({2, 0, 1});
    tensor q = index(t, {index_slice{std::nullopt, std::nullopt, -2}, 1});
    REQUIRE(q.shape() == shape_t{3, 5});
    const std::vector<double> qv = values(q);
    for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 5; ++j)
            CHECK(qv[static_cast<size_t>(i * 5 + j)] == at(1, j, 5 - 2 * i));
}

TEST_CASE("indexing: 0-d and empty tensors") {
    const tensor s = tensor::scalar_tensor(2.5);
    CHECK(index(s, {}).item<double>() == 2.5);
    CHECK(index(s, {ellipsis}).dim() == 0);
    CHECK(index(s, {newaxis}).shape() == shape_t{1});
    CHECK(index(s, {newaxis, newaxis}).shape() == shape_t{1, 1});

    const tensor e = zeros({0, 3});
    CHECK(index(e, {index_slice{}, 1}).shape() == shape_t{0});
    CHECK(index(e, {index_slice{1, 5}}).shape() == shape_t{0, 3});
    CHECK(index(e, {ellipsis, index_slice{std::nullopt, std::nullopt, -1}}).shape() ==
          shape_t{0, 3});
    CHECK_THROWS_AS(index(e, {0}), index_error);
}

TEST_CASE("indexing: basic assignment broadcasts and casts the value") {
    tensor a = zeros({4, 6}, dtype::int32);
    // value (1, 3) broadcast over rows 1..2, every second column
    index_put(a, {index_slice{1, 3}, index_slice{std::nullopt, std::nullopt, 2}},
              tensor::from_vector(std::vector<double>{1.9, -2.9, 3.5}, {1, 3}));
    std::vector<int32_t> expect(24, 0);
    for (int i = 1; i < 3; ++i) {
        expect[static_cast<size_t>(i * 6 + 0)] = 1;
        expect[static_cast<size_t>(i * 6 + 2)] = -2;
        expect[static_cast<size_t>(i * 6 + 4)] = 3;
    }
    CHECK(a.to_vector<int32_t>() == expect);

    // Leading size-1 dimensions of the value beyond the target's rank are dropped (NumPy).
    index_put(a, {0}, tensor::from_vector(std::vector<int32_t>{7, 7, 7, 7, 7, 7}, {1, 1, 6}));
    CHECK(index(a, {0}).to_vector<int32_t>() == std::vector<int32_t>(6, 7));

    // Scalar value, negative step, non-contiguous target (transposed).
    tensor b = zeros({3, 4});
    tensor bt = b.t();
    index_put(bt, {index_slice{std::nullopt, std::nullopt, -3}, 2}, scalar(5.0));
    const std::vector<double> bv = values(b);
    for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 4; ++j)
            CHECK(bv[static_cast<size_t>(i * 4 + j)] ==
                  ((i == 2 && (j == 3 || j == 0)) ? 5.0 : 0.0));

    // 0-d target.
    tensor s = tensor::scalar_tensor<int64_t>(1);
    index_put(s, {}, scalar(9));
    CHECK(s.item<int64_t>() == 9);
    index_put(s, {ellipsis}, tensor::scalar_tensor(4.0));
    CHECK(s.item<int64_t>() == 4);
}

TEST_CASE("indexing: bad subscripts raise index_error and leave the tensor unchanged") {
    tensor a = random_tensor({4, 5}, dtype::float32, 3);
    const std::vector<double> before = values(a);

    CHECK_THROWS_AS(index(a, {0, 0, 0}), index_error);
    CHECK(contains(error_of([&] {
                       index(a, {0, 0, 0});
                   }),
                   "too many indices for tensor: tensor is 2-dimensional, but 3 were indexed"));
    CHECK_THROWS_AS(index(a, {ellipsis, 0, ellipsis}), index_error);
    CHECK(contains(error_of([&] { index(a, {ellipsis, ellipsis}); }), "single ellipsis"));
    CHECK_THROWS_AS(index(a, {4}), index_error);
    CHECK(contains(error_of([&] {
                       index(a, {1, -6});
                   }),
                   "index -6 is out of bounds for axis 1 with size 5"));
    CHECK(contains(error_of([&] {
                       index(a, {newaxis, 0, 9});
                   }),
                   "index 9 is out of bounds for axis 1 with size 5"));
    CHECK_THROWS_AS(index(a, {index_slice{0, 4, 0}}), value_error);
    CHECK(contains(error_of([&] { index(a, {index_slice{0, 4, 0}}); }), "step cannot be zero"));
    CHECK_THROWS_AS(index(tensor(), {0}), value_error);
    CHECK_THROWS_AS(index_item{tensor()}, value_error);

    CHECK_THROWS_AS(index_put(a, {0, 0, 0}, scalar(1.0)), index_error);
    CHECK_THROWS_AS(index_put(a, {7}, scalar(1.0)), index_error);
    CHECK_THROWS_AS(index_put(a, {0}, zeros({4})), value_error);
    CHECK(contains(error_of([&] {
                       index_put(a, {0}, zeros({2, 5}));
                   }),
                   "could not broadcast the value of shape (2, 5) into the indexed shape (5,)"));
    CHECK_THROWS_AS(index_put(a, {0}, tensor()), value_error);
    CHECK(values(a) == before);
}
