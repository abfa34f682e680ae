// Device branches of the ops: locks on the backend's resource, dtype conversion, kernel calls.
#include "ops/device_ops.hpp"

#include "cpu/elementwise.hpp"
#include "cpu/gather.hpp"
#include "ops/elementwise_types.hpp"

#include <algorithm>
#include <unordered_map>
#include <vector>

namespace isthmus::ops {

namespace {

// An operand over `shape` for a tensor locked at `data` (broadcast strides when needed).
struct dev_operand {
    backend::operand op;
    shape_t strides;
    dev_operand(const tensor& t, const void* data, const shape_t& shape) {
        strides = t.shape() == shape ? t.strides() : broadcast_strides(t, shape);
        op.data = data;
        op.dt = t.dtype();
        op.strides = &strides;
    }
    dev_operand(const scalar& s, dtype dt) {
        op.data = nullptr;
        op.dt = dt;
        op.strides = nullptr;
        cpu::store_scalar(s, dt, op.value);
    }
};

tensor as_compute(const tensor& t, dtype dt) {
    return t.dtype() == dt ? t : t.to(dt);
}

// The byte offsets of advanced-index rows (indices already checked on the host).
std::vector<int64_t> row_byte_offsets(const cpu::row_offsets& at, int64_t rows) {
    std::vector<int64_t> off(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
        if (at.off) {
            off[static_cast<size_t>(r)] = at.off[r];
        } else {
            const int64_t i = at.idx[r] < 0 ? at.idx[r] + at.size : at.idx[r];
            off[static_cast<size_t>(r)] = i * at.stride_bytes;
        }
    }
    return off;
}

shape_t in_bytes(const shape_t& strides, int64_t itemsize) {
    shape_t b = strides;
    for (int64_t& s : b) s *= itemsize;
    return b;
}

} // namespace

bool device_binary(resource_id where, binary_op op, dtype compute, dtype result,
                   const shape_t& shape, device_input a, device_input b, tensor& out,
                   bool inplace) {
    const auto be = device_compute(where);
    if (!be || !be->supports_binary(op, compute)) return false;
    if (result != compute && result != dtype::bool_) return false;
    if (inplace && out.dtype() != result) return false;
    if (!be->supports_copy(compute, a.t ? a.t->dtype() : compute) ||
        !be->supports_copy(compute, b.t ? b.t->dtype() : compute))
        return false;
    tensor x, y;
    if (a.t) x = inplace ? *a.t : as_compute(*a.t, compute);
    if (b.t) y = as_compute(*b.t, compute);
    if (!inplace)
        out = a.t && b.t ? new_output(shape, result, where, {a.t, b.t})
                         : new_output(shape, result, where, {a.t ? a.t : b.t});
    if (out.numel() == 0) return true;
    std::optional<access> ra, rb;
    std::optional<dev_operand> oa, ob;
    access w(out, inplace ? lock_mode::readwrite : lock_mode::write, where);
    if (a.t && !inplace) {
        ra.emplace(x, lock_mode::read, where);
        oa.emplace(x, ra->data(), shape);
    } else if (a.t) {
        oa.emplace(out, w.data(), shape);
    } else {
        oa.emplace(*a.s, compute);
    }
    if (b.t) {
        rb.emplace(y, lock_mode::read, where);
        ob.emplace(y, rb->data(), shape);
    } else {
        ob.emplace(*b.s, compute);
    }
    const dev_operand o(out, w.data(), shape);
    be->binary(op, shape, o.op, oa->op, ob->op);
    return true;
}

bool device_unary(resource_id where, unary_op op, dtype compute, dtype result, const tensor& a,
                  tensor& out, bool inplace) {
    const auto be = device_compute(where);
    if (!be || !be->supports_unary(op, compute)) return false;
    if (result != compute && result != dtype::bool_ &&
        !(is_complex(compute) && result == real_dtype(compute))) // abs of a complex
        return false;
    if (inplace && (out.dtype() != result || a.dtype() != compute)) return false;
    if (!be->supports_copy(compute, a.dtype())) return false;
    const tensor x = inplace ? a : as_compute(a, compute);
    if (!inplace) out = new_output(a.shape(), result, where, {&a});
    if (out.numel() == 0) return true;
    access w(out, inplace ? lock_mode::readwrite : lock_mode::write, where);
    std::optional<access> r;
    if (!inplace) r.emplace(x, lock_mode::read, where);
    const dev_operand in(x, inplace ? w.data() : r->data(), a.shape());
    const dev_operand o(out, w.data(), a.shape());
    be->unary(op, a.shape(), o.op, in.op);
    return true;
}

bool device_ternary(resource_id where, backend::ternary_op op, dtype dt, const shape_t& shape,
                    device_input a, device_input b, device_input c, tensor& out, bool inplace,
                    std::initializer_list<const tensor*> layout) {
    const auto be = device_compute(where);
    if (!be || !be->supports_ternary(op, dt)) return false;
    const dtype at = op == backend::ternary_op::where ? dtype::bool_ : dt;
    if (inplace && (out.dtype() != dt || !a.t)) return false;
    // inputs in their op dtypes, converted on the device (tensors only: scalars are stored
    // in the op dtype directly)
    tensor x, y, z;
    if (a.t) x = inplace ? *a.t : as_compute(*a.t, at);
    if (b.t) y = as_compute(*b.t, dt);
    if (c.t) z = as_compute(*c.t, dt);
    if (!inplace) out = new_output(shape, dt, where, layout);
    if (out.numel() == 0) return true;
    access w(out, inplace ? lock_mode::readwrite : lock_mode::write, where);
    std::optional<access> ra, rb, rc;
    std::optional<dev_operand> oa, ob, oc;
    if (a.t && inplace) {
        oa.emplace(out, w.data(), shape);
    } else if (a.t) {
        ra.emplace(x, lock_mode::read, where);
        oa.emplace(x, ra->data(), shape);
    } else {
        oa.emplace(*a.s, at);
    }
    if (b.t) {
        rb.emplace(y, lock_mode::read, where);
        ob.emplace(y, rb->data(), shape);
    } else {
        ob.emplace(*b.s, dt);
    }
    if (c.t) {
        rc.emplace(z, lock_mode::read, where);
        oc.emplace(z, rc->data(), shape);
    } else {
        oc.emplace(*c.s, dt);
    }
    const dev_operand o(out, w.data(), shape);
    be->ternary(op, shape, o.op, oa->op, ob->op, oc->op);
    return true;
}

bool device_gather(resource_id where, const tensor& v, const tensor& out,
                   const cpu::row_offsets& at, int64_t rows, int64_t out_row_bytes,
                   const shape_t& rest, const shape_t& out_rest, const shape_t& src_rest) {
    const auto be = device_compute(where);
    if (!be || !be->supports_index(v.itemsize())) return false;
    const auto isz = static_cast<int64_t>(v.itemsize());
    // the offsets travel to the device as a small int64 tensor (freed into the stream-ordered
    // cache once the kernel is queued)
    const tensor offs = tensor::from_vector(row_byte_offsets(at, rows));
    access ro(offs, lock_mode::read, where);
    access rs(v, lock_mode::read, where);
    access w(out, lock_mode::write, where);
    be->gather(v.itemsize(), rows, ro.as<const int64_t>(), w.data(), out_row_bytes, rs.data(), rest,
               in_bytes(out_rest, isz), in_bytes(src_rest, isz));
    return true;
}

bool device_scatter(resource_id where, const tensor& v, const tensor& val,
                    const cpu::row_offsets& at, int64_t rows, int64_t val_row_bytes,
                    const shape_t& rest, const shape_t& dst_rest, const shape_t& val_rest) {
    const auto be = device_compute(where);
    if (!be || !be->supports_index(v.itemsize())) return false;
    std::vector<int64_t> off = row_byte_offsets(at, rows);
    const auto isz = static_cast<int64_t>(v.itemsize());
    // the last row writing each target offset (all rows when none repeats)
    std::unordered_map<int64_t, int64_t> last;
    last.reserve(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) last[off[static_cast<size_t>(r)]] = r;
    if (static_cast<int64_t>(last.size()) == rows) {
        const tensor offs = tensor::from_vector(off);
        access ro(offs, lock_mode::read, where);
        access rv(val, lock_mode::read, where);
        access w(v, lock_mode::readwrite, where);
        be->scatter(v.itemsize(), rows, ro.as<const int64_t>(), w.data(), rv.data(), val_row_bytes,
                    rest, in_bytes(dst_rest, isz), in_bytes(val_rest, isz));
        return true;
    }
    // Note [repeated scatter rows]: `a[[1, 1]] = [x, y]` leaves y, as NumPy's assignment (and
    // the CPU's sequential loop) does; parallel writes of one row would race. So only the last
    // row writing each target offset is kept: those value rows are gathered on the device into
    // a compact tensor, which is then scattered without repeats.
    std::vector<int64_t> dst_off, src_off;
    for (int64_t r = 0; r < rows; ++r)
        if (last[off[static_cast<size_t>(r)]] == r) {
            dst_off.push_back(off[static_cast<size_t>(r)]);
            src_off.push_back(r * val_row_bytes);
        }
    const auto kept = static_cast<int64_t>(dst_off.size());
    shape_t compact_shape{kept};
    compact_shape.insert(compact_shape.end(), rest.begin(), rest.end());
    const tensor compact = tensor::empty(compact_shape, v.dtype(), where);
    const shape_t compact_rest(compact.strides().begin() + 1, compact.strides().end());
    const int64_t compact_row = compact.strides()[0] * isz;
    const tensor dst_offs = tensor::from_vector(dst_off), src_offs = tensor::from_vector(src_off);
    access rd(dst_offs, lock_mode::read, where);
    access rs(src_offs, lock_mode::read, where);
    access rv(val, lock_mode::read, where);
    {
        access wc(compact, lock_mode::write, where);
        be->gather(v.itemsize(), kept, rs.as<const int64_t>(), wc.data(), compact_row, rv.data(),
                   rest, in_bytes(compact_rest, isz), in_bytes(val_rest, isz));
    }
    access rc(compact, lock_mode::read, where);
    access w(v, lock_mode::readwrite, where);
    be->scatter(v.itemsize(), kept, rd.as<const int64_t>(), w.data(), rc.data(), compact_row, rest,
                in_bytes(dst_rest, isz), in_bytes(compact_rest, isz));
    return true;
}

bool device_fill(const tensor& t, const scalar& value) {
    const resource_id where = pick_resource({&t});
    const auto be = device_compute(where);
    if (!be || !be->supports_fill(t.dtype())) return false;
    access w(t, lock_mode::write, where);
    const dev_operand o(t, w.data(), t.shape());
    const dev_operand v(value, t.dtype());
    be->fill(t.shape(), o.op, v.op);
    return true;
}

bool device_copy(const tensor& dst, const tensor& src) {
    const resource_id where = pick_resource({&dst, &src});
    const auto be = device_compute(where);
    if (!be || !be->supports_copy(dst.dtype(), src.dtype())) return false;
    access r(src, lock_mode::read, where);
    access w(dst, lock_mode::write, where);
    const dev_operand in(src, r.data(), dst.shape());
    const dev_operand o(dst, w.data(), dst.shape());
    be->copy(dst.shape(), o.op, in.op);
    return true;
}

std::optional<tensor> device_reduce(resource_id where, backend::reduce_kind kind, const tensor& t,
                                    const std::vector<bool>& reduced, const shape_t& kept,
                                    dtype out_dt) {
    const auto be = device_compute(where);
    if (!be || !be->supports_reduce(kind, t.dtype(), out_dt)) return std::nullopt;
    // Kept dimensions first, reduced ones last, made contiguous on the device: rows x cols.
    shape_t perm;
    int64_t cols = 1;
    for (size_t d = 0; d < reduced.size(); ++d)
        if (!reduced[d]) perm.push_back(static_cast<int64_t>(d));
    for (size_t d = 0; d < reduced.size(); ++d)
        if (reduced[d]) {
            perm.push_back(static_cast<int64_t>(d));
            cols *= t.shape()[d];
        }
    const tensor x = t.permute(perm).contiguous();
    tensor out = tensor::empty(kept, out_dt, where);
    const int64_t rows = numel_of(kept);
    if (rows == 0) return out;
    access r(x, lock_mode::read, where);
    access w(out, lock_mode::write, where);
    be->reduce(kind, rows, cols, w.data(), out_dt, r.data(), x.dtype());
    return out;
}

std::optional<tensor> device_matmul(resource_id where, dtype dt, const tensor& a, const tensor& b,
                                    const shape_t& batch) {
    const auto be = device_compute(where);
    if (!be) return std::nullopt;
    // Note [matmul dtypes] (linalg.cpp): half types multiply with float32 accumulation. A
    // backend with a half gemm takes them as they are; otherwise they are widened to float32
    // on the device and the result rounded back once.
    dtype work = dt;
    if (!be->supports_matmul(dt)) {
        if (!(is_floating(dt) && itemsize(dt) == 2) || !be->supports_matmul(dtype::float32))
            return std::nullopt;
        work = dtype::float32;
    }
    const tensor A = as_compute(a, work).contiguous(), B = as_compute(b, work).contiguous();
    const int64_t m = A.size(-2), k = A.size(-1), n = B.size(-1);
    shape_t cs = batch;
    cs.push_back(m);
    cs.push_back(n);
    tensor C = tensor::empty(cs, work, where);
    if (C.numel() > 0) {
        access ra(A, lock_mode::read, where);
        access rb(B, lock_mode::read, where);
        access w(C, lock_mode::write, where);
        be->matmul(work, numel_of(batch), m, n, k, ra.data(), rb.data(), w.data());
    }
    return work == dt ? C : C.to(dt);
}

} // namespace isthmus::ops
