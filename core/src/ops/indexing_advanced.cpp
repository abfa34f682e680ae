// Advanced indexing's rows: the layout of a gather or scatter and where its rows start.
#include "host_indexing.hpp" // host-side index checks and offsets (Note [device indexing])
#include "ops/indexing_internal.hpp"

#include <algorithm>
#include <deque>

namespace isthmus::indexing {

namespace {

[[noreturn]] void throw_out_of_range(const host::offset_source& s, const shape_t& common,
                                     int64_t axis) {
    ISTHMUS_THROW(index_error, "index ", host::first_bad_index(common, s),
                  " is out of bounds for axis ", axis, " with size ", s.size);
}

} // namespace

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
        const host::offset_source s{&e.index, idx, v.shape()[d], v.strides()[d] * isz, e.check};
        if (e.check && !host::indices_in_range(idx, r.rows, s.size))
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
    std::vector<host::offset_source> sources;
    for (const advanced_entry& e : adv) {
        expanded.push_back(e.index.expand(common));
        locks.emplace_back(expanded.back(), lock_mode::read, MEMRESOURCE_CPU);
        const auto d = static_cast<size_t>(e.dim);
        sources.push_back(
            {&expanded.back(), locks.back().data(), v.shape()[d], v.strides()[d] * isz, e.check});
    }
    r.off = std::make_unique_for_overwrite<int64_t[]>(static_cast<size_t>(r.rows));
    const int64_t bad = host::index_offsets(common, sources, r.off.get());
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

// See Note [gather loop order]: rows inner when the indexed dimensions step through memory faster
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

} // namespace isthmus::indexing
