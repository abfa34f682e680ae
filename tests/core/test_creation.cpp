// Tests for creation ops: zeros, ones, full, uninit, *_like, fill, arange, linspace, eye, copy.
#include <doctest/doctest.h>

#include "test_support.hpp"

#include "isthmus/config.hpp"
#include "isthmus/ops/creation.hpp"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

using namespace isthmus;

namespace {} // namespace

TEST_CASE("creation: zeros, ones and full for every dtype, 0-d and empty shapes") {
    for (dtype dt : all_dtypes) {
        CAPTURE(dt);
        for (const shape_t& s : {shape_t{}, shape_t{3, 4}, shape_t{0, 5}, shape_t{2, 1, 3}}) {
            const tensor z = zeros(s, dt), o = ones(s, dt);
            CHECK(z.dtype() == dt);
            CHECK(z.shape() == s);
            CHECK(z.location() == MEMRESOURCE_CPU);
            CHECK(values(z) == std::vector<double>(static_cast<size_t>(numel_of(s)), 0.0));
            CHECK(values(o) == std::vector<double>(static_cast<size_t>(numel_of(s)), 1.0));
        }
        const tensor f = full({5}, scalar(3.0), dt);
        CHECK(values(f) == std::vector<double>(5, is_bool(dt) ? 1.0 : 3.0));
    }
    // Casting the fill value as astype would.
    CHECK(full({2}, scalar(-1), dtype::uint8).to_vector<uint8_t>() ==
          std::vector<uint8_t>{255, 255});
    CHECK(full({2}, scalar(3.7), dtype::int32).to_vector<int32_t>() == std::vector<int32_t>{3, 3});
    CHECK(full({1}, scalar(complex128_t(1.5, -2.0)), dtype::float32).item<float>() == 1.5f);
    const tensor c = full({2}, scalar(complex128_t(1.5, -2.0)), dtype::complex64);
    CHECK(c.to_vector<complex64_t>() == std::vector<complex64_t>(2, complex64_t(1.5f, -2.0f)));
    CHECK(full({1}, scalar(0.1), dtype::float16).item<float>() ==
          static_cast<float>(float16_t(0.1f)));
    // Default dtypes follow the value's kind.
    CHECK(full({1}, scalar(true)).dtype() == dtype::bool_);
    CHECK(full({1}, scalar(7)).dtype() == dtype::int64);
    CHECK(full({1}, scalar(7.5)).dtype() == scalar_dtype());
    CHECK(full({1}, scalar(complex128_t(1, 1))).dtype() == cscalar_dtype());
    CHECK(zeros({2}).dtype() == scalar_dtype());
}

TEST_CASE("creation: fill writes through any view and stays multi-threaded on large tensors") {
    tensor a = zeros({4, 6}, dtype::int32);
    fill(a.slice(1, 1, 6, 2).t(), scalar(5)); // columns 1, 3, 5 through a transposed view
    const std::vector<int32_t> av = a.to_vector<int32_t>();
    for (size_t i = 0; i < 24; ++i) CHECK(av[i] == ((i % 6) % 2 == 1 ? 5 : 0));
    // Patterns whose bytes are all equal take the memset path; others the store loop.
    for (double v : {0.0, -1.0, 1.0, 0.5}) {
        tensor big = uninit({1 << 21}, dtype::float64);
        fill(big, scalar(v));
        const std::vector<double> bv = values(big);
        CHECK(std::count(bv.begin(), bv.end(), v) == static_cast<long>(bv.size()));
    }
    tensor i8 = uninit({100001}, dtype::int8);
    fill(i8, scalar(-3));
    const std::vector<int32_t> i8v = i8.to(dtype::int32).to_vector<int32_t>();
    CHECK(std::count(i8v.begin(), i8v.end(), -3) == 100001);
    tensor c = uninit({3}, dtype::complex128);
    fill(c, scalar(complex128_t(1.0, 2.0)));
    CHECK(c.to_vector<complex128_t>() == std::vector<complex128_t>(3, complex128_t(1.0, 2.0)));
    CHECK_THROWS_AS(fill(tensor(), scalar(1)), value_error);
}

