// nonzero, argwhere, take, take_along_axis and put_along_axis, built on the indexing kernels.
#include "host_indexing.hpp"
#include "isthmus/ops/creation.hpp"
#include "isthmus/ops/indexing.hpp"
#include "ops/dispatch.hpp"

#include <deque>

namespace isthmus {

namespace {

// The elements of `t` as a C-contiguous bool buffer (nonzero -> true), reusing t when it is one.
tensor as_bool_mask(const tensor& t) {
    if (t.dtype() == dtype::bool_ && t.is_contiguous()) return t;
    return t.to(dtype::bool_);
}

// Coordinates of the nonzero elements of `t` (rank >= 1): coordinate d of hit h at
// outs[d] + h * stride; `make` allocates the outputs once the count is known.
template <typename Make>
void nonzero_into(const tensor& t, Make&& make) {
    [[maybe_unused]] const resource_id where = ops::pick_resource({&t});
    const tensor m = as_bool_mask(t);
    auto in = ops::read_host(m);
    const auto* mask = in.as<const uint8_t>();
    const host::nonzero_counts counts = host::count_nonzero(mask, m.numel());
    std::vector<int64_t*> outs;
    int64_t stride = 1;
    make(counts.total(), outs, stride);
    if (counts.total() > 0) host::write_nonzero(counts, mask, m.shape(), outs.data(), stride);
}

void check_integer_indices(const tensor& indices, const char* what) {
    ISTHMUS_CHECK(indices.defined(), value_error, what, ": the indices are undefined");
    ISTHMUS_CHECK(is_integer(indices.dtype()), type_error, what,
                  ": indices must have an integer dtype, got ", indices.dtype());
}

// The subscript t[arange, ..., indices, ..., arange] that take_along_axis reads.
std::vector<index_item> along_axis_items(const tensor& t, const tensor& indices, int64_t axis,
                                         const char* what) {
    ISTHMUS_CHECK(t.defined(), value_error, what, ": the tensor is undefined");
    check_integer_indices(indices, what);
    ISTHMUS_CHECK(indices.dim() == t.dim(), value_error, what,
                  ": indices must have the tensor's rank ", t.dim(), ", got rank ", indices.dim(),
                  " (shape ", shape_str(indices.shape()), ")");
    const int64_t a = wrap_axis(axis, t.dim());
    std::vector<index_item> items;
    for (int64_t d = 0; d < t.dim(); ++d) {
        if (d == a) {
            items.emplace_back(indices);
            continue;
        }
        shape_t s(static_cast<size_t>(t.dim()), 1);
        s[static_cast<size_t>(d)] = t.shape()[static_cast<size_t>(d)];
        items.emplace_back(
            arange(scalar(t.shape()[static_cast<size_t>(d)]), dtype::int64, MEMRESOURCE_CPU)
                .reshape(s));
    }
    return items;
}

} // namespace

std::vector<tensor> nonzero(const tensor& t) {
    ISTHMUS_CHECK(t.defined(), value_error, "nonzero: the tensor is undefined");
    ISTHMUS_CHECK(t.dim() > 0, value_error,
                  "nonzero: a 0-d tensor has no dimension to index; reshape it to 1-d first");
    std::vector<tensor> result;
    std::deque<ops::access> locks;
    nonzero_into(t, [&](int64_t count, std::vector<int64_t*>& outs, int64_t& stride) {
        stride = 1;
        for (int64_t d = 0; d < t.dim(); ++d) {
            result.push_back(tensor::empty({count}, dtype::int64, MEMRESOURCE_CPU));
            locks.emplace_back(result.back(), lock_mode::write, MEMRESOURCE_CPU);
            outs.push_back(locks.back().as<int64_t>());
        }
    });
    return result;
}

tensor argwhere(const tensor& t) {
    ISTHMUS_CHECK(t.defined(), value_error, "argwhere: the tensor is undefined");
    if (t.dim() == 0)
        return tensor::empty({t.to(dtype::bool_).item<bool>() ? 1 : 0, 0}, dtype::int64,
                             MEMRESOURCE_CPU);
    tensor result;
    std::deque<ops::access> locks;
    nonzero_into(t, [&](int64_t count, std::vector<int64_t*>& outs, int64_t& stride) {
        result = tensor::empty({count, t.dim()}, dtype::int64, MEMRESOURCE_CPU);
        locks.emplace_back(result, lock_mode::write, MEMRESOURCE_CPU);
        for (int64_t d = 0; d < t.dim(); ++d) outs.push_back(locks.back().as<int64_t>() + d);
        stride = t.dim();
    });
    return result;
}

tensor take(const tensor& t, const tensor& indices, std::optional<int64_t> axis) {
    ISTHMUS_CHECK(t.defined(), value_error, "take: the tensor is undefined");
    check_integer_indices(indices, "take");
    tensor r;
    if (!axis) {
        r = index(t.reshape({-1}), {indices});
    } else {
        const int64_t a = wrap_axis(*axis, t.dim());
        std::vector<index_item> items(static_cast<size_t>(a), index_item(index_slice{}));
        items.emplace_back(indices);
        r = index(t, items);
    }
    // take always copies; a 0-d index makes index() return a view.
    return r.storage() == t.storage() ? r.clone() : r;
}

tensor take_along_axis(const tensor& t, const tensor& indices, int64_t axis) {
    return index(t, along_axis_items(t, indices, axis, "take_along_axis"));
}

void put_along_axis(const tensor& target, const tensor& indices, const tensor& values,
                    int64_t axis) {
    index_put(target, along_axis_items(target, indices, axis, "put_along_axis"), values);
}

} // namespace isthmus
