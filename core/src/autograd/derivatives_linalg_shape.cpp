// Derivatives of matmul/dot and of concat (stack, split and flip are views, differentiated there).
#include "autograd/node_impl.hpp"
#include "autograd/recorded_ops.hpp"

#include "isthmus/error.hpp"
#include "isthmus/ops/linalg.hpp"
#include "isthmus/ops/shape.hpp"

namespace isthmus::autograd {

namespace {

/// matmul's gradients. 1-d operands are matrices of one row (a) or one column (b) as NumPy
/// treats them; batch dimensions broadcast, so the engine sums the gradients back to each
/// operand's batch shape.
tensor_list matmul_grads(const tensor& g, const tensor& a, const tensor& b, const shape_t& a_shape,
                         const shape_t& b_shape, bool need_a, bool need_b) {
    const bool a1 = a_shape.size() == 1, b1 = b_shape.size() == 1;
    tensor g2 = g;
    if (a1) g2 = g2.unsqueeze(b1 ? 0 : -2);
    if (b1) g2 = g2.unsqueeze(-1);
    tensor ga, gb;
    if (need_a) { // b is saved
        const tensor b2 = b1 ? b.unsqueeze(-1) : b;
        ga = matmul(g2, b2.transpose(-1, -2));
        if (a1) ga = sum_to(ga, {1, a_shape[0]}).reshape(a_shape);
    }
    if (need_b) { // a is saved
        const tensor a2 = a1 ? a.unsqueeze(0) : a;
        gb = matmul(a2.transpose(-1, -2), g2);
        if (b1) gb = sum_to(gb, {b_shape[0], 1}).reshape(b_shape);
    }
    return {ga, gb};
}

} // namespace

tensor matmul_recorded(const tensor& a, const tensor& b) {
    tensor y;
    {
        no_grad_guard off;
        y = matmul(a, b);
    }
    const bool need_a = requires_grad_of(a), need_b = requires_grad_of(b);
    // Each operand is saved only for the other's gradient.
    record("matmul", {&a, &b}, y, {{need_b ? a : tensor(), false}, {need_a ? b : tensor(), false}},
           [need_a, need_b, as = a.shape(), bs = b.shape()](const tensor& g, const tensor_list& s) {
               return matmul_grads(g, s[0], s[1], as, bs, need_a, need_b);
           });
    return y;
}

tensor dot_recorded(const tensor& a, const tensor& b) {
    if (a.dim() == 0 || b.dim() == 0) return binary_recorded(binary_op::mul, a, b);
    if (a.dim() > 2 || b.dim() > 2)
        return refuse_recorded("dot", {&a, &b}, [&] { return dot(a, b); });
    tensor y;
    {
        no_grad_guard off;
        y = dot(a, b);
    }
    record("dot", {&a, &b}, y, {{a, false}, {b, false}},
           [as = a.shape(), bs = b.shape()](const tensor& g, const tensor_list& s) {
               return matmul_grads(g, s[0], s[1], as, bs, true, true);
           });
    return y;
}

tensor concat_recorded(const std::vector<tensor>& ts, int64_t axis, bool stack_them) {
    tensor y;
    {
        no_grad_guard off;
        y = stack_them ? stack(ts, axis) : concat(ts, axis);
    }
    std::vector<const tensor*> inputs;
    shape_t sizes;
    for (const tensor& t : ts) {
        inputs.push_back(&t);
        sizes.push_back(stack_them || t.dim() == 0 ? 1 : t.size(axis));
    }
    const int64_t ax = wrap_axis(axis, y.dim());
    record_inputs(stack_them ? "stack" : "concat", inputs, y, {},
                  [sizes, ax, stack_them](const tensor& g, const tensor_list&) {
                      tensor_list r;
                      int64_t at = 0;
                      for (int64_t n : sizes) {
                          r.push_back(stack_them ? g.select(ax, at) : g.slice(ax, at, at + n));
                          at += n;
                      }
                      return r;
                  });
    return y;
}

} // namespace isthmus::autograd
