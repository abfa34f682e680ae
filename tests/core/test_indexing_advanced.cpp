// Tests for advanced indexing and assignment (index arrays, masks), nonzero and take.
#include <doctest/doctest.h>

#include "test_support.hpp"

#include "isthmus/ops/creation.hpp"
#include "isthmus/ops/indexing.hpp"

#include <functional>
#include <omp.h>
#include <random>
#include <string>
#include <vector>

using namespace isthmus;

namespace {

// Random indices in [-n, n) (negative ones count from the end) as dtype `dt`.
tensor random_indices(const shape_t& shape, int64_t n, dtype dt, unsigned seed) {
    std::mt19937 rng(seed);
    const bool is_signed = is_signed_int(dt);
    std::uniform_int_distribution<int64_t> dist(is_signed ? -n : 0, n - 1);
    std::vector<int64_t> v(static_cast<size_t>(numel_of(shape)));
    for (auto& x : v) x = dist(rng);
    return tensor::from_vector(v, shape).to(dt);
}

tensor random_mask(const shape_t& shape, double p, unsigned seed) {
    std::mt19937 rng(seed);
    std::bernoulli_distribution dist(p);
    std::vector<bool> v(static_cast<size_t>(numel_of(shape)));
    for (size_t i = 0; i < v.size(); ++i) v[i] = dist(rng);
    return tensor::from_vector(v, shape);
}

std::vector<int64_t> int_values(const tensor& t) {
    return t.to(dtype::int64).to_vector<int64_t>();
}

int64_t wrap(int64_t i, int64_t n) {
    return i < 0 ? i + n : i;
}

} // namespace

TEST_CASE("indexing: integer arrays, separated and adjacent, with broadcasting") {
    const tensor a = random_tensor({4, 5, 6}, dtype::float64, 11);
    const std::vector<double> av = values(a);
    auto at = [&](int64_t i, int64_t j, int64_t k) {
        return av[static_cast<size_t>((wrap(i, 4) * 5 + wrap(j, 5)) * 6 + wrap(k, 6))];
    };
    for (dtype idt : {dtype::int64, dtype::int32, dtype::int8, dtype::uint8, dtype::uint64}) {
        CAPTURE(idt);
        const tensor i1 = random_indices({2, 3}, 4, idt, 1);
        const tensor i2 = random_indices({3}, 6, idt, 2);
        const std::vector<int64_t> v1 = int_values(i1), v2 = int_values(i2);

        // Separated by a slice: the broadcast index shape (2, 3) goes first.
        tensor r = index(a, {i1, index_slice{}, i2});
        REQUIRE(r.shape() == shape_t{2, 3, 5});
        CHECK(r.storage() != a.storage());
        std::vector<double> rv = values(r);
        for (int64_t p = 0; p < 2; ++p)
            for (int64_t q = 0; q < 3; ++q)
                for (int64_t k = 0; k < 5; ++k)
                    CHECK(rv[static_cast<size_t>((p * 3 + q) * 5 + k)] ==
                          at(v1[static_cast<size_t>(p * 3 + q)], k, v2[static_cast<size_t>(q)]));

        // Adjacent: the index shape replaces the indexed dimensions in place.
        const tensor j1 = random_indices({2, 3}, 5, idt, 3);
        const std::vector<int64_t> w1 = int_values(j1);
        r = index(a, {index_slice{}, j1, i2});
        REQUIRE(r.shape() == shape_t{4, 2, 3});
        rv = values(r);
        for (int64_t k = 0; k < 4; ++k)
            for (int64_t p = 0; p < 2; ++p)
                for (int64_t q = 0; q < 3; ++q)
                    CHECK(rv[static_cast<size_t>((k * 2 + p) * 3 + q)] ==
                          at(k, w1[static_cast<size_t>(p * 3 + q)], v2[static_cast<size_t>(q)]));
    }
}

