// where(cond, a, b) and clamp(t, lo, hi): ternary elementwise ops with broadcasting.
#include "autograd/recorded_ops.hpp"
#include "ops/dispatch.hpp"

namespace isthmus {

namespace {

using backend::ternary_op;

// The dtype clamp computes in: maximum's, then minimum's (NumPy's clip).
dtype clamp_dtype(dtype t, dtype lo, dtype hi) {
    ISTHMUS_CHECK(!is_complex(t) && !is_complex(lo) && !is_complex(hi), type_error,
                  "clamp: not supported for dtypes ", t, ", ", lo, " and ", hi,
                  " (complex numbers are not ordered)");
    const dtype m = ops::binary_types(binary_op::maximum, t, lo).result;
    return ops::binary_types(binary_op::minimum, m, hi).result;
}

} // namespace

tensor where(const tensor& cond, const tensor& a, const tensor& b) {
    // See Note [recording at the op layer].
    if (autograd::needs_record(a, b)) [[unlikely]]
        return autograd::where_recorded(cond, &a, nullptr, &b, nullptr);
    ops::check_defined(cond, "where", "condition");
    ops::check_defined(a, "where", "second");
    ops::check_defined(b, "where", "third");
    const shape_t shape = ops::broadcast_all("where", {&cond.shape(), &a.shape(), &b.shape()});
    const dtype dt = promote_types(a.dtype(), b.dtype());
    if (numel_of(shape) == 0) return tensor::empty(shape, dt, MEMRESOURCE_CPU);
    return ops::run_ternary(ternary_op::where, dt, shape, cond, a, b, {&a, &b, &cond});
}

tensor where(const tensor& cond, const tensor& a, const scalar& b) {
    if (autograd::needs_record(a)) [[unlikely]]
        return autograd::where_recorded(cond, &a, nullptr, nullptr, &b);
    ops::check_defined(cond, "where", "condition");
    ops::check_defined(a, "where", "second");
    const shape_t shape = ops::broadcast_all("where", {&cond.shape(), &a.shape()});
    const dtype bt = ops::weak_scalar_dtype(a.dtype(), b, "where");
    const dtype dt = promote_types(a.dtype(), bt);
    if (numel_of(shape) == 0) return tensor::empty(shape, dt, MEMRESOURCE_CPU);
    return ops::run_ternary(ternary_op::where, dt, shape, cond, a, {b, bt}, {&a, &cond});
}

tensor where(const tensor& cond, const scalar& a, const tensor& b) {
    if (autograd::needs_record(b)) [[unlikely]]
        return autograd::where_recorded(cond, nullptr, &a, &b, nullptr);
    ops::check_defined(cond, "where", "condition");
    ops::check_defined(b, "where", "third");
    const shape_t shape = ops::broadcast_all("where", {&cond.shape(), &b.shape()});
    const dtype at = ops::weak_scalar_dtype(b.dtype(), a, "where");
    const dtype dt = promote_types(at, b.dtype());
    if (numel_of(shape) == 0) return tensor::empty(shape, dt, MEMRESOURCE_CPU);
    return ops::run_ternary(ternary_op::where, dt, shape, cond, {a, at}, b, {&b, &cond});
}

tensor where(const tensor& cond, const scalar& a, const scalar& b) {
    ops::check_defined(cond, "where", "condition");
    const dtype at = ops::default_scalar_dtype(a), bt = ops::default_scalar_dtype(b);
    const dtype dt = promote_types(at, bt);
    if (cond.numel() == 0) return tensor::empty(cond.shape(), dt, MEMRESOURCE_CPU);
    return ops::run_ternary(ternary_op::where, dt, cond.shape(), cond, {a, at}, {b, bt}, {&cond});
}

tensor clamp(const tensor& t, const scalar& lo, const scalar& hi) {
    if (autograd::needs_record(t)) [[unlikely]]
        return autograd::clamp_recorded(t, lo, hi);
    ops::check_defined(t, "clamp", "input");
    const dtype lt = ops::weak_scalar_dtype(t.dtype(), lo, "clamp");
    const dtype ht = ops::weak_scalar_dtype(t.dtype(), hi, "clamp");
    const dtype dt = clamp_dtype(t.dtype(), lt, ht);
    if (t.numel() == 0) return ops::new_output(t.shape(), dt, MEMRESOURCE_CPU, {&t});
    return ops::run_ternary(ternary_op::clamp, dt, t.shape(), t, {lo, lt}, {hi, ht}, {&t});
}

tensor clamp(const tensor& t, const tensor& lo, const tensor& hi) {
    if (autograd::needs_record(t, lo, hi)) [[unlikely]]
        return autograd::clamp_recorded(t, lo, hi);
    ops::check_defined(t, "clamp", "input");
    ops::check_defined(lo, "clamp", "lower bound");
    ops::check_defined(hi, "clamp", "upper bound");
    const dtype dt = clamp_dtype(t.dtype(), lo.dtype(), hi.dtype());
    const shape_t shape = ops::broadcast_all("clamp", {&t.shape(), &lo.shape(), &hi.shape()});
    if (numel_of(shape) == 0) return ops::new_output(shape, dt, MEMRESOURCE_CPU, {&t, &lo, &hi});
    return ops::run_ternary(ternary_op::clamp, dt, shape, t, lo, hi, {&t, &lo, &hi});
}

void clamp_inplace(const tensor& t, const scalar& lo, const scalar& hi) {
    ops::check_defined(t, "clamp", "target");
    const dtype lt = ops::weak_scalar_dtype(t.dtype(), lo, "clamp");
    const dtype ht = ops::weak_scalar_dtype(t.dtype(), hi, "clamp");
    const dtype dt = clamp_dtype(t.dtype(), lt, ht);
    ops::check_inplace_cast(dt, t.dtype(), "clamp");
    ops::check_writable(t, "clamp");
    autograd::check_inplace("clamp", t);
    if (t.numel() == 0) return;
    ops::run_ternary_into(ternary_op::clamp, dt, t, {lo, lt}, {hi, ht});
}

} // namespace isthmus
