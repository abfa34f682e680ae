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

/// The ternary elementwise ops a backend may run.
enum class ternary_op : int {
    where, ///< out = a ? b : c, a of dtype bool, b, c and out of the op's dtype
    clamp, ///< out = minimum(maximum(a, b), c) (NaN propagates), all of the op's dtype
    fma,   ///< out = a * b + c, all of the op's dtype (bool: (a and b) or c)
};

/// The reductions a backend may run (the rest run on the CPU). argmin/argmax write the int64
/// index of the first extreme of each row (a NaN counts as the extreme).
enum class reduce_kind : int { sum, mean, min, max, prod, any, all, argmin, argmax };

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
    /// out = op(a, b, c) over `shape` with the op's dtype `dt` (see ternary_op); any operand
    /// may be a scalar or broadcast.
    virtual bool supports_ternary(ternary_op op, dtype dt) const = 0;
    virtual void ternary(ternary_op op, const shape_t& shape, const operand& out, const operand& a,
                         const operand& b, const operand& c) = 0;
    /// out = value (the scalar operand holds it, stored as out.dt).
    virtual bool supports_fill(dtype dt) const = 0;
    virtual void fill(const shape_t& shape, const operand& out, const operand& value) = 0;
    /// out = in converted to out.dt (strided on both sides).
    virtual bool supports_copy(dtype out, dtype in) const = 0;
    virtual void copy(const shape_t& shape, const operand& out, const operand& in) = 0;
    /// Reduces each row of a contiguous (rows, cols) `in` into the contiguous `out` of `rows`
    /// elements of dtype `out_dt` (the CPU's result dtype for the kind and input); mean divides
    /// by `cols`.
    virtual bool supports_reduce(reduce_kind kind, dtype in, dtype out) const = 0;
    virtual void reduce(reduce_kind kind, int64_t rows, int64_t cols, void* out, dtype out_dt,
                        const void* in, dtype in_dt) = 0;
    /// out = the running sum (or product when `prod`) along the middle axis of a contiguous
    /// (pre, len, post) `in`, both of dtype `dt` (the CPU's work dtypes: int64, uint64,
    /// float32, float64, complex).
    virtual bool supports_cumulative(bool prod, dtype dt) const = 0;
    virtual void cumulative(bool prod, int64_t pre, int64_t len, int64_t post, void* out,
                            const void* in, dtype dt) = 0;
    /// Advanced-index rows (Note [gpu index rows]): for each row r < rows, a block of elements of
    /// `itemsize` bytes shaped `rest`. gather: out + r * out_row + out_rest(i) receives
    /// src + row_off[r] + src_rest(i); scatter: dst + row_off[r] + dst_rest(i) receives
    /// val + r * val_row + val_rest(i), rows never repeating. row_off is a device array of
    /// byte offsets; all strides are in bytes.
    virtual bool supports_index(size_t itemsize) const = 0;
    virtual void gather(size_t itemsize, int64_t rows, const int64_t* row_off, void* out,
                        int64_t out_row, const void* src, const shape_t& rest,
                        const shape_t& out_rest, const shape_t& src_rest) = 0;
    virtual void scatter(size_t itemsize, int64_t rows, const int64_t* row_off, void* dst,
                         const void* val, int64_t val_row, const shape_t& rest,
                         const shape_t& dst_rest, const shape_t& val_rest) = 0;
    /// Random fills of `n` contiguous elements at `data` that equal the CPU generator's for the
    /// same seed and first Philox block (core/src/cpu/random.hpp): random_real for float16,
    /// bfloat16, float32, float64 (uniform in [a, b), or normal(a, b)); random_int for real
    /// dtypes (lo + [0, range)).
    virtual bool supports_random(dtype dt, bool integer) const = 0;
    virtual void random_real(dtype dt, bool normal, void* data, int64_t n, uint64_t seed,
                             uint64_t first_block, double a, double b) = 0;
    virtual void random_int(dtype dt, void* data, int64_t n, uint64_t seed, uint64_t first_block,
                            int64_t lo, uint64_t range) = 0;
    /// C[b] = A[b] @ B[b] for `batch` contiguous row-major (m, k) and (k, n) matrices, all of
    /// dtype `dt`; float16/bfloat16 accumulate in float32 and round once (Note [matmul dtypes]).
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
