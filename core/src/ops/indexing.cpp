// NumPy-style subscripts: parsing, basic views, advanced gathers and index assignment.
#include "isthmus/ops/indexing.hpp"
#include "cpu/gather.hpp" // host-side index checks and offsets (Note [device indexing])
#include "isthmus/ops/creation.hpp"
#include "ops/dispatch.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <memory>

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

using item_kind = index_item::kind;

// An advanced index entry: an integer array indexing one dimension of the basic view.
struct advanced_entry {
    int64_t dim;  // the dimension of the basic view it indexes
    tensor index; // integer index array (any integer dtype)
    int64_t axis; // the indexed tensor's axis, for messages (-1: inserted by a 0-d mask)
    bool check;   // false when in range by construction (mask coordinates, checked integers)
};

// A subscript after its basic part: the view (advanced dimensions still whole) plus the
// advanced entries in dimension order.
struct parsed_subscript {
    tensor view;
    std::vector<advanced_entry> adv;
    bool adjacent = true;      // the advanced entries are next to each other in the subscript
    bool scalar_array = false; // a 0-d integer tensor acted as an integer
    bool full_integer = false; // integers only, one per dimension
    bool whole_mask = false;   // the subscript is one bool mask of the tensor's shape
};

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

bool is_integer_item(const index_item& it) {
    return it.type() == item_kind::integer ||
           (it.type() == item_kind::tensor && it.tensor().dim() == 0 &&
            is_integer(it.tensor().dtype()));
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
    // Note [integers beside arrays]: with no index arrays an integer removes its dimension
    // (a view); beside index arrays it is a 0-d index array, as in NumPy, so it takes part in
    // broadcasting and in the "advanced entries adjacent?" rule. Either way its range is
    // checked here, in item order, as NumPy does (even when the index arrays select nothing).
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
                // Note [flat masks]: when the masked dimensions are contiguous with each other,
                // they are one dimension for indexing: a 1-d mask and one index array.
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

// Where the advanced entries' broadcast shape goes in the result, and the other dimensions.
struct advanced_layout {
    shape_t common; // the index arrays broadcast together
    shape_t result; // the result (gather) / indexed (scatter) shape
    int64_t block;  // position of common's dimensions in result
    shape_t rest;   // the view's dimensions that are not indexed by arrays, in order
};

advanced_layout layout_of(const tensor& v, const std::vector<advanced_entry>& adv, bool adjacent) {
    advanced_layout L;
    for (const advanced_entry& e : adv) {
        const shape_t& s = e.index.shape();
        const size_t n = std::max(L.common.size(), s.size());
        shape_t b(n, 1);
        bool ok = true;
        for (size_t i = 0; i < n; ++i) {
            const int64_t x = i < n - L.common.size() ? 1 : L.common[i - (n - L.common.size())];
            const int64_t y = i < n - s.size() ? 1 : s[i - (n - s.size())];
            ok = ok && (x == y || x == 1 || y == 1);
            b[i] = x == 1 ? y : x;
        }
        if (!ok) {
            std::string shapes;
            for (const advanced_entry& f : adv) shapes += " " + shape_str(f.index.shape());
            ISTHMUS_THROW(index_error,
                          "shape mismatch: indexing arrays could not be broadcast "
                          "together with shapes",
                          shapes);
        }
        L.common = std::move(b);
    }
    std::vector<bool> indexed(static_cast<size_t>(v.dim()), false);
    for (const advanced_entry& e : adv) indexed[static_cast<size_t>(e.dim)] = true;
    for (int64_t d = 0; d < v.dim(); ++d)
        if (!indexed[static_cast<size_t>(d)]) L.rest.push_back(v.shape()[static_cast<size_t>(d)]);
    // Adjacent advanced entries keep their place; separated ones go first (See Note [NumPy's
    // subscript rules]: adjacency is a property of the subscript, not of the dimensions).
    L.block = adjacent ? adv[0].dim : 0;
    L.result.assign(L.rest.begin(), L.rest.begin() + L.block);
    L.result.insert(L.result.end(), L.common.begin(), L.common.end());
    L.result.insert(L.result.end(), L.rest.begin() + L.block, L.rest.end());
    return L;
}

// Where the rows of an advanced index start (see Note [row offsets]), with the memory and locks
// that keep the answer valid.
struct located_rows {
    backend::index_rows at; // at.count: the number of rows
    int64_t rows = 0;
    std::unique_ptr<int64_t[]> off;    // summed offsets, when several index arrays
    std::unique_ptr<ops::access> lock; // the single index array, when read directly
};

[[noreturn]] void throw_out_of_range(const cpu::offset_source& s, const shape_t& common,
                                     int64_t axis) {
    ISTHMUS_THROW(index_error, "index ", cpu::first_bad_index(common, s),
                  " is out of bounds for axis ", axis, " with size ", s.size);
}

// Locates the rows; raises index_error (before anything is written) for an out-of-range index.
located_rows locate_rows(const tensor& v, const std::vector<advanced_entry>& adv,
                         const shape_t& common) {
    located_rows r;
    r.rows = numel_of(common);
    if (r.rows == 0) return r;
    const auto isz = static_cast<int64_t>(v.itemsize());
    if (adv.size() == 1 && adv[0].index.dtype() == dtype::int64 && adv[0].index.is_contiguous()) {
        const advanced_entry& e = adv[0];
        const auto d = static_cast<size_t>(e.dim);
        r.lock = std::make_unique<ops::access>(e.index, lock_mode::read, MEMRESOURCE_CPU);
        const auto* idx = r.lock->as<const int64_t>();
        const cpu::offset_source s{&e.index, idx, v.shape()[d], v.strides()[d] * isz, e.check};
        if (e.check && !cpu::indices_in_range(idx, r.rows, s.size))
            throw_out_of_range(s, common, e.axis);
        r.at.idx = idx;
        r.at.size = s.size;
        r.at.stride_bytes = s.stride_bytes;
        r.at.count = r.rows;
        return r;
    }
    std::vector<tensor> expanded;
    expanded.reserve(adv.size());
    std::deque<ops::access> locks;
    std::vector<cpu::offset_source> sources;
    for (const advanced_entry& e : adv) {
        expanded.push_back(e.index.expand(common));
        locks.emplace_back(expanded.back(), lock_mode::read, MEMRESOURCE_CPU);
        const auto d = static_cast<size_t>(e.dim);
        sources.push_back(
            {&expanded.back(), locks.back().data(), v.shape()[d], v.strides()[d] * isz, e.check});
    }
    r.off = std::make_unique_for_overwrite<int64_t[]>(static_cast<size_t>(r.rows));
    const int64_t bad = cpu::index_offsets(common, sources, r.off.get());
    if (bad >= 0)
        throw_out_of_range(sources[static_cast<size_t>(bad)], common,
                           adv[static_cast<size_t>(bad)].axis);
    r.at.off = r.off.get();
    r.at.count = r.rows;
    return r;
}

// A flag per dimension of the view: set for the dimensions advanced entries index.
std::vector<bool> advanced_mask(const tensor& v, const std::vector<advanced_entry>& adv) {
    std::vector<bool> m(static_cast<size_t>(v.dim()), false);
    for (const advanced_entry& e : adv) m[static_cast<size_t>(e.dim)] = true;
    return m;
}

// Note [gather loop order]: rows inner when the indexed dimensions step through memory faster
// than every other dimension of size > 1.
bool rows_inner(const tensor& v, const std::vector<bool>& adv_mask) {
    int64_t indexed = INT64_MAX, other = INT64_MAX;
    for (size_t d = 0; d < v.shape().size(); ++d) {
        const int64_t st = std::abs(v.strides()[d]);
        if (adv_mask[d])
            indexed = std::min(indexed, st);
        else if (v.shape()[d] > 1)
            other = std::min(other, st);
    }
    return indexed < other;
}

// The strides of the view's dimensions that no advanced entry indexes (the "rest").
shape_t rest_strides(const tensor& v, const std::vector<bool>& adv_mask) {
    shape_t r;
    r.reserve(v.strides().size());
    for (size_t d = 0; d < v.strides().size(); ++d)
        if (!adv_mask[d]) r.push_back(v.strides()[d]);
    return r;
}

// The strides of `t` without the dimensions [block, block + n).
shape_t strides_without_block(const tensor& t, int64_t block, size_t n) {
    shape_t r = t.strides();
    r.erase(r.begin() + block, r.begin() + block + static_cast<int64_t>(n));
    return r;
}

// The single byte stride that steps through dimensions [block, block + n) of `t` in C order,
// if there is one (then the block is one "row" axis).
bool block_stride(const tensor& t, int64_t block, size_t n, int64_t& stride) {
    int64_t inner_stride = 0, inner_size = 1;
    bool found = false;
    for (size_t j = n; j-- > 0;) {
        const auto d = static_cast<size_t>(block) + j;
        const int64_t size = t.shape()[d], st = t.strides()[d];
        if (size == 1) continue;
        if (!found) {
            stride = st;
            found = true;
        } else if (st != inner_stride * inner_size) {
            return false;
        }
        inner_stride = st;
        inner_size = size;
    }
    if (!found) stride = 0;
    return true;
}

// Removes leading size-1 dimensions of `value` beyond `rank` (NumPy allows them in setitem).
tensor strip_leading_ones(tensor value, int64_t rank) {
    while (value.dim() > rank && value.shape()[0] == 1) value = value.squeeze(0);
    return value;
}

// Note [extra value dimensions in advanced assignment]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
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
    // Note [device indexing]: the indices are checked and turned into row offsets on the host
    // (index arrays are usually small); the gather or scatter of the rows runs where the
    // scheduling rule puts it, on a device backend when it has the kernel.
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
    // Note [overlapping copies]: a value aliasing the target is read from a copy.
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
