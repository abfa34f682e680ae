// Internal: a scalar written as one element of a dtype (the inline value of a kernel operand).
#pragma once

#include "isthmus/value.hpp"

namespace isthmus {

/// Writes scalar `s` converted to dtype `dt` into `buf` (at least 16 bytes, 16-aligned), with
/// NumPy's cast from the scalar's own kind, so that every value rounds once (cpu::convert).
void store_scalar(const scalar& s, dtype dt, void* buf);

} // namespace isthmus
