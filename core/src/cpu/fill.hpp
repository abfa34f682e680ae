// Internal: CPU fill kernels (constant patterns and linear sequences), multi-threaded.
#pragma once

#include "cpu/convert.hpp"
#include "isthmus/tensor.hpp"
#include "isthmus/value.hpp"

#include <cstdint>

namespace isthmus::cpu {

/// `s` converted to T with NumPy's cast semantics (cpu::convert from the scalar's exact value).
template <typename T>
T scalar_as(const scalar& s) {
    const dtype k = s.type();
    if (is_complex(k)) return convert<T>(s.to<complex128_t>());
    if (is_floating(k)) return convert<T>(s.to<double>());
    if (is_unsigned_int(k)) return convert<T>(s.to<uint64_t>());
    if (is_bool(k)) return convert<T>(s.to<bool>());
    return convert<T>(s.to<int64_t>());
}

/// Writes `value`, converted to dst's dtype with cast semantics, into every element of the
/// view `dst` whose element 0 is at `dst_data` (host memory, locked for writing).
void fill(const tensor& dst, void* dst_data, const scalar& value);

/// Writes start + i * step (computed in float64, then cast; integer dtypes round toward -inf
/// when `floor_ints`) for i in [0, n) into the contiguous buffer `data` of dtype `dt`.
void fill_linear(dtype dt, void* data, int64_t n, double start, double step, bool floor_ints);

/// Writes start + i * step computed exactly in int64 (then cast) into a contiguous buffer.
void fill_linear_int(dtype dt, void* data, int64_t n, int64_t start, int64_t step);

} // namespace isthmus::cpu
