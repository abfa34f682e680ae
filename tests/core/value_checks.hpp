// Checks of a tensor's values against a complex float64 reference, with a relative tolerance.
#pragma once

#include <doctest/doctest.h>

#include "isthmus/tensor.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

/// Whether `got` is within `tol` of `want` (relative, at least absolute), for the real and the
/// imaginary part alike; NaN matches NaN, infinities match exactly.
inline bool close(std::complex<double> got, std::complex<double> want, double tol) {
    auto one = [&](double g, double w) {
        if (std::isnan(w)) return std::isnan(g);
        if (std::isinf(w)) return g == w;
        return std::abs(g - w) <= tol * std::max(1.0, std::abs(w));
    };
    return one(got.real(), want.real()) && one(got.imag(), want.imag());
}

/// Checks every element of `got` (C order) against `want`; reports the first mismatch under
/// `what` and stops there.
inline void check_values(const isthmus::tensor& got, const std::vector<std::complex<double>>& want,
                         double tol, const std::string& what) {
    const auto g = got.to_vector<std::complex<double>>();
    REQUIRE_MESSAGE(g.size() == want.size(), what);
    for (size_t i = 0; i < g.size(); ++i)
        if (!close(g[i], want[i], tol)) {
            FAIL_CHECK(what, ": element ", i, " is ", g[i].real(), "+", g[i].imag(), "j, want ",
                       want[i].real(), "+", want[i].imag(), "j");
            return;
        }
}
