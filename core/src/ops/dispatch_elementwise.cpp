// The generic dispatch of elementwise kernels, fill and copy (Note [one dispatch]): the backend,
// conversions to its canonical form, output allocation, locks and the one kernel call.
#include "ops/dispatch.hpp"
#include "scalar_store.hpp"

namespace isthmus::ops {

namespace {

bool takes_mixed(const backend::compute& be) {
    return (be.features() & backend::mixed_dtypes) != 0;
}

// True when a canonical backend can have `x` in dtype `dt`: it already is, it is a scalar
// (stored in dt directly), or the backend converts it with a copy.
bool convertible(const backend::compute& be, const ew_input& x, dtype dt) {
    return !x.t || x.t->dtype() == dt || be.supports_copy(dt, x.t->dtype());
}

// Brings `x` into dtype `dt` for a canonical backend (Note [canonical forms]): a tensor is cast
// by a copy where its data is (held in `holder`), a scalar is stored in dt.
void to_canonical(ew_input& x, dtype dt, tensor& holder) {
    if (x.t && x.t->dtype() != dt) {
        holder = x.t->to(dt);
        x.t = &holder;
    }
    x.dt = dt;
}

// One operand of a kernel call over `shape`: a tensor locked for reading on the backend's
// resource for the object's lifetime, or a scalar stored inline. Broadcast strides are made
// only when the tensor's shape differs from the op's (See Note [small ops]).
class ew_operand {
public:
    ew_operand(const ew_input& x, resource_id where, const shape_t& shape) {
        if (x.t) {
            lock_.emplace(*x.t, lock_mode::read, where);
            point_at(*x.t, lock_->data(), shape);
        } else {
            op_.dt = x.dt;
            store_scalar(*x.s, x.dt, op_.value);
        }
    }
    // An operand onto memory the caller has locked (outputs, in-place targets).
    ew_operand(const tensor& t, void* data, const shape_t& shape) { point_at(t, data, shape); }
    ew_operand(const ew_operand&) = delete;
    ew_operand& operator=(const ew_operand&) = delete;

    const backend::operand& get() const noexcept { return op_; }

private:
    void point_at(const tensor& t, void* data, const shape_t& shape) {
        op_.data = data;
        op_.dt = t.dtype();
        if (same_shape(t.shape(), shape)) {
            op_.strides = &t.strides();
        } else {
            own_ = broadcast_strides(t, shape);
            op_.strides = &own_;
        }
    }