TEST_CASE("indexing: an integer beside an array is a 0-d array (NumPy's placement rule)") {
    const tensor a = random_tensor({4, 5, 6}, dtype::float32, 12);
    const std::vector<double> av = values(a);
    auto at = [&](int64_t i, int64_t j, int64_t k) {
        return av[static_cast<size_t>((i * 5 + j) * 6 + k)];
    };
    const tensor idx = tensor::from_vector(std::vector<int64_t>{5, -1, 0});
    tensor r = index(a, {1, index_slice{}, idx}); // separated: (3, 5)
    REQUIRE(r.shape() == shape_t{3, 5});
    std::vector<double> rv = values(r);
    for (int64_t q = 0; q < 3; ++q)
        for (int64_t j = 0; j < 5; ++j)
            CHECK(rv[static_cast<size_t>(q * 5 + j)] == at(1, j, q == 0 ? 5 : q == 1 ? 5 : 0));
    r = index(a, {index_slice{}, -2, idx}); // adjacent: (4, 3)
    REQUIRE(r.shape() == shape_t{4, 3});
    rv = values(r);
    for (int64_t i = 0; i < 4; ++i) CHECK(rv[static_cast<size_t>(i * 3 + 2)] == at(i, 3, 0));
    // newaxis and ellipsis mixed in.
    const tensor idx0 = tensor::from_vector(std::vector<int16_t>{3, -1, 0});
    CHECK(index(a, {newaxis, idx0, ellipsis}).shape() == shape_t{1, 3, 5, 6});
    CHECK(index(a, {ellipsis, idx}).shape() == shape_t{4, 5, 3});
}

TEST_CASE("indexing: bool masks select like their nonzero coordinates") {
    const tensor a = random_tensor({4, 5, 6}, dtype::int32, 13);
    const std::vector<int64_t> av = int_values(a);
    // Full mask: a 1-d result in C order.
    const tensor m3 = random_mask({4, 5, 6}, 0.3, 1);
    const std::vector<bool> mv = m3.to_vector<bool>();
    std::vector<int64_t> expect;
    for (size_t i = 0; i < mv.size(); ++i)
        if (mv[i]) expect.push_back(av[i]);
    tensor r = index(a, {m3});
    CHECK(r.shape() == shape_t{static_cast<int64_t>(expect.size())});
    CHECK(int_values(r) == expect);

    // Mask over the middle dimension: (4, count, 6).
    const tensor m1 = tensor::from_vector(std::vector<bool>{true, false, true, true, false});
    r = index(a, {index_slice{}, m1});
    REQUIRE(r.shape() == shape_t{4, 3, 6});
    const std::vector<int64_t> rv = int_values(r);
    const int64_t cols[3] = {0, 2, 3};
    for (int64_t i = 0; i < 4; ++i)
        for (int64_t q = 0; q < 3; ++q)
            for (int64_t k = 0; k < 6; ++k)
                CHECK(rv[static_cast<size_t>((i * 3 + q) * 6 + k)] ==
                      av[static_cast<size_t>((i * 5 + cols[q]) * 6 + k)]);

    // 2-d mask over the leading dimensions, then a mask beside an integer array.
    const tensor m2 = random_mask({4, 5}, 0.5, 2);
    const int64_t count = static_cast<int64_t>(int_values(nonzero(m2)[0]).size());
    CHECK(index(a, {m2}).shape() == shape_t{count, 6});
    CHECK(index(a, {m2, tensor::from_vector(std::vector<int64_t>{1})}).shape() == shape_t{count});

    // 0-d masks: True adds a size-1 dimension, False a size-0 one (also from a C++ bool).
    CHECK(index(a, {true}).shape() == shape_t{1, 4, 5, 6});
    CHECK(index(a, {false}).shape() == shape_t{0, 4, 5, 6});
    CHECK(index(a, {tensor::scalar_tensor(true), 2}).shape() == shape_t{1, 5, 6});
    CHECK(int_values(index(a, {true, 1, 2, 3})) == std::vector<int64_t>{av[(1 * 5 + 2) * 6 + 3]});
}

