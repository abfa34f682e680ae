// Helpers for the elementwise tests: random tensors, layout variants, reference comparisons.
#pragma once

#include <doctest/doctest.h>

#include "error_text.hpp"

#include "isthmus/ops/elementwise.hpp"

#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace ew_test {

using namespace isthmus;
using cd = std::complex<double>;

/// Random values for dtype `dt` as doubles: integers in [lo, hi] for integer dtypes (and for
/// every dtype when `integral`, so that references are exact), uniform reals in [lo, hi)
/// otherwise, 0/1 for bool. Unsigned dtypes take lo = max(lo, 0).
inline std::vector<double> random_values(dtype dt, size_t n, uint32_t seed, double lo = -4.0,
                                         double hi = 4.0, bool integral = false) {
    std::mt19937 rng(seed);
    std::vector<double> v(n);
    if (is_bool(dt)) {
        std::bernoulli_distribution d(0.5);
        for (auto& x : v) x = d(rng) ? 1.0 : 0.0;
    } else if (is_integer(dt) || integral) {
        const auto l = static_cast<int64_t>(is_unsigned_int(dt) ? std::max(lo, 0.0) : lo);
        std::uniform_int_distribution<int64_t> d(l, static_cast<int64_t>(hi));
        for (auto& x : v) x = static_cast<double>(d(rng));
    } else {
        std::uniform_real_distribution<double> d(lo, hi);
        for (auto& x : v) x = d(rng);
    }
    return v;
}

/// A new contiguous tensor of `shape` and dtype `dt` holding random_values (complex dtypes get
/// random real and imaginary parts).
inline tensor random_tensor(dtype dt, const shape_t& shape, uint32_t seed, double lo = -4.0,
                            double hi = 4.0, bool integral = false) {
    const auto n = static_cast<size_t>(numel_of(shape));
    if (is_complex(dt)) {
        auto re = random_values(dtype::float64, n, seed, lo, hi, integral);
        auto im = random_values(dtype::float64, n, seed + 1000, lo, hi, integral);
        std::vector<cd> v(n);
        for (size_t i = 0; i < n; ++i) v[i] = cd(re[i], im[i]);
        return tensor::from_vector(v, shape).to(dt);
    }
    return tensor::from_vector(random_values(dt, n, seed, lo, hi, integral), shape).to(dt);
}

/// A named view of random data.
struct layout {
    std::string name;
    tensor t;
};

/// Views of random data of dtype `dt` with shape (m, n) in several memory layouts: contiguous,
/// transposed, stepped (every other row), reversed (negative steps), and a column slice.
inline std::vector<layout> layouts_2d(dtype dt, int64_t m, int64_t n, uint32_t seed) {
    std::vector<layout> out;
    out.push_back({"contiguous", random_tensor(dt, {m, n}, seed)});
    out.push_back({"transposed", random_tensor(dt, {n, m}, seed + 1).t()});
    out.push_back({"stepped", random_tensor(dt, {2 * m, n}, seed + 2).slice(0, 0, 2 * m, 2)});
    out.push_back({"reversed", random_tensor(dt, {m, n}, seed + 3)
                                   .slice(0, m - 1, -m - 1, -1)
                                   .slice(1, n - 1, -n - 1, -1)});
    out.push_back({"column slice", random_tensor(dt, {m, n + 3}, seed + 4).slice(1, 1, n + 1)});
    return out;
}

/// True when `got` matches `want` within rel/abs tolerance; NaNs match NaNs, infinities match
/// infinities of the same sign.
inline bool close(double got, double want, double tol) {
    if (std::isnan(want)) return std::isnan(got);
    if (std::isinf(want)) return got == want;
    return std::fabs(got - want) <= tol * std::max(1.0, std::fabs(want));
}
/// Complex results compare by distance, relative to the magnitude.
inline bool close(cd got, cd want, double tol) {
    const bool nan_want = std::isnan(want.real()) || std::isnan(want.imag());
    if (nan_want || std::isinf(want.real()) || std::isinf(want.imag()))
        return close(got.real(), want.real(), tol) && close(got.imag(), want.imag(), tol);
    return std::abs(got - want) <= tol * std::max(1.0, std::abs(want));
}

