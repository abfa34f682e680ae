// Internal: where an op runs (the scheduling rule), which backend runs it, and the one generic
// dispatch of each kind of kernel onto that backend (dispatch*.cpp).
#pragma once

#include "backend_registry.hpp"
#include "isthmus/backend.hpp"
#include "isthmus/memory.hpp"
#include "isthmus/tensor.hpp"
#include "isthmus/value.hpp"
#include "ops/elementwise_types.hpp"

#include <initializer_list>
#include <optional>
#include <span>

namespace isthmus::ops {

/// The resource an op with these inputs runs on.
///
/// Note [scheduling rule]
/// ~~~~~~~~~~~~~~~~~~~~~~
/// (1) a pinned input decides (its memory is shared with a foreign library, so results and in-place
/// writes belong there); (2) otherwise the resource where the inputs are valid, preferring the
/// default device (init's) when several qualify; (3) inputs valid nowhere in common go to the
/// default device. A resource with no compute backend falls back to the CPU. The rule is
/// deterministic and inspectable through tensor::location().
resource_id pick_resource(std::initializer_list<const tensor*> inputs);
resource_id pick_resource(std::span<const tensor* const> inputs);

/// A backend and the resource whose memory its kernels use.
struct target {
    resource_id where;
    backend::compute* be;
    bool has(backend::feature f) const noexcept { return (be->features() & f) != 0; }
};

/// The CPU backend's target.
inline target cpu_target() noexcept {
    return {MEMRESOURCE_CPU, &backend::cpu_compute()};
}

/// The backend that runs a kernel picked for `resource`.
///
/// Note [one dispatch]
/// ~~~~~~~~~~~~~~~~~~~
/// This is the whole fallback rule. An op asks the scheduling rule for a resource and this function
/// for its backend, with a predicate saying whether a backend can run the case (its supports_*
/// answers, plus whether the op's operands can be brought into a form it takes,
/// Note [canonical forms]). A backend that cannot hands the op to the CPU backend, which runs every
/// case (Note [cpu backend]); the op's inputs then reach the host through the coherence model when
/// they are locked there. Ops have no other device/host branches: each calls the backend interface
/// once, through the run_* helpers below or directly for kernels that need no conversion.
template <typename Supports>
target pick_backend(resource_id resource, Supports&& supports) {
    if (resource != MEMRESOURCE_CPU)
        if (backend::compute* be = backend::compute_at(resource); be && supports(*be))
            return {resource, be};
    return cpu_target();
}

/// Locks a tensor for the lifetime of the object and unlocks it on destruction. Keeps a copy
/// of the tensor handle (safe when the caller's tensor is a temporary).
class access {
public:
    access(const tensor& t, lock_mode mode, resource_id resource)
        : t_(t), mode_(mode), resource_(resource), ptr_(t.lock(mode, resource)) {}
    ~access() {
        try {
            t_.unlock(mode_, resource_);
        } catch (...) {
        }
    }
    access(const access&) = delete;
    access& operator=(const access&) = delete;
    /// Address of element 0 of the view.
    void* data() const noexcept { return ptr_; }
    template <typename T>
    T* as() const noexcept {
        return static_cast<T*>(ptr_);
    }

private:
    tensor t_;
    lock_mode mode_;
    resource_id resource_;
    void* ptr_;
};

/// Locks a tensor for the object's lifetime without copying its handle.
///
/// Note [small ops]
/// ~~~~~~~~~~~~~~~~
/// A 1k-element op must cost little more than allocating its output, so the dispatch avoids
/// per-call heap work: this keeps a pointer to the caller's tensor (which outlives the op) rather
/// than a copy of its shape and strides, and operands reuse the tensor's own strides unless they
/// are broadcast.
class lock_ref {
public:
    lock_ref(const tensor& t, lock_mode mode, resource_id resource)
        : t_(&t), mode_(mode), resource_(resource), data_(t.lock(mode, resource)) {}
    ~lock_ref() {
        try {
            t_->unlock(mode_, resource_);
        } catch (...) {
        }
    }
    lock_ref(const lock_ref&) = delete;
    lock_ref& operator=(const lock_ref&) = delete;
    void* data() const noexcept { return data_; }

private:
    const tensor* t_;
    lock_mode mode_;
    resource_id resource_;
    void* data_;
};

/// Write access to an op's fresh output on `resource`: the host copy directly when nobody else
/// can reach it (Note [fresh outputs] in isthmus/storage.hpp), else a write lock.
class output_access {
public:
    output_access(const tensor& t, resource_id resource) : t_(&t), resource_(resource) {
        if (resource == MEMRESOURCE_CPU)
            if (void* base = storage::fresh_host_data(t.storage())) {
                data_ = static_cast<char*>(base) + t.offset() * static_cast<int64_t>(t.itemsize());
                return;
            }
        data_ = t.lock(lock_mode::write, resource);
        locked_ = true;
    }
    ~output_access() {
        if (locked_) try {
                t_->unlock(lock_mode::write, resource_);
            } catch (...) {
            }
    }
    output_access(const output_access&) = delete;
    output_access& operator=(const output_access&) = delete;
    void* data() const noexcept { return data_; }

private:
    const tensor* t_;
    resource_id resource_;
    void* data_ = nullptr;
    bool locked_ = false;
};

/// Host read access (host-side preparation: index arrays, masks).
inline access read_host(const tensor& t) {
    return access(t, lock_mode::read, MEMRESOURCE_CPU);
}
/// Host write access (host-side results: nonzero's coordinates).
inline access write_host(const tensor& t) {
    return access(t, lock_mode::write, MEMRESOURCE_CPU);
}

// ---- the generic dispatch of each kernel kind (dispatch_elementwise.cpp, dispatch_kernels.cpp)

/// An elementwise input: a tensor, or a scalar with the dtype it takes beside the op's tensors
/// (NEP 50's weak dtype).
struct ew_input {
    const tensor* t = nullptr;
    const scalar* s = nullptr;
    dtype dt = dtype::bool_;
    ew_input(const tensor& x) : t(&x), dt(x.dtype()) {}
    ew_input(const scalar& x, dtype d) : s(&x), dt(d) {}
};

/// A new result of `sig` over the broadcast `shape`, laid out by new_output from `layout`.
tensor run_binary(const binary_signature& sig, const shape_t& shape, ew_input a, ew_input b,
                  std::initializer_list<const tensor*> layout);
/// target = op(target, b), the result stored in target's dtype.
void run_binary_into(const binary_signature& sig, const tensor& target, ew_input b);
/// A new result of op(a) computing in `compute`, of dtype `result`.
tensor run_unary(unary_op op, dtype compute, dtype result, const tensor& a);
/// target = op(target).
void run_unary_into(unary_op op, dtype compute, dtype result, const tensor& target);
/// A new result of op(a, b, c) of dtype `dt` over `shape` (see backend::ternary_op).
tensor run_ternary(backend::ternary_op op, dtype dt, const shape_t& shape, ew_input a, ew_input b,
                   ew_input c, std::initializer_list<const tensor*> layout);
/// target = op(target, b, c), computing in `dt`.
void run_ternary_into(backend::ternary_op op, dtype dt, const tensor& target, ew_input b,
                      ew_input c);
/// Every element of `t` = value (converted to t's dtype); `t` is not empty.
void run_fill(const tensor& t, const scalar& value);
/// dst = src, `src` already broadcast to dst's shape and not sharing its storage; not empty.
void run_copy(const tensor& dst, const tensor& src);

/// A reduction of `t` over the dimensions marked in `reduced` into a new tensor of shape `kept`
/// and dtype `out_dt`.
tensor run_reduce(backend::reduce_kind kind, const tensor& t, const std::vector<bool>& reduced,
                  const shape_t& kept, dtype out_dt);
/// var/std of `x` by the backend's variance kernel into a new tensor of shape `kept` and dtype
/// `out_dt`, or nullopt when the picked backend has none (the op composes it).
std::optional<tensor> run_variance(const tensor& x, const std::vector<bool>& reduced,
                                   const shape_t& kept, dtype out_dt, double divisor, bool root);
/// The running sum or product of the contiguous `x` (of a cumulative work dtype) along `axis`.
tensor run_cumulative(bool prod, const tensor& x, int64_t axis);
/// Sorts the rows (last dimension) of the contiguous, non-empty `x` (Note [sort order]): the
/// sorted values when `values`, the int64 positions when `indices` (else undefined tensors).
std::pair<tensor, tensor> run_sort(const tensor& x, bool values, bool indices, bool descending);
/// The insertion points of the contiguous `values` in the contiguous, non-empty 1-d `sorted`
/// of the same dtype: a new int64 tensor of values' shape.
tensor run_searchsorted(const tensor& sorted, const tensor& values, bool right);
/// C = A @ B of dtype `dt` for A (..., m, k) and B (..., k, n) whose batch dimensions broadcast
/// to `batch`: a new contiguous (batch..., m, n) tensor.
tensor run_matmul(dtype dt, const tensor& a, const tensor& b, const shape_t& batch);
/// The gather of an advanced index on `tg`: row r of `out` (allocated on tg.where, at
/// r * out_row_bytes, its `rest` elements at out_rest strides) receives the row of `v` that
/// `rows` (host memory) locates, its rest at src_rest strides; strides in elements.
void run_gather(const target& tg, const tensor& v, const tensor& out,
                const backend::index_rows& rows, int64_t out_row_bytes, const shape_t& rest,
                const shape_t& out_rest, const shape_t& src_rest, bool rows_inner);
/// The scatter of an advanced index on `tg` (the same layout, values `val` read at
/// val_row_bytes per row; repeated rows keep the last value, as NumPy).
void run_scatter(const target& tg, const tensor& v, const tensor& val,
                 const backend::index_rows& rows, int64_t val_row_bytes, const shape_t& rest,
                 const shape_t& dst_rest, const shape_t& val_rest, bool rows_inner);

} // namespace isthmus::ops
