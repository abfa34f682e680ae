// Tests for where, clamp and cast: broadcasting, promotion, layouts, NaN, errors.
#include "test_elementwise_util.hpp"

using namespace isthmus;
using namespace ew_test;

TEST_CASE("elementwise: where selects with broadcasting in every layout and dtype") {
    const std::vector<dtype> dts = {
        dtype::bool_,   dtype::int8,    dtype::int16,   dtype::uint32,    dtype::int64,
        dtype::float16, dtype::float32, dtype::float64, dtype::complex64, dtype::complex128};
    for (dtype dt : dts) {
        CAPTURE(dt);
        const auto as = layouts_2d(dt, 5, 4, 3);
        const tensor cond = gt(random_tensor(dtype::float32, {5, 4}, 9), 0.0);
        for (const auto& la : as) {
            CAPTURE(la.name);
            const tensor b = random_tensor(dt, {4}, 10);
            const tensor out = where(cond, la.t, b);
            CHECK(out.dtype() == dt);
            CHECK(out.shape() == shape_t{5, 4});
            const auto c = cond.to_vector<bool>();
            const auto av = la.t.to_vector<cd>();
            const auto bv = b.expand({5, 4}).to_vector<cd>();
            const auto ov = out.to_vector<cd>();
            for (size_t i = 0; i < ov.size(); ++i) CHECK(ov[i] == (c[i] ? av[i] : bv[i]));
        }
    }
    // A broadcast condition and a non-bool condition (read as != 0).
    const tensor a = tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
    const tensor rowc = tensor::from_vector(std::vector<int32_t>{0, 7, 0});
    CHECK(where(rowc, a, 0).to_vector<double>() == std::vector<double>{0, 2, 0, 0, 5, 0});
    const tensor colc = tensor::from_vector(std::vector<double>{0.0, NAN}, {2, 1});
    CHECK(where(colc, a, -1.5).to_vector<double>() ==
          std::vector<double>{-1.5, -1.5, -1.5, 4, 5, 6});
}

TEST_CASE("elementwise: where promotes its value operands") {
    const tensor c = tensor::from_vector(std::vector<bool>{true, false, true});
    const tensor i8 = tensor::from_vector(std::vector<int8_t>{1, 2, 3});
    const tensor f32 = tensor::from_vector(std::vector<float>{0.5f, 1.5f, 2.5f});
    const tensor u8 = tensor::from_vector(std::vector<uint8_t>{10, 20, 30});
    CHECK(where(c, i8, f32).dtype() == dtype::float32);
    CHECK(where(c, i8, f32).to_vector<double>() == std::vector<double>{1, 1.5, 3});
    CHECK(where(c, i8, u8).dtype() == dtype::int16);
    CHECK(where(c, i8, u8).to_vector<int64_t>() == std::vector<int64_t>{1, 20, 3});
    CHECK(where(c, i8, 5).dtype() == dtype::int8);
    CHECK(where(c, i8, 5.5).dtype() == dtype::float64);
    CHECK(where(c, 7, f32).dtype() == dtype::float32);
    CHECK(where(c, 7, f32).to_vector<double>() == std::vector<double>{7, 1.5, 7});
    CHECK(where(c, 1, 2).dtype() == dtype::int64);
    CHECK(where(c, 1, 2.0).dtype() == dtype::float64);
    CHECK(where(c, true, false).dtype() == dtype::bool_);
    CHECK(where(c, 1, 2).to_vector<int64_t>() == std::vector<int64_t>{1, 2, 1});
    const tensor e = where(tensor::from_vector(std::vector<bool>{}, {0}), i8.slice(0, 0, 0), 1.0);
    CHECK(e.shape() == shape_t{0});
    CHECK(where(tensor::scalar_tensor(true), tensor::scalar_tensor(1.0f), 2).dim() == 0);
    // Large (multi-threaded), strided.
    const tensor big = random_tensor(dtype::float64, {400, 300}, 1);
    const tensor bc = gt(big.t(), 0.0);
    const tensor w = where(bc, big.t(), 0.0);
    const auto bv = big.t().to_vector<double>(), wv = w.to_vector<double>();
    bool ok = true;
    for (size_t i = 0; i < bv.size(); ++i) ok = ok && wv[i] == (bv[i] > 0 ? bv[i] : 0.0);
    CHECK(ok);
}

TEST_CASE("elementwise: where bad inputs") {
    const tensor c = tensor::from_vector(std::vector<bool>{true, false, true});
    const tensor a = tensor::from_vector(std::vector<float>{1, 2});
    const std::string msg = error_of<value_error>([&] { (void)where(c, a, a); });
    CHECK(contains(msg, "where"));
    CHECK(contains(msg, "(3,)"));
    CHECK(contains(msg, "(2,)"));
    CHECK_THROWS_AS((void)where(c, a, 1.0), value_error);
    CHECK_THROWS_AS((void)where(tensor(), a, a), value_error);
    CHECK_THROWS_AS((void)where(c, tensor(), 1), value_error);
    const tensor u = tensor::from_vector(std::vector<uint8_t>{1, 2, 3});
    CHECK_THROWS_AS((void)where(c, u, -1), overflow_error); // weak int out of uint8's range
    CHECK(a.to_vector<double>() == std::vector<double>{1, 2});
    CHECK(c.to_vector<bool>() == std::vector<bool>{true, false, true});
}

