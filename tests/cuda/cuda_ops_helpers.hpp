// Shared by the cuda ops tests: random inputs, tolerances and the CPU-versus-GPU comparison.
#pragma once

#include <doctest/doctest.h>

#include <isthmus/cuda.hpp>
#include <isthmus/error.hpp>
#include <isthmus/ops.hpp>
#include <isthmus/schedule.hpp>
#include <isthmus/storage.hpp>
#include <isthmus/tensor.hpp>

#include <cmath>
#include <complex>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace cuda_ops_test {

using namespace isthmus;

// Note [cross-backend tests]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// Each case builds its inputs on the CPU, then runs the same op under device_scope(CPU) (the
// reference) and under device_scope(cuda:0): the inputs are copied to the GPU by the coherence
// model and the op runs there. The GPU result must still be valid only on the GPU (so no silent CPU
// fallback passes) and equal the CPU's within the dtype's tolerance: exact for integers, bool and
// casts, a few units in the last place for floats (transcendental functions differ between CUDA and
// glibc by an ulp or two).

inline const std::vector<dtype> every_dtype = {
    dtype::bool_,    dtype::int8,    dtype::int16,   dtype::int32,     dtype::int64,
    dtype::uint8,    dtype::uint16,  dtype::uint32,  dtype::uint64,    dtype::float16,
    dtype::bfloat16, dtype::float32, dtype::float64, dtype::complex64, dtype::complex128};

inline const resource_id gpu = MEMRESOURCE_SINGLE_CUDA;

// Random values of `dt`: small integers (negative ones for signed types), normals for floats.
inline tensor random_tensor(dtype dt, const shape_t& shape, unsigned seed, double scale = 3.0) {
    std::mt19937 g(seed);
    const int64_t n = numel_of(shape);
    if (is_complex(dt)) {
        std::normal_distribution<double> d(0.0, scale);
        std::vector<complex128_t> v(static_cast<size_t>(n));
        for (auto& x : v) x = complex128_t(d(g), d(g));
        return tensor::from_vector(v, shape).to(dt);
    }
    std::vector<double> v(static_cast<size_t>(n));
    if (is_bool(dt)) {
        std::bernoulli_distribution d(0.5);
        for (double& x : v) x = d(g);
    } else if (is_integer(dt)) {
        std::uniform_int_distribution<int> d(is_unsigned_int(dt) ? 0 : -50, 50);
        for (double& x : v) x = d(g);
    } else {
        std::normal_distribution<double> d(0.0, scale);
        for (double& x : v) x = d(g);
    }
    return tensor::from_vector(v, shape).to(dt);
}

inline double tolerance(dtype dt) {
    switch (dt) {
    case dtype::float16:
        return 2e-3; // one float16 ulp: the float results may round to neighbouring halves
    case dtype::bfloat16:
        return 1.6e-2;
    case dtype::float32:
    case dtype::complex64:
        return 4e-6;
    case dtype::float64:
    case dtype::complex128:
        return 1e-13;
    default:
        return 0;
    }
}

inline bool close(double g, double r, double tol) {
    if (std::isnan(r)) return std::isnan(g);
    if (std::isinf(r)) return g == r;
    return std::abs(g - r) <= tol * (1 + std::abs(r));
}