TEST_CASE("indexing: gathers from non-contiguous and broadcast sources, all item sizes") {
    for (dtype dt : {dtype::bool_, dtype::int16, dtype::float32, dtype::float64, dtype::complex128,
                     dtype::bfloat16}) {
        CAPTURE(dt);
        const tensor base = random_tensor({6, 7, 8}, dt, 14);
        const tensor t = base.permute({2, 0, 1}).slice(1, 5, -7, -2); // (8, 3, 7), strided
        const tensor tc = t.contiguous();
        const tensor i1 = random_indices({4}, 8, dtype::int64, 5);
        const tensor i2 = random_indices({2, 1}, 7, dtype::int32, 6);
        for (const auto& items : std::vector<std::vector<index_item>>{
                 {i1},
                 {index_slice{}, index_slice{}, i2},
                 {i1, index_slice{std::nullopt, std::nullopt, -1},
                  random_indices({4, 2}, 7, dtype::int64, 10).select(1, 1)},
                 {random_mask({8, 3}, 0.5, 7)}}) {
            const tensor r = index(t, items), rc = index(tc, items);
            CHECK(r.shape() == rc.shape());
            CHECK(values(r) == values(rc));
        }
    }
    // Broadcast (stride-0) source and index arrays.
    const tensor row = random_tensor({1, 6}, dtype::float32, 15);
    const tensor b = row.expand({5, 6});
    const tensor idx = tensor::from_vector(std::vector<int64_t>{4, 0}).expand({3, 2});
    const tensor r = index(b, {idx, -1});
    CHECK(r.shape() == shape_t{3, 2});
    CHECK(values(r) == std::vector<double>(6, values(row)[5]));
}

TEST_CASE("indexing: empty index arrays and empty dimensions") {
    const tensor a = random_tensor({3, 4}, dtype::float32, 16);
    const tensor none = tensor::from_vector(std::vector<int64_t>{}, {0});
    CHECK(index(a, {none}).shape() == shape_t{0, 4});
    CHECK(index(a, {index_slice{}, none}).shape() == shape_t{3, 0});
    CHECK(index(a, {random_mask({3, 4}, 0.0, 1)}).shape() == shape_t{0});
    const tensor e = zeros({0, 4});
    CHECK(index(e, {none}).shape() == shape_t{0, 4});
    CHECK(index(e, {index_slice{}, tensor::from_vector(std::vector<int64_t>{3, 1})}).shape() ==
          shape_t{0, 2});
    CHECK(index(e, {random_mask({0, 4}, 0.5, 2)}).shape() == shape_t{0});
    CHECK_THROWS_AS(index(e, {tensor::from_vector(std::vector<int64_t>{0})}), index_error);
}

TEST_CASE("indexing: large gathers take the multi-threaded paths and agree across thread counts") {
    threads_guard guard;
    const tensor a = random_tensor({400000}, dtype::float64, 17);
    const tensor m = random_tensor({300, 1000}, dtype::float32, 18);
    const tensor w = random_tensor({3, 100000}, dtype::int32, 19);
    const tensor i_many = random_indices({200000}, 400000, dtype::int64, 8);
    const tensor i_rows = random_indices({200}, 300, dtype::int64, 9);
    const tensor i_two = tensor::from_vector(std::vector<int64_t>{2, 0});
    std::vector<std::vector<double>> results[2];
    for (int threads : {1, 2}) {
        omp_set_num_threads(threads);
        auto& out = results[threads - 1];
        out.push_back(values(index(a, {i_many})));
        out.push_back(values(index(m, {i_rows})));
        out.push_back(values(index(w, {i_two})));
        out.push_back(values(index(m, {index_slice{}, i_rows})));
    }
    CHECK(results[0] == results[1]);
    // Spot-check against the reference.
    const std::vector<double> av = values(a), mv = values(m);
    const std::vector<int64_t> iv = int_values(i_many), rv = int_values(i_rows);
    for (size_t k = 0; k < iv.size(); k += 997)
        CHECK(results[1][0][k] == av[static_cast<size_t>(wrap(iv[k], 400000))]);
    for (size_t r = 0; r < rv.size(); r += 13)
        for (size_t c = 0; c < 1000; c += 101)
            CHECK(results[1][1][r * 1000 + c] ==
                  mv[static_cast<size_t>(wrap(rv[r], 300)) * 1000 + c]);
    const std::vector<double> wv = values(w);
    CHECK(std::vector<double>(results[1][2].begin(), results[1][2].begin() + 100000) ==
          std::vector<double>(wv.begin() + 200000, wv.end()));
}

