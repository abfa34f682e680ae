// Internal: running an op on a device backend (the CUDA module) instead of the CPU kernels.
#pragma once

#include "isthmus/backend.hpp"
#include "isthmus/value.hpp"
#include "ops/dispatch.hpp"

#include <memory>
#include <optional>

namespace isthmus::cpu {
struct row_offsets; // cpu/gather.hpp
} // namespace isthmus::cpu

namespace isthmus::ops {

/// The compute backend of `where`, or nullptr (the CPU, or a resource without one).
inline std::shared_ptr<backend::compute> device_compute(resource_id where) {
    return where == MEMRESOURCE_CPU ? nullptr : backend::find_compute(where);
}

/// An elementwise input: a tensor or a scalar (already of the op's compute dtype).
struct device_input {
    const tensor* t = nullptr;
    const scalar* s = nullptr;
};

/// Note [device ops]: each op's device branch sits next to its CPU code and returns false when
/// the backend has no kernel for the case (dtypes, ops); the op then runs on the CPU through
/// the coherence model (the inputs are locked on the host, which transfers them). Inputs are
/// converted to the compute dtype on the device first; results are allocated on the device.

/// out = op(a, b) on `where`; `out` is allocated there unless `inplace` (then `out` is the
/// target and also `a`). False when the backend cannot.
bool device_binary(resource_id where, binary_op op, dtype compute, dtype result,
                   const shape_t& shape, device_input a, device_input b, tensor& out, bool inplace);
/// out = op(a) on `where` (a fresh output, or in place into `out` when `inplace`).
bool device_unary(resource_id where, unary_op op, dtype compute, dtype result, const tensor& a,
                  tensor& out, bool inplace);
/// out = op(a, b, c) on `where` with the op's dtype `dt` (see backend::ternary_op: a is the
/// condition, converted to bool, for where; the inputs are converted to dt otherwise); out is
/// allocated there laid out like `layout`, unless `inplace` (then `out` is the target and also
/// `a`). False when the backend cannot.
bool device_ternary(resource_id where, backend::ternary_op op, dtype dt, const shape_t& shape,
                    device_input a, device_input b, device_input c, tensor& out, bool inplace,
                    std::initializer_list<const tensor*> layout);
/// The gather of an advanced index on `where`: row r of `out` (at r * out_row_bytes, its
/// `rest` elements at out_rest strides) receives the row of `v` that `at` locates (its rest
/// at src_rest strides); strides in elements. `out` lives on `where`. False when the backend
/// cannot.
bool device_gather(resource_id where, const tensor& v, const tensor& out,
                   const cpu::row_offsets& at, int64_t rows, int64_t out_row_bytes,
                   const shape_t& rest, const shape_t& out_rest, const shape_t& src_rest);
/// The scatter of an advanced index on `where` (the same layout, values `val` read at
/// val_row_bytes per row). False when the backend cannot, or when rows repeat (NumPy's "last
/// value wins" is kept by the CPU's sequential scatter).
bool device_scatter(resource_id where, const tensor& v, const tensor& val,
                    const cpu::row_offsets& at, int64_t rows, int64_t val_row_bytes,
                    const shape_t& rest, const shape_t& dst_rest, const shape_t& val_rest);
/// t = value on the resource the scheduling rule picks for t; false when it is the CPU.
bool device_fill(const tensor& t, const scalar& value);
/// dst = src (already expanded to dst's shape) on a device; false when it is the CPU.
bool device_copy(const tensor& dst, const tensor& src);
/// A reduction of `t` over the dimensions marked in `reduced` into a fresh tensor of shape
/// `kept` and dtype `out_dt` on `where`; nullopt when the backend cannot.
std::optional<tensor> device_reduce(resource_id where, backend::reduce_kind kind, const tensor& t,
                                    const std::vector<bool>& reduced, const shape_t& kept,
                                    dtype out_dt);
/// C = A @ B for A (batch..., m, k) and B (batch..., k, n) already expanded to one batch
/// shape, on `where`, of dtype `dt` (half types accumulate in float32); nullopt when the
/// backend cannot.
std::optional<tensor> device_matmul(resource_id where, dtype dt, const tensor& a, const tensor& b,
                                    const shape_t& batch);

} // namespace isthmus::ops
