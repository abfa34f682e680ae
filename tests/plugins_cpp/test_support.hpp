// Helpers for the plugin host suite: the host API's names, error messages, random tensors.
#pragma once

#include "error_text.hpp"

#include <doctest/doctest.h>
#include <isthmus/plugin_host.hpp>
#include <isthmus/tensor.hpp>

#include <functional>
#include <random>
#include <string>
#include <vector>

namespace pl = isthmus::plugin_host;
using isthmus::dtype;
using isthmus::tensor;
using isthmus::value;

/// A float64 tensor of uniform random values in [-1, 1).
inline isthmus::tensor random_doubles(const isthmus::shape_t& shape, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    std::vector<double> v(static_cast<size_t>(isthmus::numel_of(shape)));
    for (double& x : v) x = dist(rng);
    return isthmus::tensor::from_vector(v, shape);
}
