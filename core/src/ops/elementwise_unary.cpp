// Unary elementwise ops, casts and the complex parts (real/imag views).
#include "autograd/recorded_ops.hpp"
#include "isthmus/ops/creation.hpp"
#include "ops/dispatch.hpp"

namespace isthmus {

namespace {

// The real (imag = false) or imaginary part of a complex tensor as a strided view of the same
// storage: a complex element is two reals, so strides and offset double.
tensor part_view(const tensor& t, bool imag) {
    shape_t strides = t.strides();
    for (auto& s : strides) s *= 2;
    return tensor::from_storage(t.storage(), real_dtype(t.dtype()), t.shape(), std::move(strides),
                                t.offset() * 2 + (imag ? 1 : 0));
}

// A constant result (isnan of an integer, ...), made on the resource the op runs on.
tensor filled(const shape_t& shape, dtype dt, double v, resource_id where) {
    return full(shape, scalar(v), dt, where);
}

} // namespace

std::string_view name(unary_op op) noexcept {
    switch (op) {
#define ISTHMUS_NAME(n, ...)                                                                       \
    case unary_op::n:                                                                              \
        return #n;
        ISTHMUS_UNARY_OPS(ISTHMUS_NAME)
        ISTHMUS_UNARY_PART_OPS(ISTHMUS_NAME)
#undef ISTHMUS_NAME
    }
    return "?";
}

dtype result_type(unary_op op, dtype a) {
    return ops::unary_types(op, a).result;
}

tensor unary(unary_op op, const tensor& a) {
    // See Note [recording at the op layer].
    if (autograd::needs_record(a)) [[unlikely]]
        return autograd::unary_recorded(op, a);
    using ops::unary_action;
    const std::string_view what = name(op);
    ops::check_defined(a, what, "input");
    const auto sig = ops::unary_types(op, a.dtype());
    const resource_id where = ops::pick_resource({&a});
    switch (sig.action) {
    case unary_action::copy:
        return a.to(sig.result);
    case unary_action::fill_false:
        return filled(a.shape(), sig.result, 0.0, where);
    case unary_action::fill_true:
        return filled(a.shape(), sig.result, 1.0, where);
    case unary_action::zeros:
        return filled(a.shape(), sig.result, 0.0, where);
    case unary_action::real_part:
        return part_view(a, false).clone();
    case unary_action::imag_part:
        return part_view(a, true).clone();
    case unary_action::kernel:
        break;
    }
    if (a.numel() == 0) return ops::new_output(a.shape(), sig.result, MEMRESOURCE_CPU, {&a});
    return ops::run_unary(op, sig.compute, sig.result, a);
}

void unary_inplace(unary_op op, const tensor& target) {
    using ops::unary_action;
    const std::string_view what = name(op);
    ops::check_defined(target, what, "target");
    const auto sig = ops::unary_types(op, target.dtype());
    ops::check_inplace_cast(sig.result, target.dtype(), what);
    ops::check_writable(target, what);
    autograd::check_inplace(what.data(), target);
    if (target.numel() == 0) return;
    tensor t = target; // a handle onto the same view (fill and copy_from are non-const)
    switch (sig.action) {
    case unary_action::copy:
        return;
    case unary_action::fill_false:
    case unary_action::zeros:
        t.fill(0.0);
        return;
    case unary_action::fill_true:
        t.fill(1.0);
        return;
    case unary_action::real_part:
        t.copy_from(part_view(target, false));
        return;
    case unary_action::imag_part:
        t.copy_from(part_view(target, true));
        return;
    case unary_action::kernel:
        break;
    }
    ops::run_unary_into(op, sig.compute, sig.result, target);
}

tensor cast(const tensor& t, dtype dt) {
    ops::check_defined(t, "cast", "input");
    if (autograd::needs_record(t)) [[unlikely]]
        return autograd::cast_recorded(t, dt);
    return t.to(dt);
}

tensor real(const tensor& t) {
    ops::check_defined(t, "real", "input");
    return is_complex(t.dtype()) ? part_view(t, false) : t;
}

tensor imag(const tensor& t) {
    ops::check_defined(t, "imag", "input");
    return is_complex(t.dtype()) ? part_view(t, true)
                                 : filled(t.shape(), t.dtype(), 0.0, ops::pick_resource({&t}));
}

} // namespace isthmus
