// NumPy-style subscripts: index_item, reading (index) and assignment (index_put).
#include "autograd/recorded_ops.hpp"
#include "isthmus/ops/creation.hpp"
#include "ops/dispatch.hpp"
#include "ops/indexing_internal.hpp"

#include <algorithm>

namespace isthmus {

index_item::index_item(bool b) : v_(isthmus::tensor::scalar_tensor(b)) {}

isthmus::tensor index_item::huge_unsigned(uint64_t i) {
    return isthmus::tensor::scalar_tensor<uint64_t>(i);
}

index_item::index_item(isthmus::tensor t) : v_(std::move(t)) {
    ISTHMUS_CHECK(std::get<isthmus::tensor>(v_).defined(), value_error,
                  "index: an undefined tensor cannot be an index");
}

int64_t index_item::integer() const {
    ISTHMUS_ASSERT(type() == kind::integer, "index_item is not an integer");
    return std::get<int64_t>(v_);
}

const index_slice& index_item::slice() const {
    ISTHMUS_ASSERT(type() == kind::slice, "index_item is not a slice");
    return std::get<index_slice>(v_);
}

const isthmus::tensor& index_item::tensor() const {
    ISTHMUS_ASSERT(type() == kind::tensor, "index_item is not a tensor");
    return std::get<isthmus::tensor>(v_);
}

namespace {

using namespace indexing;

// Removes leading size-1 dimensions of `value` beyond `rank` (NumPy allows them in setitem).
tensor strip_leading_ones(tensor value, int64_t rank) {
    while (value.dim() > rank && value.shape()[0] == 1) value = value.squeeze(0);
    return value;
}

// Note [extra value dimensions in advanced assignment]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// With an index array, NumPy's mapiter reshapes a value of more dimensions than the indexed
// result to its trailing `rank` dimensions. The reshape holds when the leading dimensions are
// all 1 (the usual rule) and also when the trailing part is empty, since then both sides hold
// no element: `A[[]] = np.empty((0, 0, 1))` into a (0, 0) result, or a (3, 0, 0) value into
// it. The reshaped value must then broadcast to the result as usual. A reshape that does not
// hold is left for check_assignable to report.
tensor fit_advanced_value(tensor value, int64_t rank) {
    if (value.dim() <= rank) return value;
    const auto lead = static_cast<size_t>(value.dim() - rank);
    const shape_t& s = value.shape();
    const bool tail_empty =
        std::find(s.begin() + static_cast<std::ptrdiff_t>(lead), s.end(), int64_t{0}) != s.end();
    const bool lead_ones = std::all_of(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(lead),
                                       [](int64_t d) { return d == 1; });
    if (!tail_empty && !lead_ones) return value;
    return value.reshape(shape_t(s.begin() + static_cast<std::ptrdiff_t>(lead), s.end()));
}

void check_assignable(const tensor& value, const shape_t& shape) {
    bool ok = value.dim() <= static_cast<int64_t>(shape.size());
    for (int64_t i = 0; ok && i < value.dim(); ++i) {
        const int64_t from = value.shape()[static_cast<size_t>(value.dim() - 1 - i)];
        const int64_t to = shape[shape.size() - 1 - static_cast<size_t>(i)];
        ok = from == to || from == 1;
    }
    ISTHMUS_CHECK(ok, value_error, "could not broadcast the value of shape ",
                  shape_str(value.shape()), " into the indexed shape ", shape_str(shape));
}

void put_parsed(const tensor& target, const parsed_subscript& p, const tensor& value_in) {
    const tensor& v = p.view;
    // See Note [NumPy's subscript rules]: the two assignments that take no broadcast value.
    ISTHMUS_CHECK(!p.full_integer || value_in.dim() == 0 ||
                      (v.dtype() == dtype::bool_ && value_in.numel() == 1),
                  value_error,
                  "setting an array element with a sequence: an all-integer subscript selects "
                  "one element, the value has shape ",
                  shape_str(value_in.shape()));
    ISTHMUS_CHECK(!p.whole_mask || value_in.dim() <= 1, type_error,
                  "boolean array indexing assignment requires a 0 or 1-dimensional input, input "
                  "has ",
                  value_in.dim(), " dimensions");
    if (p.adv.empty()) {
        tensor value = strip_leading_ones(value_in, v.dim());
        check_assignable(value, v.shape());
        tensor dst = v;
        dst.copy_from(value);
        return;
    }
    // Note [device indexing]
    // ~~~~~~~~~~~~~~~~~~~~~~
    // The indices are checked and turned into row offsets on the host (index arrays are usually
    // small); the gather or scatter of the rows runs where the scheduling rule puts it, on a device
    // backend when it has the kernel.
    const ops::target tg = ops::pick_backend(
        ops::pick_resource({&target, &value_in}),
        [&](const backend::compute& be) { return be.supports_index(v.itemsize()); });
    const advanced_layout L = layout_of(v, p.adv, p.adjacent);
    // Note [extra value dimensions in advanced assignment].
    tensor value = fit_advanced_value(value_in, static_cast<int64_t>(L.result.size()));
    check_assignable(value, L.result);
    // An index array aliasing the target would change under the writes: read it from a copy.
    std::vector<advanced_entry> adv = p.adv;
    for (advanced_entry& e : adv)
        if (e.index.storage() == target.storage()) e.index = e.index.clone();
    const located_rows rows = locate_rows(v, adv, L.common);
    if (rows.rows == 0 || numel_of(L.result) == 0) return;

    if (value.dtype() != v.dtype()) value = value.to(v.dtype());
    // See Note [overlapping copies]: a value aliasing the target is read from a copy.
    if (value.storage() == target.storage()) value = value.clone();
    tensor vr = value.expand(L.result);
    int64_t row_stride = 0;
    if (!block_stride(vr, L.block, L.common.size(), row_stride)) {
        vr = vr.contiguous();
        block_stride(vr, L.block, L.common.size(), row_stride);
    }
    const std::vector<bool> adv_mask = advanced_mask(v, p.adv);
    const shape_t dst_rest = rest_strides(v, adv_mask);
    const shape_t val_rest = strides_without_block(vr, L.block, L.common.size());
    const auto isz = static_cast<int64_t>(v.itemsize());
    ops::run_scatter(tg, v, vr, rows.at, row_stride * isz, L.rest, dst_rest, val_rest,
                     rows_inner(v, adv_mask));
}

} // namespace

tensor index(const tensor& t, const std::vector<index_item>& items) {
    const parsed_subscript p = parse_subscript(t, items);
    // A 0-d integer array beside slices, newaxis or ellipsis: a copy, as NumPy (Note [NumPy's
    // subscript rules]).
    if (p.adv.empty()) return p.scalar_array && !p.full_integer ? p.view.clone() : p.view;
    // See Note [recording at the op layer]: slices and integers above are views, integer and
    // boolean arrays a gather (See Note [array indexing's derivative]).
    if (autograd::needs_record(t)) [[unlikely]]
        return autograd::index_recorded(t, items);
    // Note [device indexing] (put_parsed): rows located on the host, gathered where the
    // scheduling rule says.
    const tensor& v = p.view;
    const ops::target tg =
        ops::pick_backend(ops::pick_resource({&t}), [&](const backend::compute& be) {
            return be.supports_index(v.itemsize());
        });
    const advanced_layout L = layout_of(v, p.adv, p.adjacent);
    const located_rows rows = locate_rows(v, p.adv, L.common);
    tensor out = tensor::empty(L.result, v.dtype(), tg.where);
    if (rows.rows == 0 || out.numel() == 0) return out;

    const std::vector<bool> adv_mask = advanced_mask(v, p.adv);
    const shape_t src_rest = rest_strides(v, adv_mask);
    const shape_t out_rest = strides_without_block(out, L.block, L.common.size());
    const auto isz = static_cast<int64_t>(v.itemsize());
    const int64_t row_bytes =
        out.strides()[static_cast<size_t>(L.block) + L.common.size() - 1] * isz;
    ops::run_gather(tg, v, out, rows.at, row_bytes, L.rest, out_rest, src_rest,
                    rows_inner(v, adv_mask));
    return out;
}

shape_t index_shape(const tensor& t, const std::vector<index_item>& items) {
    const parsed_subscript p = parse_subscript(t, items);
    if (p.adv.empty()) return p.view.shape();
    return layout_of(p.view, p.adv, p.adjacent).result;
}

bool is_full_integer_index(const std::vector<index_item>& items, int64_t rank) {
    if (static_cast<int64_t>(items.size()) != rank) return false;
    for (const index_item& it : items)
        if (!is_integer_item(it)) return false;
    return true;
}

void index_put(const tensor& target, const std::vector<index_item>& items, const tensor& value) {
    ISTHMUS_CHECK(value.defined(), value_error, "index_put: the value is undefined");
    // a value that requires grad would reach the target without its graph: refused while
    // recording, as every in-place op is (docs/autograd.md)
    autograd::check_inplace("subscript assignment", target, &value);
    put_parsed(target, parse_subscript(target, items), value);
}

void index_put(const tensor& target, const std::vector<index_item>& items, const scalar& value) {
    const parsed_subscript p = parse_subscript(target, items);
    if (p.adv.empty()) {
        fill(p.view, value);
        return;
    }
    const tensor s = tensor::empty({}, target.dtype(), MEMRESOURCE_CPU);
    fill(s, value);
    put_parsed(target, p, s);
}

} // namespace isthmus
