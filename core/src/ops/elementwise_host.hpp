// Internal: elementwise operands made ready for the CPU backend (host locks, scalar buffers).
#pragma once

#include "cpu/elementwise.hpp"
#include "ops/device_ops.hpp"
#include "ops/dispatch.hpp"
#include "ops/elementwise_types.hpp"

#include <optional>

namespace isthmus::ops {

/// Locks a tensor on the host for the object's lifetime.
///
/// Note [small ops]: a 1k-element op must cost little more than allocating its output, so the
/// op layer avoids per-call heap work: unlike ops::access this keeps a pointer to the caller's
/// tensor (which outlives the op) rather than a copy of its shape and strides, and operands
/// reuse the tensor's own strides unless they are broadcast.
class host_lock {
public:
    host_lock(const tensor& t, lock_mode mode)
        : t_(&t), mode_(mode), data_(static_cast<char*>(t.lock(mode, MEMRESOURCE_CPU))) {}
    ~host_lock() {
        try {
            t_->unlock(mode_, MEMRESOURCE_CPU);
        } catch (...) {
        }
    }
    host_lock(const host_lock&) = delete;
    host_lock& operator=(const host_lock&) = delete;
    char* data() const noexcept { return data_; }

private:
    const tensor* t_;
    lock_mode mode_;
    char* data_;
};

/// A tensor or scalar operand of an elementwise op, ready for a CPU kernel: a tensor is locked
/// for reading on the host for the object's lifetime; a scalar is converted into an inline
/// buffer (no allocation) and read with stride 0. Strides are over the op's broadcast shape.
class host_operand {
public:
    host_operand(const tensor& t, const shape_t& shape) : dt_(t.dtype()) {
        if (t.shape() == shape) {
            strides_ = &t.strides();
        } else {
            own_ = broadcast_strides(t, shape);
            strides_ = &own_;
        }
        lock_.emplace(t, lock_mode::read);
        data_ = lock_->data();
    }
    host_operand(const scalar& s, dtype dt, const shape_t&)
        : strides_(&zero_strides()), dt_(dt), data_(reinterpret_cast<char*>(buf_)) {
        cpu::store_scalar(s, dt, buf_);
    }
    host_operand(const host_operand&) = delete;
    host_operand& operator=(const host_operand&) = delete;

    cpu::operand get() const { return {data_, dt_, strides_}; }

private:
    // Stride 0 for every dimension of any rank, shared by all scalar operands (no allocation).
    static const shape_t& zero_strides() {
        static const shape_t zeros(max_rank, 0);
        return zeros;
    }

    std::optional<host_lock> lock_;
    alignas(16) unsigned char buf_[16];
    shape_t own_;
    const shape_t* strides_;
    dtype dt_;
    char* data_ = nullptr;
};

/// The resource an elementwise op runs on.
///
/// Note [elementwise device]: ops ask the scheduling rule (pick_resource) where to run;
/// pick_resource maps resources without a backend to the CPU. Ops with a device branch
/// (ops/device_ops.hpp: binary and unary arithmetic and math) try it when the answer is a
/// device; the others, and cases the device has no kernel for, run on the CPU: inputs are
/// locked for reading there and outputs allocated and locked for writing there.
inline resource_id elementwise_device(std::initializer_list<const tensor*> inputs) {
    return pick_resource(inputs);
}

/// Throws type_error unless a `result` can be stored into a `target` dtype in place.
inline void check_inplace_cast(dtype result, dtype target, std::string_view what) {
    ISTHMUS_CHECK(can_cast_same_kind(result, target), type_error, what, ": cannot store the ",
                  result, " result in place into a ", target,
                  " tensor (NumPy's same_kind casting rule)");
}

} // namespace isthmus::ops
