// Compute backends for device resources: the interface a backend module (CUDA) implements.
#pragma once

#include "isthmus/dtype.hpp"
#include "isthmus/export.hpp"
#include "isthmus/memory.hpp"
#include "isthmus/ops/elementwise.hpp"
#include "isthmus/tensor.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace isthmus::backend {

/// One operand of a device kernel: the address of element 0 (locked on the backend's resource
/// by the op layer), its dtype and its strides in elements over the op's shape. A scalar operand
/// has data == nullptr and its value stored as `dt` in `value`.
struct operand {
    const void* data = nullptr;
    dtype dt = dtype::float32;
    const shape_t* strides = nullptr;
    alignas(16) unsigned char value[16] = {};
};

/// The reductions a backend may run (the rest run on the CPU).
enum class reduce_kind : int { sum, mean, min, max };

/// A compute backend for one memory resource.
///
/// Note [backend contract]: the op layer (core/src/ops) does the checks, broadcasting, dtype
/// promotion and output allocation; it asks `supports_*` first, locks the operands on the
/// backend's resource, calls the kernel entry and unlocks. Kernels may run asynchronously (the
/// CUDA backend enqueues them on the device's stream): a later lock on the host reaches the
/// data through the resource's copy_to_host, which waits for the queued work. An op the
/// backend does not support runs on the CPU through the coherence model instead.
class ISTHMUS_API compute {
public:
    virtual ~compute();
    /// The backend's name for messages ("cuda:0").
    virtual std::string name() const = 0;

    /// out = op(a, b) with a.dt == b.dt == `dt` (the op's compute dtype), out of the op's
    /// result dtype, all of `shape` (operands may broadcast with stride 0).
    virtual bool supports_binary(binary_op op, dtype dt) const = 0;
    virtual void binary(binary_op op, const shape_t& shape, const operand& out, const operand& a,
                        const operand& b) = 0;
    /// out = op(a) with a.dt == `dt` (the op's compute dtype).
    virtual bool supports_unary(unary_op op, dtype dt) const = 0;
    virtual void unary(unary_op op, const shape_t& shape, const operand& out, const operand& a) = 0;
    /// out = value (the scalar operand holds it, stored as out.dt).
    virtual bool supports_fill(dtype dt) const = 0;
    virtual void fill(const shape_t& shape, const operand& out, const operand& value) = 0;
    /// out = in converted to out.dt (strided on both sides).
    virtual bool supports_copy(dtype out, dtype in) const = 0;
    virtual void copy(const shape_t& shape, const operand& out, const operand& in) = 0;
    /// Reduces each row of a contiguous (rows, cols) `in` into the contiguous `out` of `rows`
    /// elements of dtype `out_dt`; mean divides by `cols`.
    virtual bool supports_reduce(reduce_kind kind, dtype in, dtype out) const = 0;
    virtual void reduce(reduce_kind kind, int64_t rows, int64_t cols, void* out, dtype out_dt,
                        const void* in, dtype in_dt) = 0;
    /// C[b] = A[b] @ B[b] for `batch` contiguous row-major (m, k) and (k, n) matrices.
    virtual bool supports_matmul(dtype dt) const = 0;
    virtual void matmul(dtype dt, int64_t batch, int64_t m, int64_t n, int64_t k, const void* a,
                        const void* b, void* c) = 0;
};

/// Registers the compute backend of `resource` (a device slot) and marks the slot as having a
/// backend for the scheduling rule; nullptr removes it.
ISTHMUS_API void register_compute(resource_id resource, std::shared_ptr<compute> backend);
/// The backend of `resource`, or nullptr (always nullptr for the CPU, whose kernels are built in).
ISTHMUS_API std::shared_ptr<compute> find_compute(resource_id resource) noexcept;

} // namespace isthmus::backend