TEST_CASE("indexing: assignment through integer arrays and masks") {
    // Rows through an index array; the value broadcasts over the rest.
    tensor a = zeros({4, 3}, dtype::float64);
    index_put(a, {tensor::from_vector(std::vector<int64_t>{2, -4})},
              tensor::from_vector(std::vector<double>{1, 2, 3}));
    CHECK(values(a) == std::vector<double>{1, 2, 3, 0, 0, 0, 1, 2, 3, 0, 0, 0});
    // Casting value (float -> int) and a scalar value.
    tensor b = zeros({5}, dtype::int16);
    index_put(b, {tensor::from_vector(std::vector<int32_t>{0, 4})},
              tensor::from_vector(std::vector<double>{7.9, -3.2}));
    index_put(b, {tensor::from_vector(std::vector<uint8_t>{2})}, scalar(11));
    CHECK(int_values(b) == std::vector<int64_t>{7, 0, 11, 0, -3});
    // Repeated indices: the last assignment wins.
    tensor c = zeros({3}, dtype::int32);
    index_put(c, {tensor::from_vector(std::vector<int64_t>{1, 1, 1, 0})},
              tensor::from_vector(std::vector<int32_t>{5, 6, 7, 8}));
    CHECK(int_values(c) == std::vector<int64_t>{8, 7, 0});
    // Mask assignment with a vector of values and with a scalar.
    tensor d = random_tensor({3, 4}, dtype::float32, 20);
    const std::vector<double> dv = values(d);
    std::vector<bool> mv(12);
    std::vector<double> expect = dv, vals;
    for (size_t i = 0; i < 12; ++i) {
        mv[i] = dv[i] > 0;
        if (mv[i]) {
            vals.push_back(100.0 + static_cast<double>(i));
            expect[i] = vals.back();
        }
    }
    index_put(d, {tensor::from_vector(mv, {3, 4})}, tensor::from_vector(vals));
    CHECK(values(d) == expect);
    index_put(d, {tensor::from_vector(mv, {3, 4})}, scalar(-1.5));
    for (size_t i = 0; i < 12; ++i)
        if (mv[i]) expect[i] = -1.5;
    CHECK(values(d) == expect);
}

TEST_CASE("indexing: column scatters (rows-inner order) keep the last of repeated indices") {
    tensor a = zeros({3, 5}, dtype::int32);
    index_put(a, {index_slice{}, tensor::from_vector(std::vector<int64_t>{1, 3, -4})},
              tensor::from_vector(std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3}));
    CHECK(int_values(a) == std::vector<int64_t>{0, 3, 0, 2, 0, 0, 6, 0, 5, 0, 0, 9, 0, 8, 0});
    // Large enough for the parallel path; the same with one and two threads.
    threads_guard guard;
    const tensor idx = random_indices({40}, 60, dtype::int64, 30); // many repeats
    const tensor val = random_tensor({5000, 40}, dtype::float32, 31);
    std::vector<double> got[2];
    for (int threads : {1, 2}) {
        omp_set_num_threads(threads);
        tensor b = zeros({5000, 60});
        index_put(b, {index_slice{}, idx}, val);
        got[threads - 1] = values(b);
    }
    CHECK(got[0] == got[1]);
    std::vector<double> expect(5000 * 60, 0.0);
    const std::vector<double> vv = values(val);
    const std::vector<int64_t> iv = int_values(idx);
    for (size_t r = 0; r < 5000; ++r)
        for (size_t q = 0; q < 40; ++q)
            expect[r * 60 + static_cast<size_t>(wrap(iv[q], 60))] = vv[r * 40 + q];
    CHECK(got[1] == expect);
    // Gathering the columns back (rows-inner gather) gives the stored values.
    tensor c = zeros({5000, 60});
    index_put(c, {index_slice{}, idx}, val);
    const tensor back = index(c, {index_slice{}, idx});
    const std::vector<double> bv = values(back);
    for (size_t r = 0; r < 5000; r += 499)
        for (size_t q = 0; q < 40; ++q)
            CHECK(bv[r * 40 + q] == expect[r * 60 + static_cast<size_t>(wrap(iv[q], 60))]);
}

