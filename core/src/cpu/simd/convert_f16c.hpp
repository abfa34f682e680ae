// Internal: float32 <-> float16 conversion loops on the F16C instructions (convert_f16c.cpp).
#pragma once

#include <cstdint>

namespace isthmus::cpu {

/// Whether this build has the F16C loops and this CPU runs them (and ISTHMUS_SIMD allows).
bool f16c_usable() noexcept;

/// float32 -> float16 over n elements (byte strides ss, ds): the bits of float16_t(float),
/// NaN as `sign | 0x7e00` (Note [F16C conversions]).
void f16c_float_to_half(const char* src, int64_t ss, char* dst, int64_t ds, int64_t n);

/// float16 -> float32 over n elements: the bits of float(float16_t), NaN payloads as they are.
void f16c_half_to_float(const char* src, int64_t ss, char* dst, int64_t ds, int64_t n);

} // namespace isthmus::cpu
