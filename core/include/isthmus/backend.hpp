// Compute backends: the one interface every backend implements, the CPU's included.
#pragma once

#include "isthmus/dtype.hpp"
#include "isthmus/export.hpp"
#include "isthmus/memory.hpp"
#include "isthmus/ops/elementwise.hpp"
#include "isthmus/tensor.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace isthmus::backend {

/// One operand of an elementwise kernel: the address of element 0 (locked on the backend's
/// resource by the op layer), its dtype and its strides in elements over the op's shape. A
/// scalar operand has data == nullptr and its value stored as `dt` in `value`.
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

/// The reductions a backend may run. mean divides by the number of elements reduced into each
/// output; argmin/argmax reduce exactly one dimension and write the int64 index of its first
/// extreme (a NaN counts as the extreme).
enum class reduce_kind : int { sum, mean, min, max, prod, any, all, argmin, argmax };

/// What a backend's kernels accept beyond the canonical forms (a bit set, see
/// Note [canonical forms]).
enum feature : unsigned {
    /// Elementwise operands (tensors and scalars) and outputs of any dtype: the kernel converts
    /// inputs to the op's compute dtype and its result to the output's dtype (the CPU converts
    /// per block, Note [elementwise conversion]).
    mixed_dtypes = 1u << 0,
    /// Reductions read inputs of any strides over any set of dimensions and write outputs of
    /// any strides.
    strided_reduce = 1u << 1,
    /// matmul operands of any strides, broadcast batch dimensions (stride 0) included.
    strided_matmul = 1u << 2,
    /// Index rows given in host memory in either form of index_rows, and scatters whose rows
    /// repeat (the last value wins, as NumPy's assignment).
    host_index_rows = 1u << 3,
};

/// Where the rows of an advanced index start (Note [row offsets] in core/src/cpu/gather.hpp):
/// `count` rows, each at byte offset off[r], or, when off is nullptr, at
/// wrap(idx[r]) * stride_bytes (idx: contiguous int64 indices in [-size, size)). In the
/// canonical form `off` is set and lives on the backend's resource; with host_index_rows both
/// forms live in host memory.
struct index_rows {
    const int64_t* off = nullptr;
    const int64_t* idx = nullptr;
    int64_t size = 0;
    int64_t stride_bytes = 0;
    int64_t count = 0;
};

/// A linear sequence: element i = start + i * step. `exact`: integers computed in int64 and
/// then cast (istart, istep); otherwise computed in float64 (start, step) and cast, integer
/// dtypes rounding toward -inf when `floor_ints` (linspace) and toward zero otherwise.
struct linear_spec {
    bool exact = false;
    int64_t istart = 0, istep = 0;
    double start = 0, step = 0;
    bool floor_ints = false;
};

/// A compute backend for one memory resource.
///
/// Note [backend contract]
/// ~~~~~~~~~~~~~~~~~~~~~~~
/// Every op runs through this interface, on the CPU too: the op layer (core/src/ops) does the
/// checks, broadcasting, dtype promotion and result shapes, picks a resource
/// (Note [scheduling rule]) and hands the work to that resource's backend through one generic
/// dispatch per kind of kernel (core/src/ops/dispatch*.cpp, Note [one dispatch]). The dispatch asks
/// `supports_*` first; a backend that says no hands the op to the CPU backend, which supports every
/// case, and its inputs reach the host through the coherence model. The dispatch allocates outputs
/// on the chosen resource, converts inputs the backend cannot take as they are
/// (Note [canonical forms]), locks every operand there, calls the kernel entry and unlocks. Kernels
/// may run asynchronously (the CUDA backend enqueues them on the device's stream): a later lock on
/// the host reaches the data through the resource's copy_to_host, which waits for the queued work.
/// Entries never see an empty output: the dispatch returns first.
///
/// Arguments given as a tensor and a pointer: the tensor is the geometry (dtype, shape,
/// strides in elements; its storage and offset are not to be used) and the pointer is its
/// element 0, locked on the backend's resource.
///
/// Note [canonical forms]
/// ~~~~~~~~~~~~~~~~~~~~~~
/// Each entry has a canonical form that every backend takes for the dtypes it supports: elementwise
/// operands and outputs all of the compute dtype (bool results of comparisons and tests, the real
/// result of abs of a complex), reductions of a contiguous input whose reduced dimensions come last
/// into a contiguous output, contiguous matmul operands without broadcast batches, index rows as a
/// byte-offset array on the backend's resource with scatter rows that never repeat. A backend that
/// takes more says so with `features()`; for a backend without the feature the dispatch converts
/// the inputs on the backend's resource first (casts, contiguous copies, offset arrays), so the
/// CPU's conversion-free paths and the devices' simple kernels share one interface.
class ISTHMUS_API compute {
public:
    virtual ~compute();
    /// The backend's name for messages ("cpu", "cuda:0").
    virtual std::string name() const = 0;
    /// The `feature` bits this backend's kernels take (none: the canonical forms only).
    virtual unsigned features() const noexcept { return 0; }