// got (from the GPU) equals ref (from the CPU): same shape and dtype, values within `tol`
// relative (complex: on the modulus of the difference).
inline void check_same(const tensor& got, const tensor& ref, double tol, const std::string& what) {
    INFO(what);
    REQUIRE(got.shape() == ref.shape());
    REQUIRE(got.dtype() == ref.dtype());
    const dtype dt = ref.dtype();
    if (is_complex(dt)) {
        const auto gr = real(got).to_vector<double>(), gi = imag(got).to_vector<double>();
        const auto rr = real(ref).to_vector<double>(), ri = imag(ref).to_vector<double>();
        for (size_t i = 0; i < rr.size(); ++i) {
            const std::complex<double> g(gr[i], gi[i]), r(rr[i], ri[i]);
            if (std::isnan(rr[i]) || std::isnan(ri[i]) || std::isinf(rr[i]) || std::isinf(ri[i])) {
                CHECK(close(gr[i], rr[i], tol));
                CHECK(close(gi[i], ri[i], tol));
            } else if (!(std::abs(g - r) <= tol * (1 + std::abs(r)))) {
                FAIL_CHECK("element " << i << ": got " << g << ", CPU " << r);
            }
        }
    } else if (is_floating(dt)) {
        const auto g = got.to_vector<double>(), r = ref.to_vector<double>();
        for (size_t i = 0; i < r.size(); ++i)
            if (!close(g[i], r[i], tol))
                FAIL_CHECK("element " << i << ": got " << g[i] << ", CPU " << r[i]);
    } else if (is_signed_int(dt)) {
        CHECK(got.to_vector<int64_t>() == ref.to_vector<int64_t>());
    } else {
        CHECK(got.to_vector<uint64_t>() == ref.to_vector<uint64_t>());
    }
}

// Runs `op` on the CPU and on cuda:0 and compares (Note [cross-backend tests]).
// `on_device` false: the op is expected to fall back to the CPU (the values must still agree).
inline void both(const std::function<tensor()>& op, const std::string& what, double tol = -1,
                 bool on_device = true) {
    tensor ref, got;
    {
        device_scope s(MEMRESOURCE_CPU);
        ref = op();
    }
    {
        device_scope s(gpu);
        got = op();
    }
    INFO(what);
    if (got.numel() > 0 && on_device) {
        CHECK(got.storage()->valid_on(gpu));
        CHECK_FALSE(got.storage()->valid_on(MEMRESOURCE_CPU));
    }
    check_same(got, ref, tol < 0 ? tolerance(ref.dtype()) : tol, what);
}

inline std::string name_of(dtype dt) {
    return std::string(isthmus::name(dt));
}

inline const std::vector<binary_op> every_binary = {
    binary_op::add,         binary_op::sub,        binary_op::mul,         binary_op::div,
    binary_op::floor_div,   binary_op::mod,        binary_op::pow,         binary_op::maximum,
    binary_op::minimum,     binary_op::atan2,      binary_op::eq,          binary_op::ne,
    binary_op::lt,          binary_op::le,         binary_op::gt,          binary_op::ge,
    binary_op::logical_and, binary_op::logical_or, binary_op::logical_xor, binary_op::bit_and,
    binary_op::bit_or,      binary_op::bit_xor,    binary_op::shift_left,  binary_op::shift_right};

inline const std::vector<unary_op> every_unary = {
    unary_op::neg,     unary_op::abs,    unary_op::sign,      unary_op::exp,
    unary_op::log,     unary_op::log2,   unary_op::log10,     unary_op::expm1,
    unary_op::log1p,   unary_op::sqrt,   unary_op::rsqrt,     unary_op::sin,
    unary_op::cos,     unary_op::tan,    unary_op::asin,      unary_op::acos,
    unary_op::atan,    unary_op::sinh,   unary_op::cosh,      unary_op::tanh,
    unary_op::floor,   unary_op::ceil,   unary_op::round,     unary_op::logical_not,
    unary_op::bit_not, unary_op::isnan,  unary_op::isinf,     unary_op::isfinite,
    unary_op::conj,    unary_op::square, unary_op::reciprocal};

inline bool supported(binary_op op, dtype dt) {
    try {
        (void)result_type(op, dt, dt);
        return true;
    } catch (const type_error&) {
        return false;
    }
}

inline bool supported(unary_op op, dtype dt) {
    try {
        (void)result_type(op, dt);
        return true;
    } catch (const type_error&) {
        return false;
    }
}

} // namespace cuda_ops_test
