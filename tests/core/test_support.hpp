// Helpers shared by the core test suites: random tensors, value extraction, error messages.
#pragma once

#include "error_text.hpp"

#include <doctest/doctest.h>
#include <isthmus/memory.hpp>
#include <isthmus/storage.hpp>
#include <isthmus/tensor.hpp>

#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <limits>
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

/// Every dtype, in the order of the dtype enum.
inline constexpr isthmus::dtype all_dtypes[] = {
    isthmus::dtype::bool_,   isthmus::dtype::int8,      isthmus::dtype::int16,
    isthmus::dtype::int32,   isthmus::dtype::int64,     isthmus::dtype::uint8,
    isthmus::dtype::uint16,  isthmus::dtype::uint32,    isthmus::dtype::uint64,
    isthmus::dtype::float16, isthmus::dtype::bfloat16,  isthmus::dtype::float32,
    isthmus::dtype::float64, isthmus::dtype::complex64, isthmus::dtype::complex128};

/// The elements in C order as doubles.
inline std::vector<double> values(const isthmus::tensor& t) {
    return t.to(isthmus::dtype::float64).to_vector<double>();
}

/// Restores the OpenMP thread count when a test that changes it ends.
struct threads_guard {
    int saved = omp_get_max_threads();
    ~threads_guard() { omp_set_num_threads(saved); }
};

/// The CPU's memory and the fake device of the storage and view suites (the fake backend's is
/// BACKEND_DEV, fake_backend.hpp).
inline constexpr isthmus::resource_id CPU = isthmus::MEMRESOURCE_CPU;
inline constexpr isthmus::resource_id DEV = isthmus::MEMRESOURCE_DEVICE2;

/// NaN and infinity, for the suites' references.
inline constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();
inline constexpr double inf_v = std::numeric_limits<double>::infinity();

/// Whether a complex number has a NaN part, and NumPy's order of complex numbers (real part,
/// then imaginary), for the reduction suites' references.
inline bool is_nan(std::complex<double> v) {
    return std::isnan(v.real()) || std::isnan(v.imag());
}
inline bool less(std::complex<double> a, std::complex<double> b) {
    return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
}

/// Helpers of the storage suites (test_storage_*.cpp): byte patterns.
namespace storage_helpers {

// Writes `n` bytes of a pattern derived from `seed` through a CPU write lock.
inline void write_cpu(isthmus::storage& s, unsigned char seed) {
    auto* p = static_cast<unsigned char*>(s.lock(isthmus::LOCK_WRITE, CPU));
    for (size_t i = 0; i < s.nbytes(); ++i) p[i] = static_cast<unsigned char>(seed + i);
    s.unlock(isthmus::LOCK_WRITE, CPU);
}

// Writes the pattern through a write lock on `r` (the fake device's memory is host memory).
inline void write_on(isthmus::storage& s, isthmus::resource_id r, unsigned char seed) {
    auto* p = static_cast<unsigned char*>(s.lock(isthmus::LOCK_WRITE, r));
    for (size_t i = 0; i < s.nbytes(); ++i) p[i] = static_cast<unsigned char>(seed + i);
    s.unlock(isthmus::LOCK_WRITE, r);
}

// True when the copy on `r` (read-locked for the check) holds the pattern of `seed`.
inline bool holds(isthmus::storage& s, isthmus::resource_id r, unsigned char seed) {
    auto* p = static_cast<const unsigned char*>(s.lock(isthmus::LOCK_READ, r));
    bool ok = true;
    for (size_t i = 0; i < s.nbytes(); ++i) ok &= p[i] == static_cast<unsigned char>(seed + i);
    s.unlock(isthmus::LOCK_READ, r);
    return ok;
}

inline bool same_states(const std::vector<isthmus::copy_state>& a,
                        const std::vector<isthmus::copy_state>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i].resource != b[i].resource || a[i].allocated != b[i].allocated ||
            a[i].valid != b[i].valid || a[i].owned != b[i].owned ||
            a[i].read_locks != b[i].read_locks || a[i].write_locks != b[i].write_locks)
            return false;
    return true;
}

using ids = std::vector<isthmus::resource_id>;

} // namespace storage_helpers

/// Helpers of the view suites (test_tensor_views_*.cpp): iota tensors, layouts, slice bounds.
namespace views_helpers {
// Python's omitted slice bounds.
constexpr int64_t NONE_HI = std::numeric_limits<int64_t>::max();
constexpr int64_t NONE_LO = std::numeric_limits<int64_t>::min();

// A float32 tensor holding 0, 1, 2, ... in C order.
inline isthmus::tensor iota(const isthmus::shape_t& shape,
                            isthmus::dtype dt = isthmus::dtype::float32) {
    std::vector<float> v(static_cast<size_t>(isthmus::numel_of(shape)));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
    isthmus::tensor t = isthmus::tensor::from_vector(v, shape);
    return dt == isthmus::dtype::float32 ? t : t.to(dt);
}

inline std::vector<double> vals(const isthmus::tensor& t) {
    return t.to_vector<double>();
}
using dv = std::vector<double>;

inline bool same_storage(const isthmus::tensor& a, const isthmus::tensor& b) {
    return a.storage() == b.storage();
}

// Checks shape, strides and offset of a view in one go.
inline void check_layout(const isthmus::tensor& t, const isthmus::shape_t& shape,
                         const isthmus::shape_t& strides, int64_t offset) {
    CHECK(t.shape() == shape);
    CHECK(t.strides() == strides);
    CHECK(t.offset() == offset);
}

} // namespace views_helpers