TEST_CASE("creation: uninit and the *_like forms") {
    const tensor u = uninit({3, 2}, dtype::uint16);
    CHECK(u.shape() == shape_t{3, 2});
    CHECK(u.dtype() == dtype::uint16);
    const tensor base = full({2, 3}, scalar(2.0), dtype::float64).t();
    CHECK(zeros_like(base).shape() == shape_t{3, 2});
    CHECK(values(zeros_like(base)) == std::vector<double>(6, 0.0));
    CHECK(ones_like(base, dtype::int8).dtype() == dtype::int8);
    CHECK(values(full_like(base, scalar(4))) == std::vector<double>(6, 4.0));
    CHECK(uninit_like(base).dtype() == dtype::float64);
    CHECK_THROWS_AS(zeros_like(tensor()), value_error);
    CHECK_THROWS_AS(zeros({2, -1}), value_error);
    CHECK_THROWS_AS(zeros({1}, dtype::float32, MEMRESOURCE_SINGLE_OPENCL), not_implemented_error);
}

TEST_CASE("creation: arange lengths and values follow NumPy") {
    CHECK(arange(scalar(5)).to_vector<int64_t>() == std::vector<int64_t>{0, 1, 2, 3, 4});
    CHECK(arange(scalar(5)).dtype() == dtype::int64);
    CHECK(arange(scalar(2), scalar(11), scalar(3)).to_vector<int64_t>() ==
          std::vector<int64_t>{2, 5, 8});
    CHECK(arange(scalar(10), scalar(2), scalar(-3)).to_vector<int64_t>() ==
          std::vector<int64_t>{10, 7, 4});
    CHECK(arange(scalar(3), scalar(3)).numel() == 0);
    CHECK(arange(scalar(5), scalar(1)).numel() == 0);
    CHECK(arange(scalar(-3), scalar(3), scalar(2), dtype::int8).to_vector<int8_t>() ==
          std::vector<int8_t>{-3, -1, 1});
    // Floats: length ceil((stop - start) / step); values start + i * step.
    tensor f = arange(scalar(1.0), scalar(2.0), scalar(0.3), dtype::float64);
    REQUIRE(f.numel() == 4);
    const std::vector<double> fv = f.to_vector<double>();
    for (int i = 0; i < 4; ++i) CHECK(fv[static_cast<size_t>(i)] == doctest::Approx(1.0 + 0.3 * i));
    CHECK(arange(scalar(0.0), scalar(1.0), scalar(0.1)).numel() == 10);
    CHECK(arange(scalar(0.0), scalar(1.0), scalar(0.1)).dtype() == scalar_dtype());
    CHECK(arange(scalar(2.5), scalar(-1.0), scalar(-0.5), dtype::float32).numel() == 7);
    CHECK(arange(scalar(0), scalar(5), scalar(1), dtype::float32).to_vector<float>() ==
          std::vector<float>{0, 1, 2, 3, 4});
    // Large: the parallel path.
    const tensor big = arange(scalar(0), scalar(1000000), scalar(1), dtype::float64);
    const std::vector<double> bv = big.to_vector<double>();
    bool ok = true;
    for (size_t i = 0; i < bv.size(); ++i) ok = ok && bv[i] == static_cast<double>(i);
    CHECK(ok);
    CHECK(arange(scalar(-2), scalar(2), scalar(1), dtype::bool_).to_vector<bool>() ==
          std::vector<bool>{true, true, false, true});

    CHECK_THROWS_AS(arange(scalar(0), scalar(5), scalar(0)), value_error);
    CHECK(contains(error_of([] { arange(scalar(0.0), scalar(5.0), scalar(0.0)); }),
                   "step must not be zero"));
    CHECK_THROWS_AS(arange(scalar(complex128_t(1, 1))), type_error);
    CHECK_THROWS_AS(arange(scalar(0), scalar(3), scalar(1), dtype::complex64), type_error);
    CHECK_THROWS_AS(arange(scalar(0.0), scalar(std::nan("")), scalar(1.0)), value_error);
}

