// Parsing NumPy-style subscripts: the basic view and the advanced entries, by NumPy's rules.
#include "isthmus/ops/creation.hpp"
#include "ops/indexing_internal.hpp"

#include <algorithm>
#include <limits>

namespace isthmus::indexing {

using item_kind = index_item::kind;

namespace {

// Note [NumPy's subscript rules]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The subscript rules of NumPy 2 (numpy/_core/src/multiarray/mapping.c, prepare_index and
// the mapiter's `consec`), written once here for C++ and Python alike:
// - Each item is an integer, a slice, newaxis, ellipsis (at most one), or an array: an integer
//   array (advanced), a bool mask (advanced: its nonzero() coordinates, one index array per
//   masked dimension), a 0-d bool (advanced: a new dimension of size 1 indexed by [0] for
//   True or [] for False), or a 0-d integer array (an integer).
// - Integers and k-d masks use up 1 and k dimensions, and no more than the tensor has; the
//   ellipsis stands for the dimensions nobody else uses (possibly none). A mask's dimensions
//   match the ones they index, but one of size 0 is not checked (NumPy's quirk).
// - With no advanced item the result is a view; with one, every integer is a 0-d index array
//   (Note [integers beside arrays]) and the result a copy.
// - The advanced items' arrays broadcast to one shape B. B takes the place of the indexed
//   dimensions when the advanced items (integers included) are next to each other in the
//   subscript; any slice, newaxis or ellipsis between two of them, even an ellipsis that
//   stands for no dimension, sends B to the front of the result.
// - A result of more dimensions than a tensor may have is an index_error, as in NumPy (whose
//   limit, NPY_MAXDIMS, is 64; isthmus's is max_rank, 32).
// - All integers and nothing else, one per dimension: a scalar in Python (a 0-d view here). A
//   0-d integer array anywhere else makes the result a copy rather than a view.
// - Errors come in NumPy's order, so that a key with two faults raises NumPy's exception:
//   the structure first (item types, too many indices, ellipses, rank, mask shapes), then the
//   items in order (integers out of range, a zero slice step), then the
//   index arrays (broadcasting, then their values out of range).
// - Assignment: the value broadcasts to the indexed shape after dropping leading dimensions of
//   size 1; but one element (all integers) takes a 0-d value only (a bool element also a
//   one-element value: NumPy takes its truth value), and a lone mask of the tensor's shape a
//   value of at most one dimension (NumPy's boolean-assignment path).

tensor slice_view(const tensor& v, int64_t d, const index_slice& s) {
    int64_t step = s.step.value_or(1);
    ISTHMUS_CHECK(step != 0, value_error, "slice step cannot be zero");
    // A step beyond the size selects at most one element; bounding it keeps the length and
    // stride arithmetic from overflowing (Python allows any step).
    const int64_t cap = std::max<int64_t>(v.shape()[static_cast<size_t>(d)], 1);
    step = std::clamp(step, -cap, cap);
    const int64_t start = s.start.value_or(step > 0 ? 0 : std::numeric_limits<int64_t>::max());
    const int64_t stop = s.stop.value_or(step > 0 ? std::numeric_limits<int64_t>::max()
                                                  : std::numeric_limits<int64_t>::min());
    return v.slice(d, start, stop, step);
}

// The value of a 0-d integer index tensor (NumPy treats it as a plain integer). A uint64
// beyond INT64_MAX is out of range for any tensor: index_error naming it.
int64_t scalar_index(const tensor& x, int64_t axis, int64_t size) {
    if (is_unsigned_int(x.dtype())) {
        const auto u = x.item<uint64_t>();
        ISTHMUS_CHECK(u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()), index_error,
                      "index ", u, " is out of bounds for axis ", axis, " with size ", size);
        return static_cast<int64_t>(u);
    }
    return x.item<int64_t>();
}

// Merges dimensions [d, d + k) of `v` into one when their strides allow it (a view).
bool merge_dims(tensor& v, int64_t d, int64_t k) {
    const shape_t& sh = v.shape();
    const shape_t& st = v.strides();
    for (int64_t j = d; j + 1 < d + k; ++j) {
        const auto u = static_cast<size_t>(j);
        if (st[u] != st[u + 1] * sh[u + 1]) return false;
    }
    shape_t shape(sh.begin(), sh.begin() + d), strides(st.begin(), st.begin() + d);
    int64_t n = 1;
    for (int64_t j = d; j < d + k; ++j) n *= sh[static_cast<size_t>(j)];
    shape.push_back(n);
    strides.push_back(st[static_cast<size_t>(d + k - 1)]);
    shape.insert(shape.end(), sh.begin() + d + k, sh.end());
    strides.insert(strides.end(), st.begin() + d + k, st.end());
    v = tensor::from_storage(v.storage(), v.dtype(), std::move(shape), std::move(strides),
                             v.offset());
    return true;
}

} // namespace

