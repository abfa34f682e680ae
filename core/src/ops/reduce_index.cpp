// Index-aware reduction ops: argmin/argmax (flat or along an axis) and cumsum/cumprod.
#include "isthmus/ops/reduce.hpp"

#include "autograd/recorded_ops.hpp"
#include "ops/dispatch.hpp"
#include "ops/reduce_types.hpp"

namespace isthmus {

namespace {

tensor arg_along(const char* op, bool is_max, const tensor& t, int64_t axis, bool keepdims) {
    ISTHMUS_CHECK(t.defined(), value_error, op, ": the input tensor is undefined");
    const int64_t rank = t.dim();
    ISTHMUS_CHECK(axis >= -rank && axis < rank, index_error, op, ": axis ", axis,
                  " is out of range for a tensor of rank ", rank, " (shape ", shape_str(t.shape()),
                  ")");
    const int64_t a = axis < 0 ? axis + rank : axis;
    ISTHMUS_CHECK(t.shape()[static_cast<size_t>(a)] > 0, value_error, op, ": attempt to get ", op,
                  " of an empty sequence (axis ", axis, " of shape ", shape_str(t.shape()), ")");
    shape_t kept, with_one = t.shape();
    for (int64_t d = 0; d < rank; ++d)
        if (d != a) kept.push_back(t.shape()[static_cast<size_t>(d)]);
    with_one[static_cast<size_t>(a)] = 1;
    std::vector<bool> reduced(static_cast<size_t>(rank), false);
    reduced[static_cast<size_t>(a)] = true;
    const tensor out =
        ops::run_reduce(is_max ? backend::reduce_kind::argmax : backend::reduce_kind::argmin, t,
                        reduced, kept, dtype::int64);
    return keepdims ? out.view(with_one) : out;
}

tensor arg_flat(const char* op, bool is_max, const tensor& t) {
    ISTHMUS_CHECK(t.defined(), value_error, op, ": the input tensor is undefined");
    ISTHMUS_CHECK(t.numel() > 0, value_error, op, ": attempt to get ", op,
                  " of an empty sequence (shape ", shape_str(t.shape()), ")");
    // Flat indices count in C order, so a non-contiguous input is copied first.
    return arg_along(op, is_max, t.contiguous().view({t.numel()}), 0, false);
}

// Note [cumulative dtypes]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// The input is converted to the compute dtype (int64 for bool and signed integers, uint64 for
// unsigned, float32 for float16/bfloat16, else its own) and made contiguous, so the kernel exists
// for six dtypes only; half results are cast back.
tensor cumulative(const char* op, bool is_prod, const tensor& t, int64_t axis) {
    ISTHMUS_CHECK(t.defined(), value_error, op, ": the input tensor is undefined");
    const int64_t rank = t.dim();
    ISTHMUS_CHECK(axis >= -rank && axis < rank, index_error, op, ": axis ", axis,
                  " is out of range for a tensor of rank ", rank, " (shape ", shape_str(t.shape()),
                  ")");
    const dtype result = ops::cumulative_result_dtype(t.dtype());
    const dtype work = is_floating(result) && itemsize(result) == 2 ? dtype::float32 : result;
    const tensor x = t.to(work, false).contiguous();
    const int64_t a = axis < 0 ? axis + rank : axis;
    const tensor out = ops::run_cumulative(is_prod, x, a);
    return work == result ? out : out.to(result);
}

} // namespace

tensor argmin(const tensor& t) {
    return arg_flat("argmin", false, t);
}

tensor argmin(const tensor& t, int64_t axis, bool keepdims) {
    return arg_along("argmin", false, t, axis, keepdims);
}

tensor argmax(const tensor& t) {
    return arg_flat("argmax", true, t);
}

tensor argmax(const tensor& t, int64_t axis, bool keepdims) {
    return arg_along("argmax", true, t, axis, keepdims);
}

tensor cumsum(const tensor& t) {
    ISTHMUS_CHECK(t.defined(), value_error, "cumsum: the input tensor is undefined");
    // See Note [recording at the op layer].
    if (autograd::needs_record(t)) [[unlikely]]
        return autograd::cumsum_recorded(t, std::nullopt);
    return cumulative("cumsum", false, t.reshape({t.numel()}), 0);
}

tensor cumsum(const tensor& t, int64_t axis) {
    if (autograd::needs_record(t)) [[unlikely]]
        return autograd::cumsum_recorded(t, axis);
    return cumulative("cumsum", false, t, axis);
}

tensor cumprod(const tensor& t) {
    ISTHMUS_CHECK(t.defined(), value_error, "cumprod: the input tensor is undefined");
    if (autograd::needs_record(t)) [[unlikely]] // See Note [cumprod's derivative]
        return autograd::cumprod_recorded(t, std::nullopt);
    return cumulative("cumprod", true, t.reshape({t.numel()}), 0);
}

tensor cumprod(const tensor& t, int64_t axis) {
    if (autograd::needs_record(t)) [[unlikely]]
        return autograd::cumprod_recorded(t, axis);
    return cumulative("cumprod", true, t, axis);
}

} // namespace isthmus
