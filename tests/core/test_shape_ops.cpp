// Tests for shape ops: concat, stack, split, array_split, flip, tile, repeat and pad.
#include <doctest/doctest.h>

#include "test_support.hpp"

#include "isthmus/ops/creation.hpp"
#include "isthmus/ops/indexing.hpp"
#include "isthmus/ops/shape.hpp"

#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace isthmus;

namespace {

// C-order flat position of `idx` in `shape`.
int64_t flat(const shape_t& shape, const shape_t& idx) {
    int64_t f = 0;
    for (size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + idx[d];
    return f;
}

// Calls f(idx) for every index of `shape` in C order.
void for_all(const shape_t& shape, const std::function<void(const shape_t&)>& f) {
    if (numel_of(shape) == 0) return;
    shape_t idx(shape.size(), 0);
    while (true) {
        f(idx);
        size_t d = shape.size();
        while (d-- > 0) {
            if (++idx[d] < shape[d]) break;
            idx[d] = 0;
        }
        if (d == static_cast<size_t>(-1)) return;
    }
}

} // namespace

TEST_CASE("shape ops: concat along each axis with promotion and strided inputs") {
    const tensor a = random_tensor({2, 3, 4}, dtype::int32, 1);
    const tensor b_base = random_tensor({4, 5, 2}, dtype::float32, 2);
    for (int64_t axis : {0, 1, 2, -1}) {
        CAPTURE(axis);
        const int64_t ax = axis < 0 ? axis + 3 : axis;
        // b: the same shape as a except along `axis`; built from a permuted (strided) view.
        shape_t bs = a.shape();
        bs[static_cast<size_t>(ax)] = 2;
        const tensor b =
            index(b_base.permute({2, 0, 1}),
                  {index_slice{0, bs[0]}, index_slice{0, bs[1]}, index_slice{0, bs[2]}});
        REQUIRE(b.shape() == bs);
        const tensor e = zeros(
            [&] {
                shape_t s = a.shape();
                s[static_cast<size_t>(ax)] = 0;
                return s;
            }(),
            dtype::uint8);
        const tensor r = concat({a, e, b}, axis);
        CHECK(r.dtype() == dtype::float64); // int32 with float32 promotes to float64 (NumPy)
        shape_t rs = a.shape();
        rs[static_cast<size_t>(ax)] += 2;
        REQUIRE(r.shape() == rs);
        const std::vector<double> rv = values(r), av = values(a), bv = values(b);
        for_all(rs, [&](const shape_t& idx) {
            const int64_t na = a.shape()[static_cast<size_t>(ax)];
            shape_t j = idx;
            double expect;
            if (idx[static_cast<size_t>(ax)] < na) {
                expect = av[static_cast<size_t>(flat(a.shape(), j))];
            } else {
                j[static_cast<size_t>(ax)] -= na;
                expect = bv[static_cast<size_t>(flat(bs, j))];
            }
            CHECK(rv[static_cast<size_t>(flat(rs, idx))] == expect);
        });
    }
    // One input: a copy of the same dtype.
    const tensor c = concat({a});
    CHECK(c.storage() != a.storage());
    CHECK(values(c) == values(a));
    CHECK(c.dtype() == dtype::int32);
}

TEST_CASE("shape ops: stack adds an axis") {
    const tensor a = random_tensor({2, 3}, dtype::float64, 3);
    const tensor b = random_tensor({3, 2}, dtype::float64, 4).t();
    const std::vector<double> av = values(a), bv = values(b);
    tensor r = stack({a, b});
    CHECK(r.shape() == shape_t{2, 2, 3});
    std::vector<double> expect = av;
    expect.insert(expect.end(), bv.begin(), bv.end());
    CHECK(values(r) == expect);
    r = stack({a, b}, -1);
    CHECK(r.shape() == shape_t{2, 3, 2});
    for (size_t i = 0; i < 6; ++i) {
        CHECK(values(r)[2 * i] == av[i]);
        CHECK(values(r)[2 * i + 1] == bv[i]);
    }
    CHECK(stack({tensor::scalar_tensor(1.0), tensor::scalar_tensor(2.0)}).shape() == shape_t{2});
    CHECK(stack({a, a, a}, 1).shape() == shape_t{2, 3, 3});
}

TEST_CASE("shape ops: concat and stack reject bad inputs") {
    const tensor a = zeros({2, 3});
    CHECK_THROWS_AS(concat({}), value_error);
    CHECK_THROWS_AS(concat({a, zeros({3})}), value_error);
    CHECK(contains(error_of([&] {
                       concat({a, zeros({3})});
                   }),
                   "the tensor at index 0 has 2 dimension(s) and the tensor at index 1 has 1"));
    CHECK_THROWS_AS(concat({a, zeros({2, 4})}, 0), value_error);
    CHECK(contains(error_of([&] {
                       concat({a, zeros({2, 4})}, 0);
                   }),
                   "along dimension 1, the tensor at index 0 has size 3 and the tensor at index "
                   "1 has size 4"));
    CHECK_THROWS_AS(concat({tensor::scalar_tensor(1.0)}), value_error);
    CHECK_THROWS_AS(concat({a, a}, 2), index_error);
    CHECK_THROWS_AS(concat({a, tensor()}), value_error);
    CHECK_THROWS_AS(stack({}), value_error);
    CHECK_THROWS_AS(stack({a, zeros({3, 2})}), value_error);
    CHECK(contains(error_of([&] { stack({a, zeros({3, 2})}); }), "same shape"));
    CHECK_THROWS_AS(stack({a}, 3), index_error);
    CHECK(values(a) == std::vector<double>(6, 0.0)); // inputs unchanged
}

TEST_CASE("shape ops: split, array_split and split at indices give views") {
    const tensor a = random_tensor({6, 4}, dtype::int64, 5);
    const std::vector<double> av = values(a);
    std::vector<tensor> parts = split(a, 3);
    REQUIRE(parts.size() == 3);
    for (size_t i = 0; i < 3; ++i) {
        CHECK(parts[i].shape() == shape_t{2, 4});
        CHECK(parts[i].storage() == a.storage());
        CHECK(values(parts[i]) == std::vector<double>(av.begin() + 8 * static_cast<long>(i),
                                                      av.begin() + 8 * static_cast<long>(i + 1)));
    }
    parts = split(a, 2, -1);
    CHECK(parts[1].shape() == shape_t{6, 2});
    CHECK(values(parts[1])[0] == av[2]);

    parts = array_split(a, 4);
    REQUIRE(parts.size() == 4);
    CHECK(parts[0].shape()[0] == 2);
    CHECK(parts[1].shape()[0] == 2);
    CHECK(parts[2].shape()[0] == 1);
    CHECK(parts[3].shape()[0] == 1);
    CHECK(array_split(zeros({2}), 3)[2].shape() == shape_t{0});

    parts = split(a, std::vector<int64_t>{1, -2, 10}); // [0:1], [1:4], [4:10], [10:]
    REQUIRE(parts.size() == 4);
    CHECK(parts[0].shape()[0] == 1);
    CHECK(parts[1].shape()[0] == 3);
    CHECK(parts[2].shape()[0] == 2);
    CHECK(parts[3].shape()[0] == 0);
    parts = split(a, std::vector<int64_t>{3, 1}); // decreasing: the middle part is empty
    CHECK(parts[1].shape()[0] == 0);
    CHECK(parts[2].shape()[0] == 5);
    CHECK(split(a, std::vector<int64_t>{}).size() == 1);

    CHECK_THROWS_AS(split(a, 4), value_error);
    CHECK(contains(error_of([&] { split(a, 4); }), "does not divide into 4 equal sections"));
    CHECK_THROWS_AS(split(a, 0), value_error);
    CHECK_THROWS_AS(array_split(a, -1), value_error);
    CHECK_THROWS_AS(split(a, 2, 2), index_error);
    CHECK_THROWS_AS(split(tensor::scalar_tensor(1.0), 1), index_error);
    CHECK(values(a) == av);
}

TEST_CASE("shape ops: flip is a view with negative strides") {
    const tensor a = random_tensor({3, 4, 5}, dtype::float32, 6);
    const std::vector<double> av = values(a);
    const shape_t s = a.shape();
    for (const std::vector<int64_t>& axes :
         std::vector<std::vector<int64_t>>{{0}, {1}, {-1}, {0, 2}, {2, 1, 0}, {}}) {
        const tensor r = flip(a, axes);
        CHECK(r.storage() == a.storage());
        std::vector<bool> flipped(3, false);
        for (int64_t ax : axes) flipped[static_cast<size_t>(ax < 0 ? ax + 3 : ax)] = true;
        const std::vector<double> rv = values(r);
        for_all(s, [&](const shape_t& idx) {
            shape_t j = idx;
            for (size_t d = 0; d < 3; ++d)
                if (flipped[d]) j[d] = s[d] - 1 - idx[d];
            CHECK(rv[static_cast<size_t>(flat(s, idx))] == av[static_cast<size_t>(flat(s, j))]);
        });
    }
    CHECK(values(flip(flip(a))) == av);
    std::vector<double> rev(av.rbegin(), av.rend());
    CHECK(values(flip(a)) == rev);
    CHECK(flip(zeros({0, 2}), {0}).shape() == shape_t{0, 2});
    CHECK(flip(tensor::scalar_tensor(2.0)).item<double>() == 2.0);
    CHECK_THROWS_AS(flip(a, {0, -3}), value_error);
    CHECK(contains(error_of([&] { flip(a, {0, -3}); }), "repeated axis"));
    CHECK_THROWS_AS(flip(a, {3}), index_error);
}

TEST_CASE("shape ops: tile matches NumPy") {
    const tensor a = random_tensor({2, 3}, dtype::int16, 7);
    const std::vector<double> av = values(a);
    struct row {
        shape_t reps, shape;
    };
    for (const row& c : std::vector<row>{{{2}, {2, 6}},
                                         {{2, 1}, {4, 3}},
                                         {{3, 2, 2}, {3, 4, 6}},
                                         {{1, 1}, {2, 3}},
                                         {{0, 2}, {0, 6}},
                                         {{}, {2, 3}}}) {
        CAPTURE(shape_str(c.reps));
        const tensor r = tile(a.t().t(), c.reps);
        REQUIRE(r.shape() == c.shape);
        const std::vector<double> rv = values(r);
        const size_t n = c.shape.size();
        for_all(c.shape, [&](const shape_t& idx) {
            const int64_t i = idx[n - 2] % 2, j = idx[n - 1] % 3;
            CHECK(rv[static_cast<size_t>(flat(c.shape, idx))] ==
                  av[static_cast<size_t>(i * 3 + j)]);
        });
    }
    // Non-contiguous input and a 0-d input.
    const tensor t = a.t(); // (3, 2)
    const std::vector<double> tv = values(t);
    const tensor r = tile(t, {1, 2});
    CHECK(values(r) == std::vector<double>{tv[0], tv[1], tv[0], tv[1], tv[2], tv[3], tv[2], tv[3],
                                           tv[4], tv[5], tv[4], tv[5]});
    CHECK(tile(tensor::scalar_tensor(4.0), {3}).shape() == shape_t{3});
    CHECK_THROWS_AS(tile(a, {2, -1}), value_error);
    CHECK(contains(error_of([&] { tile(a, {2, -1}); }), "non-negative"));
    CHECK(values(a) == av);
}

TEST_CASE("shape ops: repeat with one count and with per-element counts") {
    const tensor a = tensor::from_vector(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, {2, 3});
    CHECK(repeat(a, 2).to_vector<int32_t>() ==
          std::vector<int32_t>{1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6});
    tensor r = repeat(a, 2, 0);
    CHECK(r.shape() == shape_t{4, 3});
    CHECK(r.to_vector<int32_t>() == std::vector<int32_t>{1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6});
    r = repeat(a.t(), 2, -1); // non-contiguous input (3, 2)
    CHECK(r.shape() == shape_t{3, 4});
    CHECK(r.to_vector<int32_t>() == std::vector<int32_t>{1, 1, 4, 4, 2, 2, 5, 5, 3, 3, 6, 6});
    CHECK(repeat(a, 0, 1).shape() == shape_t{2, 0});

    r = repeat(a, tensor::from_vector(std::vector<int64_t>{0, 2, 1}), 1);
    CHECK(r.shape() == shape_t{2, 3});
    CHECK(r.to_vector<int32_t>() == std::vector<int32_t>{2, 2, 3, 5, 5, 6});
    r = repeat(a, tensor::from_vector(std::vector<uint8_t>{3}), 0); // one count for all
    CHECK(r.shape() == shape_t{6, 3});
    CHECK(repeat(tensor::scalar_tensor(7), 3).to_vector<int32_t>() ==
          std::vector<int32_t>{7, 7, 7});

    CHECK_THROWS_AS(repeat(a, -1), value_error);
    CHECK_THROWS_AS(repeat(a, tensor::from_vector(std::vector<int64_t>{1, 2}), 1), value_error);
    CHECK(contains(error_of([&] {
                       repeat(a, tensor::from_vector(std::vector<int64_t>{1, 2}), 1);
                   }),
                   "2 counts given for an axis of size 3"));
    CHECK_THROWS_AS(repeat(a, tensor::from_vector(std::vector<int64_t>{1, -2, 1}), 1), value_error);
    CHECK_THROWS_AS(repeat(a, tensor::from_vector(std::vector<double>{1.0}), 1), type_error);
    CHECK_THROWS_AS(repeat(a, 2, 2), index_error);
    CHECK(a.to_vector<int32_t>() == std::vector<int32_t>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("shape ops: pad in every mode matches NumPy") {
    const tensor v = tensor::from_vector(std::vector<int32_t>{1, 2, 3});
    // np.pad([1, 2, 3], (7, 8), mode)
    CHECK(pad(v, {{7, 8}}, pad_mode::reflect).to_vector<int32_t>() ==
          std::vector<int32_t>{2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3});
    CHECK(pad(v, {{7, 8}}, pad_mode::symmetric).to_vector<int32_t>() ==
          std::vector<int32_t>{1, 1, 2, 3, 3, 2, 1, 1, 2, 3, 3, 2, 1, 1, 2, 3, 3, 2});
    CHECK(pad(v, {{7, 8}}, pad_mode::wrap).to_vector<int32_t>() ==
          std::vector<int32_t>{3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2});
    CHECK(pad(v, {{2, 1}}, pad_mode::edge).to_vector<int32_t>() ==
          std::vector<int32_t>{1, 1, 1, 2, 3, 3});
    CHECK(pad(v, {{1, 2}}, pad_mode::constant, scalar(-7.9)).to_vector<int32_t>() ==
          std::vector<int32_t>{-7, 1, 2, 3, -7, -7});
    // np.pad([[1, 2], [3, 4]], ((1, 2), (3, 1)), 'reflect')
    const tensor m = tensor::from_vector(std::vector<int32_t>{1, 2, 3, 4}, {2, 2});
    CHECK(pad(m, {{1, 2}, {3, 1}}, pad_mode::reflect).to_vector<int32_t>() ==
          std::vector<int32_t>{4, 3, 4, 3, 4, 3, 2, 1, 2, 1, 2, 1, 4, 3, 4,
                               3, 4, 3, 2, 1, 2, 1, 2, 1, 4, 3, 4, 3, 4, 3});
    CHECK(parse_pad_mode("symmetric") == pad_mode::symmetric);
}

TEST_CASE("shape ops: pad of a strided 3-d tensor against a per-element reference") {
    const tensor base = random_tensor({5, 4, 3}, dtype::float64, 8);
    const tensor t = base.permute({2, 0, 1}); // (3, 5, 4)
    const std::vector<double> tv = values(t);
    const shape_t s = t.shape();
    const std::vector<std::pair<int64_t, int64_t>> pw{{2, 0}, {1, 3}, {4, 4}};
    auto src = [](pad_mode m, int64_t x, int64_t n) -> int64_t {
        // Reflection / periodic index maps written independently of the library: step by step.
        if (m == pad_mode::edge) return x < 0 ? 0 : (x >= n ? n - 1 : x);
        if (m == pad_mode::wrap) {
            while (x < 0) x += n;
            return x % n;
        }
        while (x < 0 || x >= n) {
            if (m == pad_mode::reflect)
                x = x < 0 ? -x : 2 * (n - 1) - x;
            else
                x = x < 0 ? -x - 1 : 2 * n - 1 - x;
        }
        return x;
    };
    for (pad_mode mode : {pad_mode::constant, pad_mode::edge, pad_mode::reflect,
                          pad_mode::symmetric, pad_mode::wrap}) {
        CAPTURE(static_cast<int>(mode));
        const tensor r = pad(t, pw, mode, scalar(9.5));
        const shape_t rs{3 + 2, 5 + 4, 4 + 8};
        REQUIRE(r.shape() == rs);
        const std::vector<double> rv = values(r);
        for_all(rs, [&](const shape_t& idx) {
            shape_t j(3);
            bool border = false;
            for (size_t d = 0; d < 3; ++d) {
                const int64_t x = idx[d] - pw[d].first;
                border = border || x < 0 || x >= s[d];
                j[d] = src(mode, x, s[d]);
            }
            const double expect =
                mode == pad_mode::constant && border ? 9.5 : tv[static_cast<size_t>(flat(s, j))];
            CHECK(rv[static_cast<size_t>(flat(rs, idx))] == expect);
        });
    }
    // One pair for every axis; 0-d input; zero widths give a copy.
    CHECK(pad(t, {{1, 1}}).shape() == shape_t{5, 7, 6});
    CHECK(pad(tensor::scalar_tensor(3.0), {}).item<double>() == 3.0);
    const tensor same = pad(t, {{0, 0}}, pad_mode::reflect);
    CHECK(same.storage() != t.storage());
    CHECK(values(same) == tv);
    // An empty axis pads only with constants.
    CHECK(pad(zeros({0, 2}), {{1, 1}}, pad_mode::constant, scalar(1)).shape() == shape_t{2, 4});
}

TEST_CASE("shape ops: pad rejects bad widths and modes") {
    const tensor a = zeros({2, 3});
    CHECK_THROWS_AS(pad(a, {{1, 1}, {1, 1}, {1, 1}}), value_error);
    CHECK(contains(error_of([&] {
                       pad(a, {{1, 1}, {1, 1}, {1, 1}});
                   }),
                   "one (before, after) pair per axis (2) or a single pair, got 3"));
    CHECK_THROWS_AS(pad(a, {{1, -1}}), value_error);
    CHECK(contains(error_of([&] { pad(a, {{0, 0}, {-2, 0}}); }), "non-negative"));
    CHECK_THROWS_AS(pad(zeros({0, 2}), {{1, 0}, {0, 0}}, pad_mode::reflect), value_error);
    CHECK(contains(error_of([&] {
                       pad(zeros({0, 2}), {{1, 0}}, pad_mode::wrap);
                   }),
                   "cannot extend the empty axis 0 with mode 'wrap'"));
    CHECK_THROWS_AS(parse_pad_mode("mirror"), value_error);
    CHECK(contains(error_of([] { parse_pad_mode("mirror"); }), "unknown mode 'mirror'"));
    CHECK_THROWS_AS(pad(tensor(), {}), value_error);
    CHECK(values(a) == std::vector<double>(6, 0.0));
}
