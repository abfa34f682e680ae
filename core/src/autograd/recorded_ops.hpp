// The recorded forms of the differentiable ops, called by the op layer when an operand needs grad.
#pragma once

#include "isthmus/autograd.hpp"
#include "isthmus/ops/elementwise.hpp"
#include "isthmus/ops/indexing.hpp"
#include "isthmus/ops/reduce.hpp"

#include <optional>
#include <utility>

namespace isthmus::autograd {

// Note [recording at the op layer]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Each differentiable entry point of the op layer (ops/*.cpp, tensor_views.cpp) starts with
//   if (autograd::needs_record(a, b)) [[unlikely]] return autograd::binary_recorded(op, a, b);
// one pointer test per operand on the hot path. The recorded form runs the same entry point again
// under no_grad_guard (so whatever ops it is built from record nothing), then records one node
// with the op's derivative (the formulas of Note [derivatives in the op table], or those of
// derivatives_*.cpp for reductions, linear algebra and shapes). The forward therefore runs on
// whatever backend holds the data, and so does the backward, which is written in ops.

tensor unary_recorded(unary_op op, const tensor& a);
tensor binary_recorded(binary_op op, const tensor& a, const tensor& b);
tensor binary_recorded(binary_op op, const tensor& a, const scalar& b);
tensor binary_recorded(binary_op op, const scalar& a, const tensor& b);
tensor where_recorded(const tensor& cond, const tensor* a, const scalar* as, const tensor* b,
                      const scalar* bs);
tensor clamp_recorded(const tensor& t, const scalar& lo, const scalar& hi);
tensor clamp_recorded(const tensor& t, const tensor& lo, const tensor& hi);
tensor cast_recorded(const tensor& t, dtype dt);

/// The reductions: sum, prod, mean, var, std, min, max (`ddof` for var and std).
enum class reduction { sum, prod, mean, var, std, min, max };
tensor reduce_recorded(reduction kind, const tensor& t, const reduce_axes& axes, bool keepdims,
                       int64_t ddof = 0);
tensor cumsum_recorded(const tensor& t, std::optional<int64_t> axis);
tensor cumprod_recorded(const tensor& t, std::optional<int64_t> axis);

tensor matmul_recorded(const tensor& a, const tensor& b);
tensor dot_recorded(const tensor& a, const tensor& b);
tensor concat_recorded(const std::vector<tensor>& ts, int64_t axis, bool stack);
tensor copy_recorded(const char* name, const tensor& t, const tensor& out);
/// t[items] with integer or boolean arrays (See Note [array indexing's derivative]).
tensor index_recorded(const tensor& t, const std::vector<index_item>& items);
/// t's flat positions, an int64 tensor of t's shape on the CPU (the ids of a gather).
tensor positions_of(const tensor& t);
/// Records y, gathered from t at flat positions ids (y's shape), with a scatter-add gradient.
void record_gather(const char* name, const tensor& t, const tensor& y, const tensor& ids);

/// An op that only moves elements, each element of y = f(t) one element of t (array indexing,
/// pad's copied borders): recorded with the gradient of a gather (See Note [array indexing's
/// derivative]); f runs twice, on t and on t's positions.
template <typename F>
tensor gather_recorded(const char* name, const tensor& t, F&& f) {
    tensor y, ids;
    {
        no_grad_guard off;
        y = f(t);
        ids = f(positions_of(t));
    }
    record_gather(name, t, y, ids);
    return y;
}

/// True when one of the tensors of a list needs recording (a pointer test each while none does).
inline bool needs_record_list(const std::vector<tensor>& ts) noexcept {
    bool any = false;
    for (const tensor& t : ts) any = any || t.has_autograd();
    if (!any) return false;
    for (const tensor& t : ts)
        if (any_requires_grad({&t})) return true;
    return false;
}

/// Runs `f` without recording and marks its result as having no derivative (for ops listed as
/// not differentiable): backward through it raises runtime_error naming `name`.
template <typename F>
tensor refuse_recorded(const char* name, std::initializer_list<const tensor*> inputs, F&& f) {
    tensor y;
    {
        no_grad_guard off;
        y = std::forward<F>(f)();
    }
    record_not_differentiable(name, inputs, y);
    return y;
}

} // namespace isthmus::autograd
