// Helpers shared by the core test suites: random tensors, value extraction, error messages.
#pragma once

#include <doctest/doctest.h>
#include <isthmus/tensor.hpp>

#include <functional>
#include <omp.h>
#include <random>
#include <string>
#include <vector>

/// A random tensor of small integers (times 0.25 for inexact dtypes), converted to `dt`, so that
/// float and integer references agree exactly.
inline isthmus::tensor random_tensor(const isthmus::shape_t& shape, isthmus::dtype dt,
                                     unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> dist(-50, 50);
    std::vector<double> v(static_cast<size_t>(isthmus::numel_of(shape)));
    for (double& x : v) x = dist(rng) * (isthmus::is_inexact(dt) ? 0.25 : 1.0);
    return isthmus::tensor::from_vector(v, shape).to(dt);
}

/// The elements in C order as doubles.
inline std::vector<double> values(const isthmus::tensor& t) {
    return t.to(isthmus::dtype::float64).to_vector<double>();
}

/// Runs `f` and returns the message of what it threw, or "<no error>".
inline std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "<no error>";
}

inline bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

/// Restores the OpenMP thread count when a test that changes it ends.
struct threads_guard {
    int saved = omp_get_max_threads();
    ~threads_guard() { omp_set_num_threads(saved); }
};