/// The tolerance for results of dtype `dt` computed in a correctly rounded (or nearly) way.
inline double tol_for(dtype dt, double ulps = 4) {
    switch (dt) {
    case dtype::float16:
        return ulps * 1e-3;
    case dtype::bfloat16:
        return ulps * 8e-3;
    case dtype::float32:
    case dtype::complex64:
        return ulps * 1.2e-7;
    case dtype::float64:
    case dtype::complex128:
        return ulps * 2.3e-16;
    default:
        return 0;
    }
}

/// The broadcast shape of two shapes (NumPy's rule; the inputs are assumed compatible).
inline shape_t bshape(const shape_t& a, const shape_t& b) {
    return broadcast_shapes(a, b);
}

/// Checks `out` (of dtype `want_dt`) against `ref` applied to the broadcast elements of a and b,
/// read as V (double, int64_t, uint64_t or cd).
/// Whether a result element matches the reference: within `tol` for float64 and complex128
/// references, exactly otherwise.
template <typename V>
bool matches(const V& got, const V& want, double tol) {
    if constexpr (std::is_same_v<V, double> || std::is_same_v<V, cd>)
        return close(got, want, tol);
    else
        return got == want;
}

template <typename V, typename F>
void check_binary_ref(const tensor& out, dtype want_dt, const tensor& a, const tensor& b, F ref,
                      double tol) {
    const shape_t shape = bshape(a.shape(), b.shape());
    REQUIRE(out.shape() == shape);
    REQUIRE(out.dtype() == want_dt);
    REQUIRE(out.is_dense());
    const auto av = a.expand(shape).to_vector<V>();
    const auto bv = b.expand(shape).to_vector<V>();
    const auto ov = out.to_vector<V>();
    int bad = 0;
    for (size_t i = 0; i < ov.size(); ++i) {
        const V want = ref(av[i], bv[i]);
        const bool ok = matches(ov[i], want, tol);
        if (!ok && bad++ < 3) {
            INFO("element ", i, ": a=", av[i], " b=", bv[i], " got ", ov[i], " want ", want);
            CHECK(ok);
        }
    }
    CHECK(bad == 0);
}

/// Checks `out` against `ref` applied to the elements of `a`.
template <typename V, typename F>
void check_unary_ref(const tensor& out, dtype want_dt, const tensor& a, F ref, double tol) {
    REQUIRE(out.shape() == a.shape());
    REQUIRE(out.dtype() == want_dt);
    const auto av = a.to_vector<V>();
    const auto ov = out.to_vector<V>();
    int bad = 0;
    for (size_t i = 0; i < ov.size(); ++i) {
        const V want = ref(av[i]);
        const bool ok = matches(ov[i], want, tol);
        if (!ok && bad++ < 3) {
            INFO("element ", i, ": a=", av[i], " got ", ov[i], " want ", want);
            CHECK(ok);
        }
    }
    CHECK(bad == 0);
}

/// Wraps an exact integer result into dtype `dt` as a C++ cast (NumPy's wrap-around), read back
/// as int64.
inline int64_t wrap_to(dtype dt, int64_t v) {
    switch (dt) {
    case dtype::int8:
        return static_cast<int8_t>(v);
    case dtype::int16:
        return static_cast<int16_t>(v);
    case dtype::int32:
        return static_cast<int32_t>(v);
    case dtype::uint8:
        return static_cast<uint8_t>(v);
    case dtype::uint16:
        return static_cast<uint16_t>(v);
    case dtype::uint32:
        return static_cast<uint32_t>(v);
    default:
        return v;
    }
}

/// Elements of `t` as doubles, for "unchanged" checks.
inline std::vector<double> snapshot(const tensor& t) {
    return t.to_vector<double>();
}

} // namespace ew_test
