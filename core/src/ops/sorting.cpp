// sort/argsort (the axis moved last and made contiguous) and searchsorted: the backends' entries.
#include "isthmus/ops/sorting.hpp"

#include "autograd/recorded_ops.hpp"
#include "isthmus/ops/creation.hpp"
#include "isthmus/ops/indexing.hpp"
#include "ops/dispatch.hpp"

namespace isthmus {

namespace {

// Sorts along `axis` through the backends' canonical form (Note [canonical forms]): the axis
// last and contiguous; the result is moved back and returned C-contiguous, as NumPy does.
std::pair<tensor, tensor> sort_along(const char* op, const tensor& t, int64_t axis, bool descending,
                                     bool values, bool indices) {
    ISTHMUS_CHECK(t.defined(), value_error, op, ": the input tensor is undefined");
    const int64_t rank = t.dim();
    if (rank == 0) // one element: itself, at position 0
        return {values ? t.clone() : tensor(),
                indices ? zeros({}, dtype::int64, t.location()) : tensor()};
    ISTHMUS_CHECK(axis >= -rank && axis < rank, index_error, op, ": axis ", axis,
                  " is out of range for a tensor of rank ", rank, " (shape ", shape_str(t.shape()),
                  ")");
    const int64_t a = axis < 0 ? axis + rank : axis;
    const tensor x = (a == rank - 1 ? t : t.transpose(a, rank - 1)).contiguous();
    std::pair<tensor, tensor> out;
    if (x.numel() == 0) {
        if (values) out.first = tensor::empty(x.shape(), x.dtype(), t.location());
        if (indices) out.second = tensor::empty(x.shape(), dtype::int64, t.location());
    } else {
        out = ops::run_sort(x, values, indices, descending);
    }
    if (a != rank - 1)
        for (tensor* r : {&out.first, &out.second})
            if (r->defined()) *r = r->transpose(a, rank - 1).contiguous();
    return out;
}

} // namespace

// Note [sort's derivative]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// Sorting permutes each slice: result[i] = t[order[i]] along the axis, with `order` the indices the
// same sort computes beside the values (so ties go where the values went). That is a gather, so it
// is recorded as one: the positions it read are t's positions taken along the axis at `order`, and
// the gradient goes back to them (See Note [array indexing's derivative]), to any order.
tensor sort(const tensor& t, int64_t axis, bool descending) {
    if (autograd::needs_record(t)) [[unlikely]] { // See Note [recording at the op layer]
        std::pair<tensor, tensor> sorted;
        tensor ids;
        {
            autograd::no_grad_guard off;
            sorted = sort_along("sort", t, axis, descending, true, true);
            const tensor positions = autograd::positions_of(t);
            ids = t.dim() == 0 ? positions : take_along_axis(positions, sorted.second, axis);
        }
        autograd::record_gather("sort", t, sorted.first, ids);
        return sorted.first;
    }
    return sort_along("sort", t, axis, descending, true, false).first;
}

tensor argsort(const tensor& t, int64_t axis, bool descending) {
    return sort_along("argsort", t, axis, descending, false, true).second;
}

tensor searchsorted(const tensor& sorted, const tensor& values, bool right) {
    ISTHMUS_CHECK(sorted.defined() && values.defined(), value_error,
                  "searchsorted: an input tensor is undefined");
    ISTHMUS_CHECK(sorted.dim() == 1, value_error,
                  "searchsorted: the sorted tensor must be one-dimensional, got shape ",
                  shape_str(sorted.shape()));
    if (sorted.numel() == 0 || values.numel() == 0)
        return zeros(values.shape(), dtype::int64, values.location());
    const dtype c = promote_types(sorted.dtype(), values.dtype());
    return ops::run_searchsorted(sorted.to(c, false).contiguous(), values.to(c, false).contiguous(),
                                 right);
}

} // namespace isthmus