TEST_CASE("indexing: advanced assignment into strided targets, with strided and aliasing values") {
    tensor base = random_tensor({5, 6, 4}, dtype::float32, 21);
    tensor ref = base.clone();
    tensor t = base.permute({1, 2, 0}); // (6, 4, 5), non-contiguous view of base
    const tensor i1 = tensor::from_vector(std::vector<int64_t>{0, 5, -2});
    const tensor i2 = tensor::from_vector(std::vector<int64_t>{1, 3, 3});
    // Value (4, 3) transposed -> (3, 4): its rows are strided.
    const tensor val = random_tensor({4, 3}, dtype::float64, 22).t();
    index_put(t, {i1, index_slice{}, i2}, val);
    // Reference: t[i1[q], k, i2[q]] = val[q, k], i.e. base[i2[q], i1[q], k].
    const std::vector<double> vv = values(val);
    std::vector<double> expect = values(ref);
    const int64_t r1[3] = {0, 5, 4}, r2[3] = {1, 3, 3};
    for (int64_t q = 0; q < 3; ++q)
        for (int64_t k = 0; k < 4; ++k)
            expect[static_cast<size_t>((r2[q] * 6 + r1[q]) * 4 + k)] =
                static_cast<float>(vv[static_cast<size_t>(q * 4 + k)]);
    CHECK(values(base) == expect);

    // A 2-d index block whose value rows cannot be walked with one stride (transposed value).
    tensor x = zeros({10}, dtype::int32);
    const tensor ix = tensor::from_vector(std::vector<int64_t>{0, 1, 2, 7, 8, 9}, {2, 3});
    index_put(x, {ix}, tensor::from_vector(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, {3, 2}).t());
    CHECK(int_values(x) == std::vector<int64_t>{1, 3, 5, 0, 0, 0, 0, 2, 4, 6});

    // The index array aliases the target: the indices are read before anything is written.
    tensor w = tensor::from_vector(std::vector<int64_t>{1, 0, 0});
    index_put(w, {w.slice(0, 0, 2)}, scalar(100));
    CHECK(int_values(w) == std::vector<int64_t>{100, 100, 0});

    // The value aliases the target: assignment reads the old values.
    tensor v = tensor::from_vector(std::vector<int64_t>{0, 1, 2, 3, 4});
    index_put(v, {tensor::from_vector(std::vector<int64_t>{1, 2, 3})}, v.slice(0, 0, 3));
    CHECK(int_values(v) == std::vector<int64_t>{0, 0, 1, 2, 4});
}

