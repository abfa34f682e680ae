// Binary elementwise ops: shapes, dtypes, checks and output allocation, then the CPU kernels.
#include "ops/elementwise_host.hpp"

namespace isthmus {

namespace {

using ops::host_operand;

// NumPy refuses integer bases with negative integer exponents (the result is not an integer);
// the exponents are checked before anything is written.
void check_int_pow(const ops::binary_signature& sig, const tensor& exponent) {
    if (sig.op != binary_op::pow || !is_integer(sig.compute) || !is_signed_int(exponent.dtype()))
        return;
    bool negative;
    {
        const ops::host_lock r(exponent, lock_mode::read);
        negative =
            cpu::any_negative(exponent.shape(), {r.data(), exponent.dtype(), &exponent.strides()});
    }
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

// Allocates the result of `sig` over `shape` (laid out like the tensor inputs, see
// ops::new_output) and runs the kernel on the prepared operands.
tensor run_binary(const ops::binary_signature& sig, const shape_t& shape, const host_operand& a,
                  const host_operand& b, std::initializer_list<const tensor*> inputs) {
    tensor out = ops::new_output(shape, sig.result, MEMRESOURCE_CPU, inputs);
    if (out.numel() == 0) return out;
    const ops::host_lock w(out, lock_mode::write);
    cpu::binary(sig.op, sig.compute, shape, {w.data(), out.dtype(), &out.strides()}, a.get(),
                b.get());
    return out;
}

void check_inplace_shape(const tensor& target, const shape_t& other, std::string_view what) {
    if (other == target.shape()) return;
    const shape_t shape = ops::broadcast_all(what, {&target.shape(), &other});
    ISTHMUS_CHECK(shape == target.shape(), value_error, what, ": in place, an operand of shape ",
                  shape_str(other), " broadcasts the target of shape ", shape_str(target.shape()),
                  " to ", shape_str(shape), "; the target cannot grow");
}

// Runs `sig` into `target` (also the first input) with `b` as the second input.
void run_inplace(const ops::binary_signature& sig, const tensor& target, const host_operand& b) {
    const ops::host_lock rw(target, lock_mode::readwrite);
    const cpu::operand t{rw.data(), target.dtype(), &target.strides()};
    cpu::binary(sig.op, sig.compute, target.shape(), t, t, b.get());
}

} // namespace

std::string_view name(binary_op op) noexcept {
    switch (op) {
    case binary_op::add:
        return "add";
    case binary_op::sub:
        return "sub";
    case binary_op::mul:
        return "mul";
    case binary_op::div:
        return "div";
    case binary_op::floor_div:
        return "floor_div";
    case binary_op::mod:
        return "mod";
    case binary_op::pow:
        return "pow";
    case binary_op::maximum:
        return "maximum";
    case binary_op::minimum:
        return "minimum";
    case binary_op::atan2:
        return "atan2";
    case binary_op::eq:
        return "eq";
    case binary_op::ne:
        return "ne";
    case binary_op::lt:
        return "lt";
    case binary_op::le:
        return "le";
    case binary_op::gt:
        return "gt";
    case binary_op::ge:
        return "ge";
    case binary_op::logical_and:
        return "logical_and";
    case binary_op::logical_or:
        return "logical_or";
    case binary_op::logical_xor:
        return "logical_xor";
    case binary_op::bit_and:
        return "bit_and";
    case binary_op::bit_or:
        return "bit_or";
    case binary_op::bit_xor:
        return "bit_xor";
    case binary_op::shift_left:
        return "shift_left";
    case binary_op::shift_right:
        return "shift_right";
    }
    return "?";
}

dtype result_type(binary_op op, dtype a, dtype b) {
    return ops::binary_types(op, a, b).result;
}

tensor binary(binary_op op, const tensor& a, const tensor& b) {
    const std::string_view what = name(op);
    ops::check_defined(a, what, "first");
    ops::check_defined(b, what, "second");
    const auto sig = ops::binary_types(op, a.dtype(), b.dtype());
    shape_t broadcast;
    const bool same = a.shape() == b.shape();
    if (!same) broadcast = ops::broadcast_all(what, {&a.shape(), &b.shape()});
    const shape_t& shape = same ? a.shape() : broadcast;
    const resource_id where = ops::elementwise_device({&a, &b});
    check_int_pow(sig, b);
    if (numel_of(shape) == 0) return tensor::empty(shape, sig.result, MEMRESOURCE_CPU);
    if (tensor out; ops::device_binary(where, sig.op, sig.compute, sig.result, shape, {&a, nullptr},
                                       {&b, nullptr}, out, false))
        return out;
    return run_binary(sig, shape, host_operand(a, shape), host_operand(b, shape), {&a, &b});
}

tensor binary(binary_op op, const tensor& a, const scalar& b) {
    const std::string_view what = name(op);
    ops::check_defined(a, what, "first");
    const dtype bt = ops::weak_scalar_dtype(a.dtype(), b, what);
    const auto sig = ops::binary_types(op, a.dtype(), bt);
    const resource_id where = ops::elementwise_device({&a});
    check_int_pow(sig, b);
    if (a.numel() == 0) return tensor::empty(a.shape(), sig.result, MEMRESOURCE_CPU);
    if (tensor out; ops::device_binary(where, sig.op, sig.compute, sig.result, a.shape(),
                                       {&a, nullptr}, {nullptr, &b}, out, false))
        return out;
    return run_binary(sig, a.shape(), host_operand(a, a.shape()), host_operand(b, bt, a.shape()),
                      {&a});
}

tensor binary(binary_op op, const scalar& a, const tensor& b) {
    const std::string_view what = name(op);
    ops::check_defined(b, what, "second");
    const dtype at = ops::weak_scalar_dtype(b.dtype(), a, what);
    const auto sig = ops::binary_types(op, at, b.dtype());
    const resource_id where = ops::elementwise_device({&b});
    check_int_pow(sig, b);
    if (b.numel() == 0) return tensor::empty(b.shape(), sig.result, MEMRESOURCE_CPU);
    if (tensor out; ops::device_binary(where, sig.op, sig.compute, sig.result, b.shape(),
                                       {nullptr, &a}, {&b, nullptr}, out, false))
        return out;
    return run_binary(sig, b.shape(), host_operand(a, at, b.shape()), host_operand(b, b.shape()),
                      {&b});
}

void binary_inplace(binary_op op, const tensor& target, const tensor& other) {
    const std::string_view what = name(op);
    ops::check_defined(target, what, "target");
    ops::check_defined(other, what, "second");
    const auto sig = ops::binary_types(op, target.dtype(), other.dtype());
    ops::check_inplace_cast(sig.result, target.dtype(), what);
    check_inplace_shape(target, other.shape(), what);
    ops::check_writable(target, what);
    const resource_id where = ops::elementwise_device({&target, &other});
    check_int_pow(sig, other);
    if (target.numel() == 0) return;
    // Note [in-place aliasing]: an operand that is exactly the target's view is read element by
    // element before each write, which is safe; any other overlap (a += a.t(), a += a[0]) reads
    // from a copy, as NumPy does.
    tensor copy;
    if (ops::overlaps_differently(target, other)) copy = other.clone();
    if (tensor t = target;
        ops::device_binary(where, sig.op, sig.compute, sig.result, target.shape(),
                           {&target, nullptr}, {copy.defined() ? &copy : &other, nullptr}, t, true))
        return;
    run_inplace(sig, target, host_operand(copy.defined() ? copy : other, target.shape()));
}

void binary_inplace(binary_op op, const tensor& target, const scalar& other) {
    const std::string_view what = name(op);
    ops::check_defined(target, what, "target");
    const dtype bt = ops::weak_scalar_dtype(target.dtype(), other, what);
    const auto sig = ops::binary_types(op, target.dtype(), bt);
    ops::check_inplace_cast(sig.result, target.dtype(), what);
    ops::check_writable(target, what);
    const resource_id where = ops::elementwise_device({&target});
    check_int_pow(sig, other);
    if (target.numel() == 0) return;
    if (tensor t = target;
        ops::device_binary(where, sig.op, sig.compute, sig.result, target.shape(),
                           {&target, nullptr}, {nullptr, &other}, t, true))
        return;
    run_inplace(sig, target, host_operand(other, bt, target.shape()));
}

} // namespace isthmus