TEST_CASE("creation: linspace with and without the endpoint") {
    tensor l = linspace(0.0, 1.0, 5, true, dtype::float64);
    CHECK(l.to_vector<double>() == std::vector<double>{0.0, 0.25, 0.5, 0.75, 1.0});
    l = linspace(0.0, 1.0, 4, false, dtype::float64);
    CHECK(l.to_vector<double>() == std::vector<double>{0.0, 0.25, 0.5, 0.75});
    l = linspace(-3.0, 7.3, 1000, true, dtype::float32);
    const std::vector<float> lv = l.to_vector<float>();
    CHECK(lv.front() == -3.0f);
    CHECK(lv.back() == 7.3f); // exactly the endpoint
    for (int i = 0; i < 1000; i += 37)
        CHECK(lv[static_cast<size_t>(i)] == doctest::Approx(-3.0 + 10.3 * i / 999.0));
    CHECK(linspace(2.0, 5.0, 1).to_vector<float>() == std::vector<float>{2.0f});
    CHECK(linspace(2.0, 5.0, 0).numel() == 0);
    // Integer dtypes round toward -inf (NumPy 2): np.linspace(-1, 1, 5, dtype=int).
    CHECK(linspace(-1.0, 1.0, 5, true, dtype::int64).to_vector<int64_t>() ==
          std::vector<int64_t>{-1, -1, 0, 0, 1});
    CHECK_THROWS_AS(linspace(0.0, 1.0, -1), value_error);
    CHECK(contains(error_of([] { linspace(0.0, 1.0, -1); }), "non-negative, got -1"));
    CHECK_THROWS_AS(linspace(0.0, 1.0, 3, true, dtype::complex64), type_error);
}

TEST_CASE("creation: eye with offsets and rectangular shapes") {
    auto ref = [](int64_t n, int64_t m, int64_t k) {
        std::vector<double> v(static_cast<size_t>(n * m), 0.0);
        for (int64_t i = 0; i < n; ++i)
            if (i + k >= 0 && i + k < m) v[static_cast<size_t>(i * m + i + k)] = 1.0;
        return v;
    };
    CHECK(values(eye(3)) == ref(3, 3, 0));
    for (int64_t k : {-3, -1, 0, 2, 5}) {
        CAPTURE(k);
        CHECK(values(eye(4, 6, k, dtype::int32)) == ref(4, 6, k));
        CHECK(values(eye(5, 2, k, dtype::complex64)) == ref(5, 2, k));
    }
    CHECK(eye(0).shape() == shape_t{0, 0});
    CHECK(eye(2, 0).shape() == shape_t{2, 0});
    CHECK(eye(3, std::nullopt, 0, dtype::bool_).dtype() == dtype::bool_);
    CHECK_THROWS_AS(eye(-1), value_error);
    CHECK_THROWS_AS(eye(2, -2), value_error);
}

TEST_CASE("creation: copy makes a contiguous copy that does not alias") {
    const tensor a = arange(scalar(12), dtype::int32).reshape({3, 4});
    const tensor v = a.t().slice(0, 0, 4, 2); // (2, 3) strided
    const tensor c = copy(v);
    CHECK(c.is_contiguous());
    CHECK(c.storage() != a.storage());
    CHECK(c.to_vector<int32_t>() == std::vector<int32_t>{0, 4, 8, 2, 6, 10});
    fill(c, scalar(0));
    CHECK(a.to_vector<int32_t>()[4] == 4);
    CHECK_THROWS_AS(copy(tensor()), value_error);
}