TEST_CASE("indexing: bad advanced indices raise and leave the target unchanged") {
    tensor a = random_tensor({4, 5}, dtype::float64, 23);
    const std::vector<double> before = values(a);
    const tensor bad = tensor::from_vector(std::vector<int64_t>{0, 7, 1});
    CHECK_THROWS_AS(index(a, {bad}), index_error);
    CHECK(contains(error_of([&] { index(a, {bad}); }),
                   "index 7 is out of bounds for axis 0 with size 4"));
    CHECK(contains(error_of([&] {
                       index(a, {0, tensor::from_vector(std::vector<int32_t>{-6})});
                   }),
                   "index -6 is out of bounds for axis 1 with size 5"));
    CHECK_THROWS_AS(index_put(a, {bad}, scalar(1.0)), index_error);
    CHECK_THROWS_AS(index_put(a, {index_slice{}, bad.to(dtype::uint16)}, zeros({4, 3})),
                    index_error);
    // Float index arrays are refused, as NumPy's IndexError.
    const tensor fidx = tensor::from_vector(std::vector<double>{0.0, 1.0});
    CHECK_THROWS_AS(index(a, {fidx}), index_error);
    CHECK(contains(error_of([&] { index(a, {fidx}); }),
                   "arrays used as indices must be of integer (or boolean) type, got float64"));
    CHECK_THROWS_AS(index_put(a, {fidx}, scalar(1.0)), index_error);
    // Mask shape mismatch.
    const tensor m = random_mask({4, 4}, 0.5, 3);
    CHECK_THROWS_AS(index(a, {m}), index_error);
    CHECK(contains(error_of([&] { index(a, {m}); }),
                   "boolean index did not match indexed tensor along axis 1; size of axis is 5 "
                   "but size of corresponding boolean axis is 4"));
    CHECK_THROWS_AS(index_put(a, {m}, scalar(0.0)), index_error);
    // Index arrays that do not broadcast together.
    const tensor i2 = tensor::from_vector(std::vector<int64_t>{0, 1});
    const tensor i3 = tensor::from_vector(std::vector<int64_t>{0, 1, 2});
    CHECK_THROWS_AS(index(a, {i2, i3}), index_error);
    CHECK(contains(error_of([&] {
                       index(a, {i2, i3});
                   }),
                   "shape mismatch: indexing arrays could not be broadcast together with shapes "
                   "(2,) (3,)"));
    // Too many indices with arrays; a value that does not broadcast to the indexed shape.
    CHECK_THROWS_AS(index(a, {i2, i2, i2}), index_error);
    CHECK_THROWS_AS(index_put(a, {i2}, zeros({3, 5})), value_error);
    CHECK(contains(error_of([&] {
                       index_put(a, {i2}, zeros({3, 5}));
                   }),
                   "could not broadcast the value of shape (3, 5) into the indexed shape (2, 5)"));
    CHECK(values(a) == before);
}

TEST_CASE("indexing: nonzero and argwhere") {
    const tensor m = random_mask({5, 6, 7}, 0.4, 4);
    const std::vector<bool> mv = m.to_vector<bool>();
    std::vector<int64_t> ex[3];
    for (int64_t i = 0; i < 5; ++i)
        for (int64_t j = 0; j < 6; ++j)
            for (int64_t k = 0; k < 7; ++k)
                if (mv[static_cast<size_t>((i * 6 + j) * 7 + k)]) {
                    ex[0].push_back(i);
                    ex[1].push_back(j);
                    ex[2].push_back(k);
                }
    const std::vector<tensor> nz = nonzero(m);
    REQUIRE(nz.size() == 3);
    for (int d = 0; d < 3; ++d) {
        CHECK(nz[static_cast<size_t>(d)].dtype() == dtype::int64);
        CHECK(int_values(nz[static_cast<size_t>(d)]) == ex[d]);
    }
    const tensor aw = argwhere(m);
    REQUIRE(aw.shape() == shape_t{static_cast<int64_t>(ex[0].size()), 3});
    const std::vector<int64_t> awv = int_values(aw);
    for (size_t h = 0; h < ex[0].size(); ++h)
        for (int d = 0; d < 3; ++d) CHECK(awv[h * 3 + static_cast<size_t>(d)] == ex[d][h]);

    // Non-bool, non-contiguous input: NaN and negative zero handling as NumPy (NaN is nonzero).
    const tensor f =
        tensor::from_vector(std::vector<double>{0.0, -0.0, std::nan(""), 2.0, 0.0, -1.0}, {2, 3})
            .t();
    const std::vector<tensor> fz = nonzero(f); // f = [[0, 2], [-0, 0], [nan, -1]]
    CHECK(int_values(fz[0]) == std::vector<int64_t>{0, 2, 2});
    CHECK(int_values(fz[1]) == std::vector<int64_t>{1, 0, 1});

    // Large input: the chunked parallel path agrees with one thread.
    threads_guard guard;
    const tensor big = random_mask({1000, 300}, 0.1, 5);
    omp_set_num_threads(1);
    const std::vector<tensor> one = nonzero(big);
    omp_set_num_threads(2);
    const std::vector<tensor> two = nonzero(big);
    CHECK(int_values(one[0]) == int_values(two[0]));
    CHECK(int_values(one[1]) == int_values(two[1]));

    CHECK(nonzero(zeros({0, 3}))[1].shape() == shape_t{0});
    CHECK(argwhere(tensor::scalar_tensor(3.0)).shape() == shape_t{1, 0});
    CHECK_THROWS_AS(nonzero(tensor::scalar_tensor(1)), value_error);
    CHECK(contains(error_of([] { nonzero(tensor::scalar_tensor(1)); }), "0-d"));
}

