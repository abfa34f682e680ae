// The generic dispatch of reductions, matmul and advanced-index rows (Note [one dispatch]):
// the backend, conversions to its canonical form, output allocation, locks, the kernel call.
#include "ops/dispatch.hpp"

#include <unordered_map>
#include <vector>

namespace isthmus::ops {

namespace {

// A reduction's input in the canonical form (Note [canonical forms]): the kept dimensions
// first and the reduced ones last, made contiguous where the data is.
tensor rows_last(const tensor& t, std::vector<bool>& reduced) {
    shape_t perm;
    for (size_t d = 0; d < reduced.size(); ++d)
        if (!reduced[d]) perm.push_back(static_cast<int64_t>(d));
    const size_t kept = perm.size();
    for (size_t d = 0; d < reduced.size(); ++d)
        if (reduced[d]) perm.push_back(static_cast<int64_t>(d));
    for (size_t d = 0; d < reduced.size(); ++d) reduced[d] = d >= kept;
    return t.permute(perm).contiguous();
}

// Byte strides from element strides.
shape_t in_bytes(const shape_t& strides, int64_t itemsize) {
    shape_t b = strides;
    for (int64_t& s : b) s *= itemsize;
    return b;
}

// The byte offset of every row (indices already checked in range on the host).
std::vector<int64_t> row_byte_offsets(const backend::index_rows& at) {
    std::vector<int64_t> off(static_cast<size_t>(at.count));
    for (int64_t r = 0; r < at.count; ++r) {
        if (at.off) {
            off[static_cast<size_t>(r)] = at.off[r];
        } else {
            const int64_t i = at.idx[r] < 0 ? at.idx[r] + at.size : at.idx[r];
            off[static_cast<size_t>(r)] = i * at.stride_bytes;
        }
    }
    return off;
}

} // namespace

tensor run_reduce(backend::reduce_kind kind, const tensor& t, const std::vector<bool>& reduced,
                  const shape_t& kept, dtype out_dt) {
    const target tg = pick_backend(pick_resource({&t}), [&](const backend::compute& be) {
        return be.supports_reduce(kind, t.dtype(), out_dt);
    });
    std::vector<bool> red = reduced;
    const tensor x = tg.has(backend::strided_reduce) ? t : rows_last(t, red);
    tensor out = tensor::empty(kept, out_dt, tg.where);
    if (out.numel() == 0) return out;
    const lock_ref r(x, lock_mode::read, tg.where);
    const output_access w(out, tg.where);
    tg.be->reduce(kind, out, w.data(), x, r.data(), red);
    return out;
}

std::optional<tensor> run_variance(const tensor& x, const std::vector<bool>& reduced,
                                   const shape_t& kept, dtype out_dt, double divisor, bool root) {
    // Note [composite ops]
    // ~~~~~~~~~~~~~~~~~~~~
    // var/std are a fused kernel where the picked backend has one; on a backend without it they are
    // composed of the backend's elementwise and sum kernels (reduce.cpp) rather than handed to the
    // CPU, so device data stays on the device.
    const resource_id where = pick_resource({&x});
    backend::compute* be = backend::compute_at(where);
    if (!be || !be->supports_variance(x.dtype())) {
        if (where != MEMRESOURCE_CPU) return std::nullopt;
        be = cpu_target().be;
    }
    const target tg{where, be};
    std::vector<bool> red = reduced;
    const tensor in = tg.has(backend::strided_reduce) ? x : rows_last(x, red);
    tensor out = tensor::empty(kept, out_dt, where);
    if (out.numel() == 0) return out;
    const lock_ref r(in, lock_mode::read, where);
    const lock_ref w(out, lock_mode::write, where);
    be->variance(out, w.data(), in, r.data(), red, divisor, root);
    return out;
}

tensor run_cumulative(bool prod, const tensor& x, int64_t axis) {
    const target tg = pick_backend(pick_resource({&x}), [&](const backend::compute& be) {
        return be.supports_cumulative(prod, x.dtype());
    });
    tensor out = tensor::empty(x.shape(), x.dtype(), tg.where);
    if (out.numel() == 0) return out;
    const lock_ref r(x, lock_mode::read, tg.where);
    const output_access w(out, tg.where);
    tg.be->cumulative(prod, out, w.data(), x, r.data(), axis);
    return out;
}

std::pair<tensor, tensor> run_sort(const tensor& x, bool values, bool indices, bool descending) {
    const target tg = pick_backend(pick_resource({&x}), [&](const backend::compute& be) {
        return be.supports_sort(x.dtype());
    });
    tensor v = values ? tensor::empty(x.shape(), x.dtype(), tg.where) : tensor();
    tensor i = indices ? tensor::empty(x.shape(), dtype::int64, tg.where) : tensor();
    const lock_ref r(x, lock_mode::read, tg.where);
    std::optional<output_access> wv, wi;
    if (values) wv.emplace(v, tg.where);
    if (indices) wi.emplace(i, tg.where);
    tg.be->sort(x, r.data(), values ? wv->data() : nullptr,
                indices ? static_cast<int64_t*>(wi->data()) : nullptr, descending);
    return {v, i};
}

tensor run_searchsorted(const tensor& sorted, const tensor& values, bool right) {
    const target tg =
        pick_backend(pick_resource({&sorted, &values}), [&](const backend::compute& be) {
            return be.supports_searchsorted(sorted.dtype());
        });
    tensor out = tensor::empty(values.shape(), dtype::int64, tg.where);
    const lock_ref s(sorted, lock_mode::read, tg.where);
    const lock_ref v(values, lock_mode::read, tg.where);
    const output_access w(out, tg.where);
    tg.be->searchsorted(sorted, s.data(), values, v.data(), static_cast<int64_t*>(w.data()), right);
    return out;
}

tensor run_matmul(dtype dt, const tensor& a, const tensor& b, const shape_t& batch) {
    // Note [matmul dtypes] (linalg.cpp): half types multiply with float32 accumulation. A
    // backend with a half gemm takes them as they are; the others get them widened to float32
    // and the result rounded back once.
    const bool half = is_floating(dt) && itemsize(dt) == 2;
    const target tg = pick_backend(pick_resource({&a, &b}), [&](const backend::compute& be) {
        return be.supports_matmul(dt) || (half && be.supports_matmul(dtype::float32));
    });
    const dtype work = tg.be->supports_matmul(dt) ? dt : dtype::float32;
    const int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
    shape_t as = batch, bs = batch, cs = batch;
    as.insert(as.end(), {m, k});
    bs.insert(bs.end(), {k, n});
    cs.insert(cs.end(), {m, n});
    tensor A = a.to(work, false).expand(as), B = b.to(work, false).expand(bs);
    if (!tg.has(backend::strided_matmul)) {
        A = A.contiguous();
        B = B.contiguous();
    }
    tensor C = tensor::empty(cs, work, tg.where);
    if (C.numel() > 0) {
        const lock_ref ra(A, lock_mode::read, tg.where);
        const lock_ref rb(B, lock_mode::read, tg.where);
        const lock_ref w(C, lock_mode::write, tg.where);
        tg.be->matmul(C, w.data(), A, ra.data(), B, rb.data());
    }
    return work == dt ? C : C.to(dt);
}

void run_gather(const target& tg, const tensor& v, const tensor& out,
                const backend::index_rows& rows, int64_t out_row_bytes, const shape_t& rest,
                const shape_t& out_rest, const shape_t& src_rest, bool rows_inner) {
    const size_t isz = v.itemsize();
    const auto bytes = static_cast<int64_t>(isz);
    if (tg.has(backend::host_index_rows)) {
        const lock_ref rs(v, lock_mode::read, tg.where);
        const lock_ref w(out, lock_mode::write, tg.where);
        tg.be->gather(isz, rows, w.data(), out_row_bytes, rs.data(), rest,
                      in_bytes(out_rest, bytes), in_bytes(src_rest, bytes), rows_inner);
        return;
    }
    // Canonical: the byte offsets travel to the resource as a small int64 tensor.
    const tensor offs = tensor::from_vector(row_byte_offsets(rows));
    const lock_ref ro(offs, lock_mode::read, tg.where);
    const lock_ref rs(v, lock_mode::read, tg.where);
    const lock_ref w(out, lock_mode::write, tg.where);
    backend::index_rows at;
    at.off = static_cast<const int64_t*>(ro.data());
    at.count = rows.count;
    tg.be->gather(isz, at, w.data(), out_row_bytes, rs.data(), rest, in_bytes(out_rest, bytes),
                  in_bytes(src_rest, bytes), rows_inner);
}

void run_scatter(const target& tg, const tensor& v, const tensor& val,
                 const backend::index_rows& rows, int64_t val_row_bytes, const shape_t& rest,
                 const shape_t& dst_rest, const shape_t& val_rest, bool rows_inner) {
    const size_t isz = v.itemsize();
    const auto bytes = static_cast<int64_t>(isz);
    const shape_t dst_b = in_bytes(dst_rest, bytes), val_b = in_bytes(val_rest, bytes);
    if (tg.has(backend::host_index_rows)) {
        const lock_ref rv(val, lock_mode::read, tg.where);
        const lock_ref w(v, lock_mode::readwrite, tg.where);
        tg.be->scatter(isz, rows, w.data(), rv.data(), val_row_bytes, rest, dst_b, val_b,
                       rows_inner);
        return;
    }
    std::vector<int64_t> off = row_byte_offsets(rows);
    const int64_t n = rows.count;
    // the last row writing each target offset (all rows when none repeats)
    std::unordered_map<int64_t, int64_t> last;
    last.reserve(static_cast<size_t>(n));
    for (int64_t r = 0; r < n; ++r) last[off[static_cast<size_t>(r)]] = r;
    if (static_cast<int64_t>(last.size()) == n) {
        const tensor offs = tensor::from_vector(off);
        const lock_ref ro(offs, lock_mode::read, tg.where);
        const lock_ref rv(val, lock_mode::read, tg.where);
        const lock_ref w(v, lock_mode::readwrite, tg.where);
        backend::index_rows at;
        at.off = static_cast<const int64_t*>(ro.data());
        at.count = n;
        tg.be->scatter(isz, at, w.data(), rv.data(), val_row_bytes, rest, dst_b, val_b, rows_inner);
        return;
    }
    // Note [repeated scatter rows]
    // ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    // `a[[1, 1]] = [x, y]` leaves y, as NumPy's assignment (and the CPU's sequential loop) does; a
    // backend's parallel writes of one row would race. So only the last row writing each target
    // offset is kept: those value rows are gathered on the backend into a compact tensor, which is
    // then scattered without repeats.
    std::vector<int64_t> dst_off, src_off;
    for (int64_t r = 0; r < n; ++r)
        if (last[off[static_cast<size_t>(r)]] == r) {
            dst_off.push_back(off[static_cast<size_t>(r)]);
            src_off.push_back(r * val_row_bytes);
        }
    const auto kept = static_cast<int64_t>(dst_off.size());
    shape_t compact_shape{kept};
    compact_shape.insert(compact_shape.end(), rest.begin(), rest.end());
    const tensor compact = tensor::empty(compact_shape, v.dtype(), tg.where);
    const shape_t compact_rest =
        in_bytes(shape_t(compact.strides().begin() + 1, compact.strides().end()), bytes);
    const int64_t compact_row = compact.strides()[0] * bytes;
    const tensor dst_offs = tensor::from_vector(dst_off), src_offs = tensor::from_vector(src_off);
    const lock_ref rd(dst_offs, lock_mode::read, tg.where);
    const lock_ref rs(src_offs, lock_mode::read, tg.where);
    const lock_ref rv(val, lock_mode::read, tg.where);
    backend::index_rows dst_at, src_at;
    dst_at.off = static_cast<const int64_t*>(rd.data());
    dst_at.count = kept;
    src_at.off = static_cast<const int64_t*>(rs.data());
    src_at.count = kept;
    {
        const lock_ref wc(compact, lock_mode::write, tg.where);
        tg.be->gather(isz, src_at, wc.data(), compact_row, rv.data(), rest, compact_rest, val_b,
                      false);
    }
    const lock_ref rc(compact, lock_mode::read, tg.where);
    const lock_ref w(v, lock_mode::readwrite, tg.where);
    tg.be->scatter(isz, dst_at, w.data(), rc.data(), compact_row, rest, dst_b, compact_rest, false);
}

} // namespace isthmus::ops