    /// out = op(a, b) over `shape` (operands may broadcast with stride 0), computing in `dt`
    /// (the op's compute dtype). Canonical: a and b of dtype dt, out of the op's result dtype.
    virtual bool supports_binary(binary_op op, dtype dt) const = 0;
    virtual void binary(binary_op op, dtype dt, const shape_t& shape, const operand& out,
                        const operand& a, const operand& b) = 0;
    /// out = op(a) computing in `dt`. Canonical: a of dtype dt, out of the op's result dtype.
    virtual bool supports_unary(unary_op op, dtype dt) const = 0;
    virtual void unary(unary_op op, dtype dt, const shape_t& shape, const operand& out,
                       const operand& a) = 0;
    /// out = op(a, b, c) over `shape` with the op's dtype `dt` (see ternary_op); any operand
    /// may be a scalar or broadcast. Canonical: a of dtype bool (where) or dt, b, c and out dt.
    virtual bool supports_ternary(ternary_op op, dtype dt) const = 0;
    virtual void ternary(ternary_op op, dtype dt, const shape_t& shape, const operand& out,
                         const operand& a, const operand& b, const operand& c) = 0;
    /// Every element of `out` = the scalar operand `value` (stored as out's dtype with NumPy's
    /// cast rules).
    virtual bool supports_fill(dtype dt) const = 0;
    virtual void fill(const tensor& out, void* out_data, const operand& value) = 0;
    /// out = in converted to out's dtype (NumPy's unsafe cast); `in` is already broadcast to
    /// out's shape (stride 0 on broadcast dimensions); both strided.
    virtual bool supports_copy(dtype out, dtype in) const = 0;
    virtual void copy(const tensor& out, void* out_data, const tensor& in, const void* in_data) = 0;
    /// Reduces `in` over the dimensions where `reduced[d]` is true into `out`, which has in's
    /// other dimensions in order and dtype `out_dt` (the op layer's result dtype for the kind
    /// and input). Canonical: in contiguous with the reduced dimensions last, out contiguous.
    /// The input may be empty when the output is not (a sum over a zero-length axis gives
    /// each kind's identity).
    virtual bool supports_reduce(reduce_kind kind, dtype in, dtype out_dt) const = 0;
    virtual void reduce(reduce_kind kind, const tensor& out, void* out_data, const tensor& in,
                        const void* in_data, const std::vector<bool>& reduced) = 0;
    /// The variance (the standard deviation when `root`) of `in` over the `reduced` dimensions
    /// into `out` (in's other dimensions in order): the sum of |x - mean|^2 over each output's
    /// elements divided by `divisor` (the op layer passes max(N - ddof, 0), Note [variance]).
    /// out has the op's result dtype: float64 for bool and integer inputs, the real dtype of a
    /// complex input, else the input's; float16/bfloat16 inputs arrive widened to float32. The
    /// layouts are those of reduce. Optional: an op on a backend without it is composed of the
    /// backend's other kernels (Note [composite ops]).
    virtual bool supports_variance(dtype in) const;
    virtual void variance(const tensor& out, void* out_data, const tensor& in, const void* in_data,
                          const std::vector<bool>& reduced, double divisor, bool root);
    /// out = the running sum (or product when `prod`) of `in` along `axis`; both contiguous, of
    /// the same shape and of dtype `dt` (int64, uint64, float32, float64 or complex).
    virtual bool supports_cumulative(bool prod, dtype dt) const = 0;
    virtual void cumulative(bool prod, const tensor& out, void* out_data, const tensor& in,
                            const void* in_data, int64_t axis) = 0;
    /// Sorts each row of `in` (its last dimension) into `values` and/or the rows' int64
    /// positions into `indices` (either may be null): ascending, or `descending`, NaNs counted
    /// as the largest values, equal elements in their order (Note [sort order] in
    /// core/src/cpu/sort.cpp). in, values and indices contiguous and of in's shape, values of
    /// in's dtype; rows are not empty. Optional: without it the op runs on the CPU.
    virtual bool supports_sort(dtype dt) const;
    virtual void sort(const tensor& in, const void* in_data, void* values, int64_t* indices,
                      bool descending);
    /// out[i] = the number of elements of the ascending 1-d `sorted` that come before
    /// values[i] in the sort's order (Note [sort order]), or that are not after it when
    /// `right`: the insertion points of NumPy's searchsorted. sorted, values and the int64 out
    /// contiguous, sorted and values of one dtype; sorted not empty. Optional: without it the
    /// op runs on the CPU.
    virtual bool supports_searchsorted(dtype dt) const;
    virtual void searchsorted(const tensor& sorted, const void* sorted_data, const tensor& values,
                              const void* values_data, int64_t* out, bool right);
    /// Advanced-index rows (Note [gpu index rows]): for each of the rows.count rows, a block of
    /// elements of `itemsize` bytes shaped `rest`. gather: out + r * out_row + out_rest(i)
    /// receives src + row(r) + src_rest(i); scatter: dst + row(r) + dst_rest(i) receives
    /// val + r * val_row + val_rest(i). All strides in bytes. `rows_inner`: a hint that the rows
    /// step through memory faster than `rest` does (a loop-order choice; Note [gather loop
    /// order]).
    virtual bool supports_index(size_t itemsize) const = 0;
    virtual void gather(size_t itemsize, const index_rows& rows, void* out, int64_t out_row,
                        const void* src, const shape_t& rest, const shape_t& out_rest,
                        const shape_t& src_rest, bool rows_inner) = 0;
    virtual void scatter(size_t itemsize, const index_rows& rows, void* dst, const void* val,
                         int64_t val_row, const shape_t& rest, const shape_t& dst_rest,
                         const shape_t& val_rest, bool rows_inner) = 0;
    /// Random fills of `n` contiguous elements at `data` that equal the CPU generator's for the
    /// same seed and first Philox block (core/src/cpu/random.hpp): random_real for float16,
    /// bfloat16, float32, float64 (uniform in [a, b), or normal(a, b)); random_int for real
    /// dtypes (lo + [0, range)).
    virtual bool supports_random(dtype dt, bool integer) const = 0;
    virtual void random_real(dtype dt, bool normal, void* data, int64_t n, uint64_t seed,
                             uint64_t first_block, double a, double b) = 0;
    virtual void random_int(dtype dt, void* data, int64_t n, uint64_t seed, uint64_t first_block,
                            int64_t lo, uint64_t range) = 0;
    /// `n` contiguous elements of dtype `dt` at `data` = the sequence (arange, linspace).
    /// Optional.
    virtual bool supports_linear(dtype dt) const;
    virtual void linear(dtype dt, void* data, int64_t n, const linear_spec& seq);
    /// c = a @ b: a (batch..., m, k), b (batch..., k, n), c contiguous (batch..., m, n), all of
    /// dtype `dt` (float16/bfloat16 accumulate in float32 and round once, Note [matmul
    /// dtypes]). Canonical: a and b contiguous with the same batch shape as c. A backend
    /// without half gemm gets half operands widened to float32.
    virtual bool supports_matmul(dtype dt) const = 0;
    virtual void matmul(const tensor& c, void* c_data, const tensor& a, const void* a_data,
                        const tensor& b, const void* b_data) = 0;
    /// out (0-d) = sum(conj(a[i]) * b[i]) over `n` contiguous elements of the complex dtype
    /// `dt` (vdot). Optional.
    virtual bool supports_dotc(dtype dt) const;
    virtual void dotc(dtype dt, int64_t n, const void* a, const void* b, void* out);
};

/// Registers the compute backend of `resource` (a device slot) and marks the slot as having a
/// backend for the scheduling rule; nullptr removes it. The CPU's backend is built in and
/// cannot be replaced.
ISTHMUS_API void register_compute(resource_id resource, std::shared_ptr<compute> backend);
/// The backend of `resource` (the CPU's for MEMRESOURCE_CPU), or nullptr when none is
/// registered there.
ISTHMUS_API std::shared_ptr<compute> find_compute(resource_id resource) noexcept;

} // namespace isthmus::backend
