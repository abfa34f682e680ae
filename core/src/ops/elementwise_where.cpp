// where(cond, a, b) and clamp(t, lo, hi): ternary elementwise ops with broadcasting.
#include "ops/elementwise_host.hpp"

namespace isthmus {

namespace {

using ops::host_operand;

tensor run_where(const tensor& cond, const shape_t& shape, dtype dt, const host_operand& a,
                 const host_operand& b, std::initializer_list<const tensor*> inputs) {
    tensor out = ops::new_output(shape, dt, MEMRESOURCE_CPU, inputs);
    if (out.numel() == 0) return out;
    const host_operand c(cond, shape);
    const ops::host_lock w(out, lock_mode::write);
    cpu::where(shape, {w.data(), dt, &out.strides()}, c.get(), a.get(), b.get());
    return out;
}

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
    ops::check_defined(cond, "where", "condition");
    ops::check_defined(a, "where", "second");
    ops::check_defined(b, "where", "third");
    const shape_t shape = ops::broadcast_all("where", {&cond.shape(), &a.shape(), &b.shape()});
    const resource_id where = ops::elementwise_device({&cond, &a, &b});
    const dtype dt = promote_types(a.dtype(), b.dtype());
    if (numel_of(shape) == 0) return tensor::empty(shape, dt, MEMRESOURCE_CPU);
    if (tensor out; ops::device_ternary(where, backend::ternary_op::where, dt, shape, {&cond}, {&a},
                                        {&b}, out, false, {&a, &b, &cond}))
        return out;
    return run_where(cond, shape, dt, host_operand(a, shape), host_operand(b, shape),
                     {&a, &b, &cond});
}

tensor where(const tensor& cond, const tensor& a, const scalar& b) {
    ops::check_defined(cond, "where", "condition");
    ops::check_defined(a, "where", "second");
    const shape_t shape = ops::broadcast_all("where", {&cond.shape(), &a.shape()});
    const resource_id where = ops::elementwise_device({&cond, &a});
    const dtype bt = ops::weak_scalar_dtype(a.dtype(), b, "where");
    const dtype dt = promote_types(a.dtype(), bt);
    if (numel_of(shape) == 0) return tensor::empty(shape, dt, MEMRESOURCE_CPU);
    if (tensor out; ops::device_ternary(where, backend::ternary_op::where, dt, shape, {&cond}, {&a},
                                        {nullptr, &b}, out, false, {&a, &cond}))
        return out;
    return run_where(cond, shape, dt, host_operand(a, shape), host_operand(b, bt, shape),
                     {&a, &cond});
}

tensor where(const tensor& cond, const scalar& a, const tensor& b) {
    ops::check_defined(cond, "where", "condition");
    ops::check_defined(b, "where", "third");
    const shape_t shape = ops::broadcast_all("where", {&cond.shape(), &b.shape()});
    const resource_id where = ops::elementwise_device({&cond, &b});
    const dtype at = ops::weak_scalar_dtype(b.dtype(), a, "where");
    const dtype dt = promote_types(at, b.dtype());
    if (numel_of(shape) == 0) return tensor::empty(shape, dt, MEMRESOURCE_CPU);
    if (tensor out; ops::device_ternary(where, backend::ternary_op::where, dt, shape, {&cond},
                                        {nullptr, &a}, {&b}, out, false, {&b, &cond}))
        return out;
    return run_where(cond, shape, dt, host_operand(a, at, shape), host_operand(b, shape),
                     {&b, &cond});
}

tensor where(const tensor& cond, const scalar& a, const scalar& b) {
    ops::check_defined(cond, "where", "condition");
    const resource_id where = ops::elementwise_device({&cond});
    const dtype at = ops::default_scalar_dtype(a), bt = ops::default_scalar_dtype(b);
    const dtype dt = promote_types(at, bt);
    if (cond.numel() == 0) return tensor::empty(cond.shape(), dt, MEMRESOURCE_CPU);
    if (tensor out; ops::device_ternary(where, backend::ternary_op::where, dt, cond.shape(),
                                        {&cond}, {nullptr, &a}, {nullptr, &b}, out, false, {&cond}))
        return out;
    return run_where(cond, cond.shape(), dt, host_operand(a, at, cond.shape()),
                     host_operand(b, bt, cond.shape()), {&cond});
}

tensor clamp(const tensor& t, const scalar& lo, const scalar& hi) {
    ops::check_defined(t, "clamp", "input");
    const dtype lt = ops::weak_scalar_dtype(t.dtype(), lo, "clamp");
    const dtype ht = ops::weak_scalar_dtype(t.dtype(), hi, "clamp");
    const dtype dt = clamp_dtype(t.dtype(), lt, ht);
    const resource_id where = ops::elementwise_device({&t});
    if (t.numel() > 0)
        if (tensor out; ops::device_ternary(where, backend::ternary_op::clamp, dt, t.shape(), {&t},
                                            {nullptr, &lo}, {nullptr, &hi}, out, false, {&t}))
            return out;
    tensor out = ops::new_output(t.shape(), dt, MEMRESOURCE_CPU, {&t});
    if (out.numel() == 0) return out;
    const host_operand x(t, t.shape()), l(lo, lt, t.shape()), h(hi, ht, t.shape());
    const ops::host_lock w(out, lock_mode::write);
    cpu::clamp(dt, t.shape(), {w.data(), dt, &out.strides()}, x.get(), l.get(), h.get());
    return out;
}

tensor clamp(const tensor& t, const tensor& lo, const tensor& hi) {
    ops::check_defined(t, "clamp", "input");
    ops::check_defined(lo, "clamp", "lower bound");
    ops::check_defined(hi, "clamp", "upper bound");
    const dtype dt = clamp_dtype(t.dtype(), lo.dtype(), hi.dtype());
    const shape_t shape = ops::broadcast_all("clamp", {&t.shape(), &lo.shape(), &hi.shape()});
    const resource_id where = ops::elementwise_device({&t, &lo, &hi});
    if (numel_of(shape) > 0)
        if (tensor out; ops::device_ternary(where, backend::ternary_op::clamp, dt, shape, {&t},
                                            {&lo}, {&hi}, out, false, {&t, &lo, &hi}))
            return out;
    tensor out = ops::new_output(shape, dt, MEMRESOURCE_CPU, {&t, &lo, &hi});
    if (out.numel() == 0) return out;
    const host_operand x(t, shape), l(lo, shape), h(hi, shape);
    const ops::host_lock w(out, lock_mode::write);
    cpu::clamp(dt, shape, {w.data(), dt, &out.strides()}, x.get(), l.get(), h.get());
    return out;
}

void clamp_inplace(const tensor& t, const scalar& lo, const scalar& hi) {
    ops::check_defined(t, "clamp", "target");
    const dtype lt = ops::weak_scalar_dtype(t.dtype(), lo, "clamp");
    const dtype ht = ops::weak_scalar_dtype(t.dtype(), hi, "clamp");
    const dtype dt = clamp_dtype(t.dtype(), lt, ht);
    ops::check_inplace_cast(dt, t.dtype(), "clamp");
    ops::check_writable(t, "clamp");
    const resource_id where = ops::elementwise_device({&t});
    if (t.numel() == 0) return;
    if (tensor target = t;
        ops::device_ternary(where, backend::ternary_op::clamp, dt, t.shape(), {&t}, {nullptr, &lo},
                            {nullptr, &hi}, target, true, {&t}))
        return;
    const host_operand l(lo, lt, t.shape()), h(hi, ht, t.shape());
    const ops::host_lock rw(t, lock_mode::readwrite);
    const cpu::operand x{rw.data(), t.dtype(), &t.strides()};
    cpu::clamp(dt, t.shape(), x, x, l.get(), h.get());
}

} // namespace isthmus
