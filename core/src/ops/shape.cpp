// Shape ops that join, split and reverse tensors: concat, stack, split, array_split, flip.
#include "isthmus/ops/shape.hpp"
#include "autograd/recorded_ops.hpp"
#include "ops/dispatch.hpp"

#include <limits>

namespace isthmus {

namespace {
void check_list(const std::vector<tensor>& ts, const char* what) {
    ISTHMUS_CHECK(!ts.empty(), value_error, what, ": need at least one tensor");
    for (size_t i = 0; i < ts.size(); ++i)
        ISTHMUS_CHECK(ts[i].defined(), value_error, what, ": the tensor at index ", i,
                      " is undefined");
}
} // namespace

tensor concat(const std::vector<tensor>& ts, int64_t axis) {
    check_list(ts, "concat");
    // See Note [recording at the op layer] (stack and split are views and concat).
    if (autograd::needs_record_list(ts)) [[unlikely]]
        return autograd::concat_recorded(ts, axis, false);
    const tensor& t0 = ts[0];
    ISTHMUS_CHECK(t0.dim() > 0, value_error,
                  "concat: zero-dimensional tensors cannot be "
                  "concatenated");
    const int64_t a = wrap_axis(axis, t0.dim());
    const auto au = static_cast<size_t>(a);
    shape_t shape = t0.shape();
    shape[au] = 0;
    dtype dt = t0.dtype();
    for (size_t i = 0; i < ts.size(); ++i) {
        const tensor& t = ts[i];
        ISTHMUS_CHECK(t.dim() == t0.dim(), value_error,
                      "concat: all the input tensors must have the same number of dimensions, "
                      "but the tensor at index 0 has ",
                      t0.dim(), " dimension(s) and the tensor at index ", i, " has ", t.dim(),
                      " dimension(s)");
        for (size_t d = 0; d < shape.size(); ++d)
            ISTHMUS_CHECK(d == au || t.shape()[d] == t0.shape()[d], value_error,
                          "concat: all the input tensor dimensions except for the concatenation "
                          "axis must match exactly, but along dimension ",
                          d, ", the tensor at index 0 has size ", t0.shape()[d],
                          " and the tensor at index ", i, " has size ", t.shape()[d]);
        shape[au] += t.shape()[au];
        dt = promote_types(dt, t.dtype());
    }
    // Each input is one strided copy (with the cast) into its slab of the output, made where
    // the inputs are (Note [copying shape ops]).
    std::vector<const tensor*> inputs;
    for (const tensor& t : ts) inputs.push_back(&t);
    tensor out = tensor::empty(shape, dt, ops::pick_resource(inputs));
    int64_t off = 0;
    for (const tensor& t : ts) {
        const int64_t n = t.shape()[au];
        if (n > 0 && t.numel() > 0) out.slice(a, off, off + n).copy_from(t);
        off += n;
    }
    return out;
}

tensor stack(const std::vector<tensor>& ts, int64_t axis) {
    check_list(ts, "stack");
    const int64_t a = wrap_axis(axis, ts[0].dim() + 1);
    std::vector<tensor> parts;
    parts.reserve(ts.size());
    for (size_t i = 0; i < ts.size(); ++i) {
        ISTHMUS_CHECK(ts[i].shape() == ts[0].shape(), value_error,
                      "stack: all input tensors must have the same shape, but the tensor at "
                      "index 0 has shape ",
                      shape_str(ts[0].shape()), " and the tensor at index ", i, " has shape ",
                      shape_str(ts[i].shape()));
        parts.push_back(ts[i].unsqueeze(a));
    }
    return concat(parts, a);
}

std::vector<tensor> array_split(const tensor& t, int64_t sections, int64_t axis) {
    ISTHMUS_CHECK(t.defined(), value_error, "split: the tensor is undefined");
    ISTHMUS_CHECK(sections > 0, value_error, "split: the number of sections must be positive, got ",
                  sections);
    const int64_t a = wrap_axis(axis, t.dim());
    const int64_t n = t.shape()[static_cast<size_t>(a)];
    std::vector<tensor> parts;
    parts.reserve(static_cast<size_t>(sections));
    int64_t start = 0;
    for (int64_t i = 0; i < sections; ++i) {
        const int64_t len = n / sections + (i < n % sections ? 1 : 0);
        parts.push_back(t.slice(a, start, start + len));
        start += len;
    }
    return parts;
}

std::vector<tensor> split(const tensor& t, int64_t sections, int64_t axis) {
    ISTHMUS_CHECK(t.defined(), value_error, "split: the tensor is undefined");
    ISTHMUS_CHECK(sections > 0, value_error, "split: the number of sections must be positive, got ",
                  sections);
    const int64_t n = t.shape()[static_cast<size_t>(wrap_axis(axis, t.dim()))];
    ISTHMUS_CHECK(n % sections == 0, value_error, "split: a size of ", n, " along axis ", axis,
                  " does not divide into ", sections, " equal sections (use array_split)");
    return array_split(t, sections, axis);
}

std::vector<tensor> split(const tensor& t, const std::vector<int64_t>& indices, int64_t axis) {
    ISTHMUS_CHECK(t.defined(), value_error, "split: the tensor is undefined");
    const int64_t a = wrap_axis(axis, t.dim());
    std::vector<tensor> parts;
    parts.reserve(indices.size() + 1);
    int64_t start = 0;
    for (int64_t stop : indices) {
        parts.push_back(t.slice(a, start, stop));
        start = stop;
    }
    parts.push_back(t.slice(a, start, std::numeric_limits<int64_t>::max()));
    return parts;
}

namespace {
// Reverses dimension `d` of `t` as a view: start at the last element, negate the stride.
tensor flip_axis(const tensor& t, int64_t d) {
    return t.slice(d, std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(), -1);
}
} // namespace

tensor flip(const tensor& t) {
    ISTHMUS_CHECK(t.defined(), value_error, "flip: the tensor is undefined");
    tensor r = t;
    for (int64_t d = 0; d < t.dim(); ++d) r = flip_axis(r, d);
    return r;
}

tensor flip(const tensor& t, const std::vector<int64_t>& axes) {
    ISTHMUS_CHECK(t.defined(), value_error, "flip: the tensor is undefined");
    std::vector<bool> seen(static_cast<size_t>(t.dim()), false);
    tensor r = t;
    for (int64_t axis : axes) {
        const int64_t d = wrap_axis(axis, t.dim());
        ISTHMUS_CHECK(!seen[static_cast<size_t>(d)], value_error, "flip: repeated axis ", axis);
        seen[static_cast<size_t>(d)] = true;
        r = flip_axis(r, d);
    }
    return r;
}

} // namespace isthmus
