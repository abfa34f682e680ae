// Helpers of the CUDA element-semantics suites: random values and host runs of kernel functions.
#pragma once

#include <doctest/doctest.h>

#include "cuda/elementwise_cmath.cuh"
#include "cuda/gemm.cuh"
#include "cuda/random.cuh"
#include "cuda/reduce.cuh"

#include <isthmus/error.hpp>
#include <isthmus/ops.hpp>
#include <isthmus/tensor.hpp>

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace isthmus;
namespace k = isthmus::cudak;

namespace semantics_helpers {

inline const std::vector<dtype> every_dtype = {
    dtype::bool_,    dtype::int8,    dtype::int16,   dtype::int32,     dtype::int64,
    dtype::uint8,    dtype::uint16,  dtype::uint32,  dtype::uint64,    dtype::float16,
    dtype::bfloat16, dtype::float32, dtype::float64, dtype::complex64, dtype::complex128};

// Random values with the interesting ones mixed in: 0, -1, the type's extremes for integers;
// 0, -0, +-inf, NaN, halves for floats.
inline tensor values(dtype dt, int64_t n, unsigned seed) {
    std::mt19937 g(seed);
    std::normal_distribution<double> d(0.0, 4.0);
    std::uniform_int_distribution<int> small(-40, 40);
    std::vector<double> v(static_cast<size_t>(n));
    for (double& x : v) x = is_integer(dt) || is_bool(dt) ? small(g) : d(g);
    if (is_bool(dt))
        for (double& x : v) x = x > 0;
    tensor t = tensor::from_vector(v).to(dt);
    if (is_complex(dt)) {
        std::vector<double> w(static_cast<size_t>(n));
        for (double& x : w) x = d(g);
        imag(t).copy_from(tensor::from_vector(w));
    }
    // specials at fixed places
    const auto put = [&](int64_t i, double x) {
        if (i < n) t.select(0, i).fill(x);
    };
    if (is_floating(dt) || is_complex(dt)) {
        put(0, 0.0);
        put(1, -0.0);
        put(2, std::numeric_limits<double>::infinity());
        put(3, -std::numeric_limits<double>::infinity());
        put(4, std::nan(""));
        put(5, 2.5);
        put(6, -2.5);
    } else if (is_integer(dt)) {
        put(0, 0);
        put(1, is_signed_int(dt) ? -1.0 : 1.0);
        put(2, 1);
        if (n > 3) { // the extremes: the minimum of a signed type, the maximum of an unsigned
            if (is_signed_int(dt))
                t.select(0, 3).fill(-std::ldexp(1.0, static_cast<int>(8 * itemsize(dt)) - 1));
            else
                t.slice(0, 3, 4).copy_from(full({1}, scalar(std::numeric_limits<uint64_t>::max())));
        }
    }
    return t;
}

// Complex values for the complex functions: every pair of special parts (signed zeros, +-1,
// +-2 (past the branch points of asin/acos/atan/log), halves, tiny and huge magnitudes that
// overflow products, +-inf, NaN), so that every branch cut is met from both sides, then random
// ones.
inline tensor complex_values(dtype dt, unsigned seed) {
    const double inf = std::numeric_limits<double>::infinity();
    const bool single = dt == dtype::complex64;
    const double big = single ? 1e30 : 1e300, tiny = single ? 1e-30 : 1e-300;
    const std::vector<double> parts = {0.0,  -0.0, 1.0,  -1.0, 0.5, -0.5, 2.0,         -2.0,
                                       tiny, big,  -big, 30.0, inf, -inf, std::nan("")};
    std::vector<complex128_t> v;
    for (double re : parts)
        for (double im : parts) v.emplace_back(re, im);
    std::mt19937 g(seed);
    std::normal_distribution<double> d(0.0, 3.0);
    for (int i = 0; i < 64; ++i) v.emplace_back(d(g), d(g));
    return tensor::from_vector(v).to(dt);
}

template <class T>
std::vector<T> raw(const tensor& t) {
    const tensor c = t.contiguous();
    std::vector<T> v(static_cast<size_t>(c.numel()));
    void* p = c.lock(LOCK_READ, MEMRESOURCE_CPU);
    if (!v.empty()) std::memcpy(v.data(), p, v.size() * sizeof(T));
    c.unlock(LOCK_READ, MEMRESOURCE_CPU);
    return v;
}

template <k::kdt K>
tensor from_raw(const std::vector<k::storage_t<K>>& v, dtype dt) {
    tensor t = tensor::empty({static_cast<int64_t>(v.size())}, dt, MEMRESOURCE_CPU);
    void* p = t.lock(LOCK_WRITE, MEMRESOURCE_CPU);
    if (!v.empty()) std::memcpy(p, v.data(), v.size() * sizeof(v[0]));
    t.unlock(LOCK_WRITE, MEMRESOURCE_CPU);
    return t;
}

inline bool close(double g, double r, double tol) {
    if (std::isnan(r)) return std::isnan(g);
    if (std::isinf(r) || tol == 0) return g == r;
    return std::abs(g - r) <= tol * (1 + std::abs(r));
}

// Same values (NaN equals NaN; -0 equals 0); floats within tol relative.
inline void check_values(const tensor& got, const tensor& ref, double tol,
                         const std::string& what) {
    INFO(what);
    REQUIRE(got.dtype() == ref.dtype());
    REQUIRE(got.numel() == ref.numel());
    if (is_complex(ref.dtype())) {
        check_values(real(got), real(ref), tol, what + " (real part)");
        check_values(imag(got), imag(ref), tol, what + " (imaginary part)");
    } else if (is_floating(ref.dtype())) {
        const auto g = got.to_vector<double>(), r = ref.to_vector<double>();
        for (size_t i = 0; i < r.size(); ++i)
            if (!close(g[i], r[i], tol))
                FAIL_CHECK("element " << i << ": kernel " << g[i] << ", CPU " << r[i]);
    } else if (is_signed_int(ref.dtype())) {
        CHECK(got.to_vector<int64_t>() == ref.to_vector<int64_t>());
    } else {
        CHECK(got.to_vector<uint64_t>() == ref.to_vector<uint64_t>());
    }
}

inline k::kdt kernel_type(dtype dt) {
    return static_cast<k::kdt>(static_cast<int>(dt));
}

} // namespace semantics_helpers
