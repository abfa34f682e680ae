// Tests of fused elementwise ops (fma) against a float64 reference.
#include <doctest/doctest.h>
#include <isthmus/isthmus.hpp>

#include <random>

using namespace isthmus;

namespace {
tensor random_tensor(const shape_t& shape, uint32_t seed) {
    std::mt19937 g(seed);
    std::uniform_real_distribution<double> d(-2, 2);
    std::vector<double> v(static_cast<size_t>(numel_of(shape)));
    for (auto& x : v) x = d(g);
    return tensor::from_vector(v, shape).reshape(shape);
}
} // namespace

TEST_CASE("fused: fma matches a float64 reference with broadcasting and strides") {
    tensor a = random_tensor({4, 5}, 1).to(dtype::float32);
    tensor b = random_tensor({5, 4}, 2).to(dtype::float32).t(); // non-contiguous
    tensor c = random_tensor({5}, 3);                           // broadcast, float64
    tensor r = fma(a, b, c);
    CHECK(r.dtype() == dtype::float64);
    CHECK(r.shape() == shape_t{4, 5});
    auto av = a.to_vector<double>(), bv = b.to_vector<double>(), cv = c.to_vector<double>();
    auto rv = r.to_vector<double>();
    for (size_t i = 0; i < 4; ++i)
        for (size_t j = 0; j < 5; ++j)
            CHECK(rv[i * 5 + j] == doctest::Approx(av[i * 5 + j] * bv[i * 5 + j] + cv[j]));
}

TEST_CASE("fused: fma on empty, 0-d and integer tensors") {
    CHECK(fma(tensor::empty({0, 3}, dtype::float32), tensor::empty({3}, dtype::float32),
              tensor::scalar_tensor(1.0f))
              .shape() == shape_t{0, 3});
    tensor r = fma(tensor::scalar_tensor<int32_t>(3), tensor::scalar_tensor<int32_t>(4),
                   tensor::scalar_tensor<int32_t>(5));
    CHECK(r.dim() == 0);
    CHECK(r.item<int64_t>() == 17);
}

TEST_CASE("fused: fma with shapes that do not broadcast raises value_error") {
    tensor a = random_tensor({3}, 4), b = random_tensor({4}, 5);
    auto before = a.to_vector<double>();
    CHECK_THROWS_AS(fma(a, b, a), value_error);
    CHECK(a.to_vector<double>() == before);
}
