// Reduction ops (sum, prod, mean, min, max, any, all, var, std): axes, keepdims, result dtypes
// and checks, then the one dispatch (ops/dispatch.hpp).
#include "isthmus/ops/reduce.hpp"
#include "isthmus/ops/elementwise.hpp"

#include "autograd/recorded_ops.hpp"
#include "ops/dispatch.hpp"
#include "ops/reduce_types.hpp"

namespace isthmus {

namespace {

// The reduced dimensions of a tensor and the shapes of the result.
struct axes_plan {
    std::vector<bool> reduced; // per input dimension
    shape_t kept;              // result shape without keepdims
    shape_t with_ones;         // result shape with keepdims
    int64_t count = 1;         // elements reduced into each output
};

axes_plan plan_axes(const char* op, const tensor& t, const reduce_axes& axes) {
    ISTHMUS_CHECK(t.defined(), value_error, op, ": the input tensor is undefined");
    const int64_t rank = t.dim();
    axes_plan p;
    p.reduced.assign(static_cast<size_t>(rank), axes.all());
    if (!axes.all())
        for (int64_t a : axes.list()) {
            ISTHMUS_CHECK(a >= -rank && a < rank, index_error, op, ": axis ", a,
                          " is out of range for a tensor of rank ", rank, " (shape ",
                          shape_str(t.shape()), ")");
            const auto d = static_cast<size_t>(a < 0 ? a + rank : a);
            ISTHMUS_CHECK(!p.reduced[d], value_error, op, ": axis ", a, " is repeated in axes ",
                          shape_str(axes.list()));
            p.reduced[d] = true;
        }
    for (size_t d = 0; d < static_cast<size_t>(rank); ++d) {
        const int64_t n = t.shape()[d];
        if (p.reduced[d]) {
            p.count *= n;
            p.with_ones.push_back(1);
        } else {
            p.kept.push_back(n);
            p.with_ones.push_back(n);
        }
    }
    return p;
}

using backend::reduce_kind;

// Runs one reduction where the scheduling rule says (Note [one dispatch]); the result has the
// kept dimensions (keepdims applied by the caller).
tensor run_kind(reduce_kind kind, const tensor& t, const axes_plan& p) {
    return ops::run_reduce(kind, t, p.reduced, p.kept, ops::reduce_result_dtype(kind, t.dtype()));
}

tensor finish(const tensor& out, const axes_plan& p, bool keepdims) {
    return keepdims ? out.view(p.with_ones) : out;
}

tensor reduction(const char* op, reduce_kind kind, const tensor& t, const reduce_axes& axes,
                 bool keepdims) {
    const axes_plan p = plan_axes(op, t, axes);
    if (kind == reduce_kind::min || kind == reduce_kind::max)
        ISTHMUS_CHECK(p.count > 0, value_error, op, ": zero-size reduction over axes of shape ",
                      shape_str(t.shape()), " has no identity (min/max of an empty set)");
    return finish(run_kind(kind, t, p), p, keepdims);
}

// Note [variance]
// ~~~~~~~~~~~~~~~
// The sum of |x - mean|^2 over the reduced axes divided by max(N - ddof, 0). A backend with a fused
// kernel computes it (the CPU: one pass over the input, exact two-pass blocks merged by Chan's
// update, Note [blocked variance] in cpu/reduce_var.cpp); on the others it is composed of their
// kernels as NumPy's two passes (Note [composite ops]): the mean, then the deviations in the work
// dtype (float32 for float32/complex64/half inputs, else float64), their squares summed and divided
// once. float16/bfloat16 inputs are widened to float32 first so that the mean is not rounded to
// half precision.
tensor variance(const char* op, const tensor& t, const reduce_axes& axes, bool keepdims,
                int64_t ddof, bool root) {
    const axes_plan p = plan_axes(op, t, axes);
    const dtype result = ops::var_result_dtype(t.dtype());
    const dtype work = ops::var_work_dtype(t.dtype());
    const tensor x = is_floating(t.dtype()) && itemsize(t.dtype()) == 2 ? t.to(dtype::float32) : t;
    const auto divisor = static_cast<double>(std::max<int64_t>(p.count - ddof, 0));
    tensor out;
    if (auto fused = ops::run_variance(x, p.reduced, p.kept, ops::var_result_dtype(x.dtype()),
                                       divisor, root)) {
        out = std::move(*fused);
    } else {
        // Note [composite ops] (dispatch_kernels.cpp): on a backend without the fused kernel,
        // the same two passes as elementwise ops and reductions that run there: the deviations
        // in the work dtype, their squares summed in double (float32 data) and divided once.
        // Complex deviations stay complex and their squared modulus is abs then square (within
        // an ulp of the CPU's re^2 + im^2), in the real work dtype.
        const tensor m = run_kind(reduce_kind::mean, x, p).view(p.with_ones).expand(x.shape());
        tensor sq;
        if (is_complex(x.dtype())) {
            sq = unary(unary_op::square, unary(unary_op::abs, binary(binary_op::sub, x, m)));
            if (sq.dtype() != work) sq = sq.to(work, false);
        } else {
            sq = unary(unary_op::square,
                       binary(binary_op::sub, x.to(work, false), m.to(work, false)));
        }
        out = binary(binary_op::div, run_kind(reduce_kind::sum, sq, p), scalar(divisor));
        if (root) out = unary(unary_op::sqrt, out);
    }
    if (out.dtype() != result) out = out.to(result);
    return finish(out, p, keepdims);
}

} // namespace

// See Note [recording at the op layer].
#define ISTHMUS_RECORD_REDUCTION(kind, ...)                                                        \
    if (autograd::needs_record(t)) [[unlikely]]                                                    \
        return autograd::reduce_recorded(autograd::reduction::kind, t, axes, keepdims __VA_ARGS__);

tensor sum(const tensor& t, const reduce_axes& axes, bool keepdims) {
    ISTHMUS_RECORD_REDUCTION(sum)
    return reduction("sum", reduce_kind::sum, t, axes, keepdims);
}

tensor prod(const tensor& t, const reduce_axes& axes, bool keepdims) {
    ISTHMUS_RECORD_REDUCTION(prod)
    return reduction("prod", reduce_kind::prod, t, axes, keepdims);
}

tensor mean(const tensor& t, const reduce_axes& axes, bool keepdims) {
    ISTHMUS_RECORD_REDUCTION(mean)
    return reduction("mean", reduce_kind::mean, t, axes, keepdims);
}

tensor min(const tensor& t, const reduce_axes& axes, bool keepdims) {
    ISTHMUS_RECORD_REDUCTION(min)
    return reduction("min", reduce_kind::min, t, axes, keepdims);
}

tensor max(const tensor& t, const reduce_axes& axes, bool keepdims) {
    ISTHMUS_RECORD_REDUCTION(max)
    return reduction("max", reduce_kind::max, t, axes, keepdims);
}

tensor any(const tensor& t, const reduce_axes& axes, bool keepdims) {
    return reduction("any", reduce_kind::any, t, axes, keepdims);
}

tensor all(const tensor& t, const reduce_axes& axes, bool keepdims) {
    return reduction("all", reduce_kind::all, t, axes, keepdims);
}

tensor var(const tensor& t, const reduce_axes& axes, bool keepdims, int64_t ddof) {
    ISTHMUS_RECORD_REDUCTION(var, , ddof)
    return variance("var", t, axes, keepdims, ddof, false);
}

tensor std_(const tensor& t, const reduce_axes& axes, bool keepdims, int64_t ddof) {
    ISTHMUS_RECORD_REDUCTION(std, , ddof)
    return variance("std", t, axes, keepdims, ddof, true);
}

} // namespace isthmus
