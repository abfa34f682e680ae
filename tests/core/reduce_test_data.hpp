// Test data and checks for the reduction suites: random tensors, 3-d layouts, expected shapes,
// tolerances, value comparison.
#pragma once

#include <doctest/doctest.h>

#include "test_support.hpp"
#include "value_checks.hpp"

#include "isthmus/tensor.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <omp.h>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace isthmus;

using cd = std::complex<double>;

// Random values: integers in [lo, hi] for integer dtypes (non-negative for unsigned), 0/1 for
// bool, uniform reals in [lo, hi) otherwise; complex dtypes get random imaginary parts.
tensor random_tensor(dtype dt, const shape_t& shape, uint32_t seed, double lo = -2.0,
                     double hi = 2.0) {
    std::mt19937 rng(seed);
    const auto n = static_cast<size_t>(numel_of(shape));
    std::vector<cd> v(n);
    for (auto& x : v) {
        if (is_bool(dt)) {
            x = std::bernoulli_distribution(0.5)(rng) ? 1.0 : 0.0;
        } else if (is_integer(dt)) {
            const auto l = static_cast<int64_t>(is_unsigned_int(dt) ? std::max(lo, 0.0) : lo);
            x = static_cast<double>(
                std::uniform_int_distribution<int64_t>(l, static_cast<int64_t>(hi))(rng));
        } else {
            std::uniform_real_distribution<double> d(lo, hi);
            x = is_complex(dt) ? cd(d(rng), d(rng)) : cd(d(rng), 0.0);
        }
    }
    return tensor::from_vector(v, shape).to(dt);
}

// Views of shape (3, 4, 5) in several layouts.
struct layout {
    std::string name;
    tensor t;
};
std::vector<layout> layouts_3d(dtype dt, uint32_t seed) {
    std::vector<layout> out;
    out.push_back({"contiguous", random_tensor(dt, {3, 4, 5}, seed)});
    out.push_back({"permuted", random_tensor(dt, {5, 3, 4}, seed + 1).permute({1, 2, 0})});
    out.push_back(
        {"stepped", random_tensor(dt, {6, 4, 10}, seed + 2).slice(0, 0, 6, 2).slice(2, 0, 10, 2)});
    out.push_back({"reversed",
                   random_tensor(dt, {3, 4, 5}, seed + 3).slice(0, 2, -4, -1).slice(2, 4, -6, -1)});
    out.push_back({"broadcast", random_tensor(dt, {3, 1, 5}, seed + 4).expand({3, 4, 5})});
    return out;
}

// Expected shape of a reduction.
shape_t reduced_shape(const shape_t& shape, const std::vector<bool>& red, bool keepdims) {
    shape_t out;
    for (size_t d = 0; d < shape.size(); ++d)
        if (!red[d])
            out.push_back(shape[d]);
        else if (keepdims)
            out.push_back(1);
    return out;
}

double tolerance(dtype dt) {
    switch (dt) {
    case dtype::float16:
        return 4e-3;
    case dtype::bfloat16:
        return 3e-2;
    case dtype::float32:
    case dtype::complex64:
        return 2e-6;
    default:
        return 1e-12;
    }
}

// For each element (C order) of `shape`, the flat index of its output when the flagged
// dimensions are reduced; also the number of outputs.
std::vector<size_t> output_index(const shape_t& shape, const std::vector<bool>& red,
                                 size_t& outputs) {
    const auto n = static_cast<size_t>(numel_of(shape));
    std::vector<size_t> idx(n);
    outputs = 1;
    for (size_t d = 0; d < shape.size(); ++d)
        if (!red[d]) outputs *= static_cast<size_t>(shape[d]);
    for (size_t i = 0; i < n; ++i) {
        size_t rest = i, o = 0, scale = 1;
        for (size_t d = shape.size(); d-- > 0;) {
            const auto s = static_cast<size_t>(shape[d]);
            const size_t k = rest % s;
            rest /= s;
            if (!red[d]) {
                o += k * scale;
                scale *= s;
            }
        }
        idx[i] = o;
    }
    return idx;
}

// Runs values(t, cols) on 1, 2, 3 and 5 OpenMP threads and checks that every run gives the first
// run's numbers bit for bit: t holds 3M uniform floats in [lo, hi) drawn from mt19937(`stream`),
// cols is every other column of t viewed as 1000x3000 (a strided column layout).
template <typename F>
void check_bit_identical_on_any_thread_count(uint32_t stream, float lo, float hi, F values) {
    const int saved = omp_get_max_threads();
    std::mt19937 rng(stream);
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(3'000'000);
    for (auto& x : v) x = d(rng);
    const tensor t = tensor::from_vector(v);
    const tensor cols = t.view({1000, 3000}).slice(1, 0, 3000, 2);
    std::vector<double> first;
    for (int threads : {1, 2, 3, 5}) {
        omp_set_num_threads(threads);
        const std::vector<double> got = values(t, cols);
        if (first.empty()) first = got;
        CHECK_MESSAGE(got == first, threads, " threads");
    }
    omp_set_num_threads(saved);
}

} // namespace
