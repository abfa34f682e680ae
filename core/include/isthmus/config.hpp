// Process-wide runtime settings that type names and value constructors consult.
#pragma once

#include "isthmus/dtype.hpp"
#include "isthmus/export.hpp"

namespace isthmus {

/// The dtype Quasar's `scalar` stands for: float32 by default, float64 after
/// set_scalar_dtype(dtype::float64) (Python: `q.init(precision="float64")`).
ISTHMUS_API dtype scalar_dtype() noexcept;
/// Sets the dtype of `scalar`; only float32 and float64 are accepted (value_error otherwise).
ISTHMUS_API void set_scalar_dtype(dtype dt);
/// The complex dtype matching scalar_dtype() (`cscalar`).
ISTHMUS_API dtype cscalar_dtype() noexcept;

} // namespace isthmus