TEST_CASE("elementwise: clamp is NumPy's clip") {
    for (dtype dt : {dtype::int8, dtype::int32, dtype::uint16, dtype::float32, dtype::float64,
                     dtype::float16}) {
        CAPTURE(dt);
        for (const auto& l : layouts_2d(dt, 6, 5, 4)) {
            CAPTURE(l.name);
            const tensor out = clamp(l.t, 1, 3);
            CHECK(out.dtype() == dt);
            check_unary_ref<double>(
                out, dt, l.t, [](double x) { return std::min(std::max(x, 1.0), 3.0); }, 0);
        }
    }
    const tensor x = tensor::from_vector(std::vector<double>{-2, 0.5, NAN, 7, 2});
    const auto c = clamp(x, 0.0, 5.0).to_vector<double>();
    CHECK(c[0] == 0.0);
    CHECK(c[1] == 0.5);
    CHECK(std::isnan(c[2]));
    CHECK(c[3] == 5.0);
    CHECK(clamp(x, 3.0, 1.0).to_vector<double>()[1] == 1.0); // lo > hi gives hi
    CHECK(std::isnan(clamp(x, NAN, 1.0).to_vector<double>()[0]));
    // Weak scalars and promotion.
    const tensor i8 = tensor::from_vector(std::vector<int8_t>{-100, 0, 100});
    CHECK(clamp(i8, -5, 5).dtype() == dtype::int8);
    CHECK(clamp(i8, -5, 5).to_vector<int64_t>() == std::vector<int64_t>{-5, 0, 5});
    CHECK(clamp(i8, -0.5, 5).dtype() == dtype::float64);
    // Tensor bounds broadcast.
    const tensor lo = tensor::from_vector(std::vector<float>{0, 1, 2}, {3, 1});
    const tensor hi = tensor::from_vector(std::vector<float>{2.5f});
    const tensor v = tensor::from_vector(std::vector<float>{-1, 1.5f, 4});
    const tensor t = clamp(v, lo, hi);
    CHECK(t.shape() == shape_t{3, 3});
    CHECK(t.to_vector<double>() == std::vector<double>{0, 1.5, 2.5, 1, 1.5, 2.5, 2, 2, 2.5});
    // clamp_inplace.
    tensor w = tensor::from_vector(std::vector<int32_t>{-7, 3, 9});
    clamp_inplace(w, 0, 5);
    CHECK(w.to_vector<int64_t>() == std::vector<int64_t>{0, 3, 5});
    // Large.
    const tensor big = random_tensor(dtype::float32, {300, 400}, 5).t();
    check_unary_ref<double>(
        clamp(big, -1, 1), dtype::float32, big,
        [](double y) { return std::min(std::max(y, -1.0), 1.0); }, 0);
}

TEST_CASE("elementwise: clamp bad inputs") {
    tensor w = tensor::from_vector(std::vector<int32_t>{-7, 3, 9});
    const std::string msg = error_of<type_error>([&] { clamp_inplace(w, 0.5, 5); });
    CHECK(contains(msg, "clamp"));
    CHECK(contains(msg, "int32"));
    CHECK(w.to_vector<int64_t>() == std::vector<int64_t>{-7, 3, 9});
    const tensor z = tensor::from_vector(std::vector<cd>{{1, 1}});
    CHECK(contains(error_of<type_error>([&] { (void)clamp(z, 0, 1); }), "complex"));
    const tensor f = tensor::from_vector(std::vector<float>{1, 2});
    CHECK_THROWS_AS((void)clamp(f, tensor::from_vector(std::vector<float>{0, 0, 0}), f),
                    value_error);
    CHECK_THROWS_AS((void)clamp(tensor(), 0, 1), value_error);
    CHECK_THROWS_AS(clamp_inplace(f.expand({3, 2}), 0, 1), value_error);
    CHECK(f.to_vector<double>() == std::vector<double>{1, 2});
}

TEST_CASE("elementwise: cast converts between dtypes like astype") {
    const tensor x = tensor::from_vector(std::vector<double>{-1.7, 0.5, 2.9, 300.25});
    CHECK(cast(x, dtype::int32).to_vector<int64_t>() == std::vector<int64_t>{-1, 0, 2, 300});
    CHECK(cast(x, dtype::uint8).to_vector<int64_t>()[3] == 44); // 300 wraps like NumPy
    CHECK(cast(x, dtype::bool_).to_vector<bool>() == std::vector<bool>{true, true, true, true});
    CHECK(cast(x, dtype::float16).to_vector<double>()[1] == 0.5);
    CHECK(cast(x, dtype::complex64).to_vector<cd>()[2] == cd(2.9f, 0));
    const tensor z = tensor::from_vector(std::vector<cd>{{1.5, 2}});
    CHECK(cast(z, dtype::float32).to_vector<double>()[0] == 1.5);
    CHECK(cast(x.slice(0, 3, -5, -1), dtype::int64).to_vector<int64_t>() ==
          std::vector<int64_t>{300, 2, 0, -1});
    CHECK(cast(x, dtype::float64).storage() != x.storage());
    CHECK_THROWS_AS((void)cast(tensor(), dtype::int8), value_error);
}
