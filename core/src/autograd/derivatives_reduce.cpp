// Derivatives of the reductions: sum, mean, prod, var, std, min, max, cumsum and cumprod.
#include "autograd/node_impl.hpp"
#include "autograd/recorded_ops.hpp"

#include "isthmus/error.hpp"
#include "isthmus/ops/creation.hpp"
#include "isthmus/ops/shape.hpp"

#include <algorithm>

namespace isthmus::autograd {

namespace {

/// The reduced axes, wrapped and sorted.
shape_t axes_of(const reduce_axes& axes, int64_t rank) {
    shape_t r;
    if (axes.all()) {
        for (int64_t i = 0; i < rank; ++i) r.push_back(i);
    } else {
        for (int64_t a : axes.list()) r.push_back(wrap_axis(a, rank));
    }
    std::sort(r.begin(), r.end());
    return r;
}

/// A reduction's output gradient (or value) reshaped to keepdims form, so it broadcasts against
/// the input.
tensor with_kept_dims(const tensor& g, const shape_t& in_shape, const shape_t& axes,
                      bool keepdims) {
    if (keepdims) return g;
    shape_t kept = in_shape;
    for (int64_t a : axes) kept[static_cast<size_t>(a)] = 1;
    return g.reshape(kept);
}

int64_t count_of(const shape_t& in_shape, const shape_t& axes) {
    int64_t n = 1;
    for (int64_t a : axes) n *= in_shape[static_cast<size_t>(a)];
    return n;
}

const char* name_of(reduction kind) {
    switch (kind) {
    case reduction::sum:
        return "sum";
    case reduction::prod:
        return "prod";
    case reduction::mean:
        return "mean";
    case reduction::var:
        return "var";
    case reduction::std:
        return "std";
    case reduction::min:
        return "min";
    case reduction::max:
        return "max";
    }
    return "?";
}

tensor run(reduction kind, const tensor& t, const reduce_axes& axes, bool keepdims, int64_t ddof) {
    switch (kind) {
    case reduction::sum:
        return sum(t, axes, keepdims);
    case reduction::prod:
        return prod(t, axes, keepdims);
    case reduction::mean:
        return mean(t, axes, keepdims);
    case reduction::var:
        return var(t, axes, keepdims, ddof);
    case reduction::std:
        return std_(t, axes, keepdims, ddof);
    case reduction::min:
        return min(t, axes, keepdims);
    case reduction::max:
        return max(t, axes, keepdims);
    }
    ISTHMUS_THROW(internal_error, "reduce_recorded: unknown reduction");
}

} // namespace

tensor reduce_recorded(reduction kind, const tensor& t, const reduce_axes& axes, bool keepdims,
                       int64_t ddof) {
    tensor y;
    {
        no_grad_guard off;
        y = run(kind, t, axes, keepdims, ddof);
    }
    const shape_t ax = axes_of(axes, t.dim());
    const shape_t in_shape = t.shape();
    const auto n = static_cast<double>(count_of(in_shape, ax));
    const bool saves_x = kind != reduction::sum && kind != reduction::mean;
    const bool saves_y = kind == reduction::prod || kind == reduction::std ||
                         kind == reduction::min || kind == reduction::max;
    record(
        name_of(kind), {&t}, y, {{saves_x ? t : tensor(), false}, {saves_y ? y : tensor(), true}},
        [kind, ax, in_shape, keepdims, n, ddof](const tensor& g, const tensor_list& s) {
            const tensor& x = s[0];
            const tensor gk = with_kept_dims(g, in_shape, ax, keepdims);
            switch (kind) {
            case reduction::sum:
                return tensor_list{gk.expand(in_shape)};
            case reduction::mean:
                return tensor_list{div(gk, n).expand(in_shape)};
            case reduction::var: {
                const tensor centred = sub(x, mean(x, ax, true));
                return tensor_list{mul(gk, mul(centred, 2.0 / (n - static_cast<double>(ddof))))};
            }
            case reduction::std: {
                const tensor centred = sub(x, mean(x, ax, true));
                const tensor yk = with_kept_dims(s[1], in_shape, ax, keepdims);
                return tensor_list{div(mul(gk, centred), mul(yk, n - static_cast<double>(ddof)))};
            }
            case reduction::min:
            case reduction::max: {
                // Ties share the gradient evenly (torch's amax/amin rule).
                const tensor yk = with_kept_dims(s[1], in_shape, ax, keepdims);
                const tensor mask = cast(eq(x, yk), g.dtype());
                return tensor_list{mul(div(gk, sum(mask, ax, true)), mask)};
            }
            case reduction::prod: {
                // d/dx_i prod = prod of the others: y / x_i where x_i != 0; where x_i == 0, the
                // product of the nonzero others when x_i is the only zero, else 0.
                const tensor yk = with_kept_dims(s[1], in_shape, ax, keepdims);
                const tensor zero = eq(x, 0.0);
                const tensor others = prod(where(zero, 1.0, x), ax, true);
                const tensor zeros = sum(zero, ax, true);
                const tensor at_zero = where(eq(zeros, 1), others, 0.0);
                return tensor_list{mul(gk, where(zero, at_zero, div(yk, where(zero, 1.0, x))))};
            }
            }
            ISTHMUS_THROW(internal_error, "reduction backward: unknown reduction");
        });
    return y;
}

tensor cumsum_recorded(const tensor& t, std::optional<int64_t> axis) {
    tensor y;
    {
        no_grad_guard off;
        y = axis ? cumsum(t, *axis) : cumsum(t);
    }
    const shape_t in_shape = t.shape();
    const int64_t ax = axis ? wrap_axis(*axis, t.dim()) : 0;
    const bool flat = !axis;
    // The gradient of a running sum is the running sum from the end: flip, cumsum, flip.
    record("cumsum", {&t}, y, {}, [in_shape, ax, flat](const tensor& g, const tensor_list&) {
        const tensor r = flip(cumsum(flip(g, {ax}), ax), {ax});
        return tensor_list{flat ? r.reshape(in_shape) : r};
    });
    return y;
}

// Note [cumprod's derivative]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// y_i = x_0 x_1 ... x_i along the axis, so dL/dx_j = sum over i >= j of g_i times the product of
// x_0..x_i without x_j. Before the slice's first zero, that product is y_i / x_j, so the gradient
// is the running sum from the end of g*y, divided by x_j (terms past the zero are 0 either way).
// At the first zero z it is the running sum from the end of g*y', with y' the running product of
// x with x_z replaced by 1 (exact: no division by zero). After it every product holds x_z = 0: 0.
// Written in ops (where, cumsum, flip, cumprod), so it runs on every backend and a second
// derivative goes through the same rules.
tensor cumprod_recorded(const tensor& t, std::optional<int64_t> axis) {
    tensor y;
    {
        no_grad_guard off;
        y = axis ? cumprod(t, *axis) : cumprod(t);
    }
    const shape_t in_shape = t.shape();
    const int64_t ax = axis ? wrap_axis(*axis, t.dim()) : 0;
    const bool flat = !axis;
    record("cumprod", {&t}, y, {{t, false}, {y, true}},
           [in_shape, ax, flat](const tensor& g, const tensor_list& saved) {
               const tensor x = flat ? saved[0].reshape({saved[0].numel()}) : saved[0];
               const tensor& yv = saved[1];
               auto from_end = [ax](const tensor& v) {
                   return flip(cumsum(flip(v, {ax}), ax), {ax});
               };
               const tensor zero = eq(x, 0.0);
               const tensor zeros_so_far = cumsum(zero, ax);
               const tensor before = eq(zeros_so_far, 0);                        // no zero yet
               const tensor first_zero = logical_and(zero, eq(zeros_so_far, 1)); // the first
               const tensor at_before = div(from_end(mul(g, yv)), where(before, x, 1.0));
               const tensor y_skip = cumprod(where(first_zero, 1.0, x), ax);
               const tensor at_zero = from_end(mul(g, y_skip));
               const tensor r = where(before, at_before, where(first_zero, at_zero, 0.0));
               return tensor_list{flat ? r.reshape(in_shape) : r};
           });
    return y;
}

} // namespace isthmus::autograd