    std::optional<lock_ref> lock_;
    backend::operand op_;
    shape_t own_;
};

// The dtype where's condition or clamp's and fma's first input has in the canonical form.
dtype first_dtype(backend::ternary_op op, dtype dt) {
    return op == backend::ternary_op::where ? dtype::bool_ : dt;
}

} // namespace

tensor run_binary(const binary_signature& sig, const shape_t& shape, ew_input a, ew_input b,
                  std::initializer_list<const tensor*> layout) {
    const dtype dt = sig.compute;
    const auto tg = pick_backend(pick_resource({a.t, b.t}), [&](const backend::compute& be) {
        if (!be.supports_binary(sig.op, dt)) return false;
        if (takes_mixed(be)) return true;
        return (sig.result == dt || sig.result == dtype::bool_) && convertible(be, a, dt) &&
               convertible(be, b, dt);
    });
    tensor ca, cb;
    if (!tg.has(backend::mixed_dtypes)) {
        to_canonical(a, dt, ca);
        to_canonical(b, dt, cb);
    }
    tensor out = new_output(shape, sig.result, tg.where, layout);
    if (out.numel() == 0) return out;
    const ew_operand x(a, tg.where, shape), y(b, tg.where, shape);
    const output_access w(out, tg.where);
    const ew_operand o(out, w.data(), shape);
    tg.be->binary(sig.op, dt, shape, o.get(), x.get(), y.get());
    return out;
}

void run_binary_into(const binary_signature& sig, const tensor& target, ew_input b) {
    const dtype dt = sig.compute;
    const auto tg = pick_backend(pick_resource({&target, b.t}), [&](const backend::compute& be) {
        if (!be.supports_binary(sig.op, dt)) return false;
        if (takes_mixed(be)) return true;
        // the target is both the first input and the output: it must have the compute dtype
        return target.dtype() == dt && sig.result == dt && convertible(be, b, dt);
    });
    tensor cb;
    if (!tg.has(backend::mixed_dtypes)) to_canonical(b, dt, cb);
    const shape_t& shape = target.shape();
    const ew_operand y(b, tg.where, shape);
    const lock_ref rw(target, lock_mode::readwrite, tg.where);
    const ew_operand t(target, rw.data(), shape);
    tg.be->binary(sig.op, dt, shape, t.get(), t.get(), y.get());
}

tensor run_unary(unary_op op, dtype compute, dtype result, const tensor& a) {
    const auto tg = pick_backend(pick_resource({&a}), [&](const backend::compute& be) {
        if (!be.supports_unary(op, compute)) return false;
        if (takes_mixed(be)) return true;
        const bool natural = result == compute || result == dtype::bool_ ||
                             (is_complex(compute) && result == real_dtype(compute));
        return natural && (a.dtype() == compute || be.supports_copy(compute, a.dtype()));
    });
    ew_input x(a);
    tensor cx;
    if (!tg.has(backend::mixed_dtypes)) to_canonical(x, compute, cx);
    tensor out = new_output(a.shape(), result, tg.where, {&a});
    if (out.numel() == 0) return out;
    const ew_operand in(x, tg.where, a.shape());
    const output_access w(out, tg.where);
    const ew_operand o(out, w.data(), a.shape());
    tg.be->unary(op, compute, a.shape(), o.get(), in.get());
    return out;
}

void run_unary_into(unary_op op, dtype compute, dtype result, const tensor& target) {
    const auto tg = pick_backend(pick_resource({&target}), [&](const backend::compute& be) {
        if (!be.supports_unary(op, compute)) return false;
        return takes_mixed(be) || (target.dtype() == compute && result == compute);
    });
    const lock_ref rw(target, lock_mode::readwrite, tg.where);
    const ew_operand t(target, rw.data(), target.shape());
    tg.be->unary(op, compute, target.shape(), t.get(), t.get());
}

tensor run_ternary(backend::ternary_op op, dtype dt, const shape_t& shape, ew_input a, ew_input b,
                   ew_input c, std::initializer_list<const tensor*> layout) {
    const dtype at = first_dtype(op, dt);
    const auto tg = pick_backend(pick_resource({a.t, b.t, c.t}), [&](const backend::compute& be) {
        if (!be.supports_ternary(op, dt)) return false;
        if (takes_mixed(be)) return true;
        return convertible(be, a, at) && convertible(be, b, dt) && convertible(be, c, dt);
    });
    tensor ca, cb, cc;
    if (!tg.has(backend::mixed_dtypes)) {
        to_canonical(a, at, ca);
        to_canonical(b, dt, cb);
        to_canonical(c, dt, cc);
    }
    tensor out = new_output(shape, dt, tg.where, layout);
    if (out.numel() == 0) return out;
    const ew_operand x(a, tg.where, shape), y(b, tg.where, shape), z(c, tg.where, shape);
    const output_access w(out, tg.where);
    const ew_operand o(out, w.data(), shape);
    tg.be->ternary(op, dt, shape, o.get(), x.get(), y.get(), z.get());
    return out;
}

void run_ternary_into(backend::ternary_op op, dtype dt, const tensor& target, ew_input b,
                      ew_input c) {
    ISTHMUS_ASSERT(op != backend::ternary_op::where, "where has no in-place form");
    const auto tg =
        pick_backend(pick_resource({&target, b.t, c.t}), [&](const backend::compute& be) {
            if (!be.supports_ternary(op, dt)) return false;
            if (takes_mixed(be)) return true;
            return target.dtype() == dt && convertible(be, b, dt) && convertible(be, c, dt);
        });
    tensor cb, cc;
    if (!tg.has(backend::mixed_dtypes)) {
        to_canonical(b, dt, cb);
        to_canonical(c, dt, cc);
    }
    const shape_t& shape = target.shape();
    const ew_operand y(b, tg.where, shape), z(c, tg.where, shape);
    const lock_ref rw(target, lock_mode::readwrite, tg.where);
    const ew_operand t(target, rw.data(), shape);
    tg.be->ternary(op, dt, shape, t.get(), t.get(), y.get(), z.get());
}

void run_fill(const tensor& t, const scalar& value) {
    const auto tg = pick_backend(pick_resource({&t}), [&](const backend::compute& be) {
        return be.supports_fill(t.dtype());
    });
    backend::operand v;
    v.dt = t.dtype();
    store_scalar(value, t.dtype(), v.value);
    const lock_ref w(t, lock_mode::write, tg.where);
    tg.be->fill(t, w.data(), v);
}

void run_copy(const tensor& dst, const tensor& src) {
    const auto tg = pick_backend(pick_resource({&dst, &src}), [&](const backend::compute& be) {
        return be.supports_copy(dst.dtype(), src.dtype());
    });
    const lock_ref r(src, lock_mode::read, tg.where);
    const lock_ref w(dst, lock_mode::write, tg.where);
    tg.be->copy(dst, w.data(), src, r.data());
}

} // namespace isthmus::ops
