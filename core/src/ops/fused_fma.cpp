// fma(a, b, c): broadcasting and promotion, then one fused a * b + c kernel (ops/dispatch.hpp).
#include "isthmus/ops/fused.hpp"
#include "ops/dispatch.hpp"

namespace isthmus {

tensor fma(const tensor& a, const tensor& b, const tensor& c) {
    ISTHMUS_CHECK(a.defined() && b.defined() && c.defined(), value_error,
                  "fma: undefined tensor argument");
    const shape_t shape = broadcast_shapes(broadcast_shapes(a.shape(), b.shape()), c.shape());
    const dtype dt = promote_types(promote_types(a.dtype(), b.dtype()), c.dtype());
    if (numel_of(shape) == 0) return tensor::empty(shape, dt, MEMRESOURCE_CPU);
    return ops::run_ternary(backend::ternary_op::fma, dt, shape, a, b, c, {&a, &b, &c});
}

} // namespace isthmus