bool is_integer_item(const index_item& it) {
    return it.type() == item_kind::integer ||
           (it.type() == item_kind::tensor && it.tensor().dim() == 0 &&
            is_integer(it.tensor().dtype()));
}

parsed_subscript parse_subscript(const tensor& t, const std::vector<index_item>& items) {
    ISTHMUS_CHECK(t.defined(), value_error, "index: the tensor is undefined");
    // First pass: what the items use up, and whether any is advanced (Note [NumPy's subscript
    // rules]).
    int64_t consumed = 0, slices = 0, added = 0, adv_dims = 0, ints = 0, bools0 = 0;
    int ellipses = 0;
    bool advanced = false, all_integers = true;
    for (const index_item& it : items) {
        all_integers = all_integers && is_integer_item(it);
        switch (it.type()) {
        case item_kind::integer:
            ++consumed;
            ++ints;
            break;
        case item_kind::slice:
            ++consumed;
            ++slices;
            break;
        case item_kind::ellipsis:
            ++ellipses;
            break;
        case item_kind::newaxis:
            ++added;
            break;
        case item_kind::tensor: {
            const tensor& x = it.tensor();
            if (x.dtype() == dtype::bool_) {
                consumed += x.dim();
                bools0 += x.dim() == 0 ? 1 : 0;
                advanced = true;
                adv_dims = std::max<int64_t>(adv_dims, 1);
                break;
            }
            ISTHMUS_CHECK(is_integer(x.dtype()), index_error,
                          "arrays used as indices must be of integer (or boolean) type, got ",
                          x.dtype());
            ++consumed;
            ints += x.dim() == 0 ? 1 : 0;
            advanced = advanced || x.dim() > 0;
            adv_dims = std::max(adv_dims, x.dim());
            break;
        }
        }
    }
    ISTHMUS_CHECK(ellipses <= 1, index_error,
                  "an index can only have a single ellipsis ('...'), got ", ellipses);
    ISTHMUS_CHECK(consumed <= t.dim(), index_error, "too many indices for tensor: tensor is ",
                  t.dim(), "-dimensional, but ", consumed, " were indexed");
    // The result: the dimensions of slices, the ellipsis and newaxis, plus the broadcast
    // shape of the index arrays (as wide as the widest; a mask or a 0-d bool counts as 1-d).
    const int64_t result_dims = t.dim() - consumed + slices + added + adv_dims;
    if (added > 0 || advanced) {
        ISTHMUS_CHECK(result_dims <= max_rank, index_error,
                      "number of dimensions must be within [0, ", max_rank,
                      "], indexing result would have ", result_dims);
        // The view that the index arrays then index keeps their dimensions (and one for each
        // 0-d bool), so it may be wider than the result.
        const int64_t view_dims = t.dim() + added + bools0 - (advanced ? 0 : ints);
        ISTHMUS_CHECK(view_dims <= max_rank, index_error,
                      "number of dimensions must be within [0, ", max_rank,
                      "]: the indexed dimensions and the ", added + bools0, " new ones make ",
                      view_dims);
    }

    // Mask shapes, now that the ellipsis' width is known.
    int64_t axis = 0;
    for (const index_item& it : items) {
        if (it.type() == item_kind::ellipsis) axis += t.dim() - consumed;
        if (it.type() == item_kind::integer || it.type() == item_kind::slice) ++axis;
        if (it.type() != item_kind::tensor) continue;
        const tensor& x = it.tensor();
        if (x.dtype() != dtype::bool_) {
            ++axis;
            continue;
        }
        for (int64_t j = 0; j < x.dim(); ++j, ++axis) {
            const int64_t n = t.shape()[static_cast<size_t>(axis)];
            const int64_t m = x.shape()[static_cast<size_t>(j)];
            // NumPy does not check a mask dimension of size 0 (it selects nothing anyway).
            ISTHMUS_CHECK(n == m || m == 0, index_error,
                          "boolean index did not match indexed tensor along axis ", axis,
                          "; size of axis is ", n, " but size of corresponding boolean axis is ",
                          m);
        }
    }

    parsed_subscript r{t, {}};
    r.full_integer = all_integers && static_cast<int64_t>(items.size()) == t.dim();
    r.whole_mask = items.size() == 1 && items[0].type() == item_kind::tensor &&
                   items[0].tensor().dtype() == dtype::bool_ &&
                   items[0].tensor().shape() == t.shape();
    tensor& v = r.view;
    int64_t d = 0;
    axis = 0;
    // NumPy's `consec` state: -1 no advanced item yet, 0 in the first run of advanced items,
    // 1 after it, 2 a second run began (the items are not adjacent).
    int run = -1;
    auto mark = [&](bool adv_item) {
        if (adv_item) {
            if (run == -1) run = 0;
            if (run == 1) run = 2;
        } else if (run == 0) {
            run = 1;
        }
    };
    // Note [integers beside arrays]
    // ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    // With no index arrays an integer removes its dimension (a view); beside index arrays it is a
    // 0-d index array, as in NumPy, so it takes part in broadcasting and in the "advanced entries
    // adjacent?" rule. Either way its range is checked here, in item order, as NumPy does (even
    // when the index arrays select nothing).
    auto integer = [&](int64_t i) {
        const int64_t n = v.shape()[static_cast<size_t>(d)];
        ISTHMUS_CHECK(i >= -n && i < n, index_error, "index ", i, " is out of bounds for axis ",
                      axis, " with size ", n);
        if (advanced)
            r.adv.push_back({d++, tensor::scalar_tensor<int64_t>(i), axis, false});
        else
            v = v.select(d, i);
        ++axis;
    };
    for (const index_item& it : items) {
        switch (it.type()) {
        case item_kind::integer:
            mark(true);
            integer(it.integer());
            break;
        case item_kind::slice:
            mark(false);
            v = slice_view(v, d++, it.slice());
            ++axis;
            break;
        case item_kind::newaxis:
            mark(false);
            v = v.unsqueeze(d++);
            break;
        case item_kind::ellipsis:
            mark(false);
            d += t.dim() - consumed;
            axis += t.dim() - consumed;
            break;
        case item_kind::tensor: {
            mark(true);
            const tensor& x = it.tensor();
            if (x.dtype() != dtype::bool_) {
                if (x.dim() == 0) {
                    r.scalar_array = true;
                    integer(scalar_index(x, axis, v.shape()[static_cast<size_t>(d)]));
                } else {
                    r.adv.push_back({d++, x, axis++, true});
                }
                break;
            }
            if (x.dim() == 0) {
                // A 0-d mask (True / False) adds a dimension of size 1 and takes [0] or [] of it.
                v = v.unsqueeze(d);
                const int64_t count = x.item<bool>() ? 1 : 0;
                r.adv.push_back({d++, zeros({count}, dtype::int64, MEMRESOURCE_CPU), -1, false});
                break;
            }
            if (x.dim() > 1 && merge_dims(v, d, x.dim())) {
                // Note [flat masks]
                // ~~~~~~~~~~~~~~~~~
                // When the masked dimensions are contiguous with each other, they are one dimension
                // for indexing: a 1-d mask and one index array.
                r.adv.push_back({d++, nonzero(x.reshape({-1}))[0], axis, false});
                axis += x.dim();
                break;
            }
            std::vector<tensor> coords = nonzero(x);
            for (int64_t j = 0; j < x.dim(); ++j)
                r.adv.push_back({d + j, coords[static_cast<size_t>(j)], axis + j, false});
            d += x.dim();
            axis += x.dim();
            break;
        }
        }
    }
    r.adjacent = run != 2;
    return r;
}

} // namespace isthmus::indexing
