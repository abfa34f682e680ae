// Process-wide runtime settings (the dtype of Quasar's `scalar`).
#include "isthmus/config.hpp"

#include <atomic>

namespace isthmus {

namespace {
std::atomic<dtype> g_scalar{dtype::float32};
}

dtype scalar_dtype() noexcept {
    return g_scalar.load(std::memory_order_relaxed);
}

void set_scalar_dtype(dtype dt) {
    ISTHMUS_CHECK(dt == dtype::float32 || dt == dtype::float64, value_error,
                  "the scalar precision must be float32 or float64, got ", dt);
    g_scalar.store(dt, std::memory_order_relaxed);
}

dtype cscalar_dtype() noexcept {
    return complex_dtype(scalar_dtype());
}

} // namespace isthmus