TEST_CASE("indexing: take, take_along_axis and put_along_axis") {
    const tensor a = random_tensor({3, 4}, dtype::int64, 24);
    const std::vector<int64_t> av = int_values(a);
    const tensor idx = tensor::from_vector(std::vector<int32_t>{3, -1, 0, 5}, {2, 2});
    // Flattened take.
    CHECK(int_values(take(a, idx)) == std::vector<int64_t>{av[3], av[11], av[0], av[5]});
    CHECK(take(a, idx).shape() == shape_t{2, 2});
    // Along axis 1: shape (3, 2, 2).
    const tensor ix1 = tensor::from_vector(std::vector<int64_t>{1, 3});
    tensor r = take(a, ix1, 1);
    CHECK(r.shape() == shape_t{3, 2});
    CHECK(int_values(r) == std::vector<int64_t>{av[1], av[3], av[5], av[7], av[9], av[11]});
    // A 0-d index removes the axis and still copies.
    r = take(a, tensor::scalar_tensor<int64_t>(2), 0);
    CHECK(r.shape() == shape_t{4});
    CHECK(r.storage() != a.storage());

    // take_along_axis: per-row column choices (the argsort / argmax use case).
    const tensor cols = tensor::from_vector(std::vector<int64_t>{3, 0, 1, 1, 2, -1}, {3, 2});
    r = take_along_axis(a, cols, 1);
    CHECK(r.shape() == shape_t{3, 2});
    CHECK(int_values(r) == std::vector<int64_t>{av[3], av[0], av[5], av[5], av[10], av[11]});
    const tensor rows = tensor::from_vector(std::vector<int64_t>{2, 0, 1, 2}, {1, 4});
    CHECK(int_values(take_along_axis(a, rows, 0)) ==
          std::vector<int64_t>{av[8], av[1], av[6], av[11]});

    tensor b = zeros({3, 4}, dtype::int64);
    put_along_axis(b, cols, tensor::from_vector(std::vector<int64_t>{1, 2, 3, 4, 5, 6}, {3, 2}), 1);
    CHECK(int_values(b) == std::vector<int64_t>{2, 0, 0, 1, 0, 4, 0, 0, 0, 0, 5, 6});

    // Bad inputs.
    const tensor fidx = tensor::from_vector(std::vector<float>{1.0f});
    CHECK_THROWS_AS(take(a, fidx), type_error);
    CHECK(contains(error_of([&] { take(a, fidx); }), "integer dtype, got float32"));
    CHECK_THROWS_AS(take(a, ix1, 2), index_error);
    CHECK_THROWS_AS(take(a, tensor::from_vector(std::vector<int64_t>{12})), index_error);
    CHECK_THROWS_AS(take_along_axis(a, ix1, 1), value_error);
    CHECK(contains(error_of([&] { take_along_axis(a, ix1, 1); }), "rank 2, got rank 1"));
    const std::vector<int64_t> bv = int_values(b);
    CHECK_THROWS_AS(put_along_axis(b, cols, zeros({3, 3}), 1), value_error);
    CHECK_THROWS_AS(
        put_along_axis(b, tensor::from_vector(std::vector<int64_t>{4}, {1, 1}), zeros({1, 1}), 1),
        index_error);
    CHECK(int_values(b) == bv);
}
