// Binary elementwise ops: shapes, dtypes and checks, then the one dispatch (ops/dispatch.hpp).
#include "autograd/recorded_ops.hpp"
#include "isthmus/ops/creation.hpp"
#include "isthmus/ops/reduce.hpp"
#include "ops/dispatch.hpp"

#include <optional>

namespace isthmus {

namespace {

// NumPy refuses integer bases with negative integer exponents (the result is not an integer);
// the exponents are checked, wherever they are, before anything is written.
void check_int_pow(const ops::binary_signature& sig, const tensor& exponent) {
    if (sig.op != binary_op::pow || !is_integer(sig.compute) || !is_signed_int(exponent.dtype()))
        return;
    const bool negative =
        exponent.numel() > 0 && any(binary(binary_op::lt, exponent, scalar(0))).item<bool>();
    ISTHMUS_CHECK(!negative, value_error,
                  "pow: integers to negative integer powers are not allowed (exponent dtype ",
                  exponent.dtype(), "); use a float base");
}

void check_int_pow(const ops::binary_signature& sig, const scalar& exponent) {
    if (sig.op != binary_op::pow || !is_integer(sig.compute) || !is_signed_int(exponent.type()))
        return;
    ISTHMUS_CHECK(exponent.to<int64_t>() >= 0, value_error,
                  "pow: integers to negative integer powers are not allowed (exponent ",
                  exponent.to<int64_t>(), "); use a float base");
}

void check_inplace_shape(const tensor& target, const shape_t& other, std::string_view what) {
    if (other == target.shape()) return;
    const shape_t shape = ops::broadcast_all(what, {&target.shape(), &other});
    ISTHMUS_CHECK(shape == target.shape(), value_error, what, ": in place, an operand of shape ",
                  shape_str(other), " broadcasts the target of shape ", shape_str(target.shape()),
                  " to ", shape_str(shape), "; the target cannot grow");
}

// Note [comparisons with out-of-range integers]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// NumPy 2 compares an integer array with a Python integer that its dtype cannot hold by value
// (uint8 == -1 is all False, int8 < 300 all True) where arithmetic raises OverflowError
// (Note [weak integer range]): every element lies on one side of such a number, so the result is
// one value. `scalar_left`: the scalar is the left operand (-1 < u8). An empty optional when the
// rule does not apply.
std::optional<tensor> out_of_range_comparison(binary_op op, const tensor& t, const scalar& s,
                                              bool scalar_left) {
    const binary_rule r = rule(op);
    const dtype td = t.dtype();
    if ((r != binary_rule::equality && r != binary_rule::order) || !is_integer(td) || is_bool(td) ||
        !is_integer(s.type()) || is_bool(s.type()) || s.fits_integer(td))
        return std::nullopt;
    const bool below = !is_unsigned_int(s.type()) && s.to<int64_t>() < 0; // else above all
    const bool left_less = below == scalar_left; // `left < right` for every element
    bool v = false;
    switch (op) {
    case binary_op::eq:
        v = false;
        break;
    case binary_op::ne:
        v = true;
        break;
    case binary_op::lt:
    case binary_op::le:
        v = left_less;
        break;
    default: // gt, ge
        v = !left_less;
        break;
    }
    return full(t.shape(), scalar(v), dtype::bool_, t.numel() ? t.location() : MEMRESOURCE_CPU);
}

} // namespace

std::string_view name(binary_op op) noexcept {
    switch (op) {
#define ISTHMUS_NAME(n, ...)                                                                       \
    case binary_op::n:                                                                             \
        return #n;
        ISTHMUS_BINARY_OPS(ISTHMUS_NAME)
#undef ISTHMUS_NAME
    }
    return "?";
}

dtype result_type(binary_op op, dtype a, dtype b) {
    return ops::binary_types(op, a, b).result;
}

tensor binary(binary_op op, const tensor& a, const tensor& b) {
    // See Note [recording at the op layer].
    if (autograd::needs_record(a, b)) [[unlikely]]
        return autograd::binary_recorded(op, a, b);
    const std::string_view what = name(op);
    ops::check_defined(a, what, "first");
    ops::check_defined(b, what, "second");
    const auto sig = ops::binary_types(op, a.dtype(), b.dtype());
    shape_t broadcast;
    const bool same = ops::same_shape(a.shape(), b.shape());
    if (!same) broadcast = ops::broadcast_all(what, {&a.shape(), &b.shape()});
    const shape_t& shape = same ? a.shape() : broadcast;
    check_int_pow(sig, b);
    if (numel_of(shape) == 0) return tensor::empty(shape, sig.result, MEMRESOURCE_CPU);
    return ops::run_binary(sig, shape, a, b, {&a, &b});
}

tensor binary(binary_op op, const tensor& a, const scalar& b) {
    if (autograd::needs_record(a)) [[unlikely]]
        return autograd::binary_recorded(op, a, b);
    const std::string_view what = name(op);
    ops::check_defined(a, what, "first");
    if (auto r = out_of_range_comparison(op, a, b, false)) return std::move(*r);
    const dtype bt = ops::weak_scalar_dtype(a.dtype(), b, what);
    const auto sig = ops::binary_types(op, a.dtype(), bt);
    check_int_pow(sig, b);
    if (a.numel() == 0) return tensor::empty(a.shape(), sig.result, MEMRESOURCE_CPU);
    return ops::run_binary(sig, a.shape(), a, {b, bt}, {&a});
}

tensor binary(binary_op op, const scalar& a, const tensor& b) {
    if (autograd::needs_record(b)) [[unlikely]]
        return autograd::binary_recorded(op, a, b);
    const std::string_view what = name(op);
    ops::check_defined(b, what, "second");
    if (auto r = out_of_range_comparison(op, b, a, true)) return std::move(*r);
    const dtype at = ops::weak_scalar_dtype(b.dtype(), a, what);
    const auto sig = ops::binary_types(op, at, b.dtype());
    check_int_pow(sig, b);
    if (b.numel() == 0) return tensor::empty(b.shape(), sig.result, MEMRESOURCE_CPU);
    return ops::run_binary(sig, b.shape(), {a, at}, b, {&b});
}

void binary_inplace(binary_op op, const tensor& target, const tensor& other) {
    const std::string_view what = name(op);
    ops::check_defined(target, what, "target");
    ops::check_defined(other, what, "second");
    const auto sig = ops::binary_types(op, target.dtype(), other.dtype());
    ops::check_inplace_cast(sig.result, target.dtype(), what);
    check_inplace_shape(target, other.shape(), what);
    ops::check_writable(target, what);
    autograd::check_inplace(what.data(), target, &other);
    check_int_pow(sig, other);
    if (target.numel() == 0) return;
    // Note [in-place aliasing]
    // ~~~~~~~~~~~~~~~~~~~~~~~~
    // An operand that is exactly the target's view is read element by element before each write,
    // which is safe; any other overlap (a += a.t(), a += a[0]) reads from a copy, as NumPy does.
    if (ops::overlaps_differently(target, other)) {
        const tensor copy = other.clone();
        ops::run_binary_into(sig, target, copy);
        return;
    }
    ops::run_binary_into(sig, target, other);
}

void binary_inplace(binary_op op, const tensor& target, const scalar& other) {
    const std::string_view what = name(op);
    ops::check_defined(target, what, "target");
    const dtype bt = ops::weak_scalar_dtype(target.dtype(), other, what);
    const auto sig = ops::binary_types(op, target.dtype(), bt);
    ops::check_inplace_cast(sig.result, target.dtype(), what);
    ops::check_writable(target, what);
    autograd::check_inplace(what.data(), target);
    check_int_pow(sig, other);
    if (target.numel() == 0) return;
    ops::run_binary_into(sig, target, {other, bt});
}

} // namespace isthmus
