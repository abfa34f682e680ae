// Internal: the dtype rules of elementwise ops (device-agnostic; shared by every backend).
#pragma once

#include "isthmus/ops/elementwise.hpp"

namespace isthmus::ops {

/// What a binary op computes for given operand dtypes: the op the kernel runs (bool add runs
/// as logical_or, ...), the dtype both inputs are converted to, and the result dtype.
struct binary_signature {
    binary_op op;
    dtype compute;
    dtype result;
};

/// The signature of `op` on operands of dtypes a and b; throws type_error naming the op and
/// the dtypes when unsupported.
binary_signature binary_types(binary_op op, dtype a, dtype b);

/// How a unary op is carried out for an input dtype.
enum class unary_action : uint8_t {
    kernel,     ///< run the op's kernel on the compute dtype
    copy,       ///< the op is the identity on this dtype (floor of an integer)
    fill_false, ///< the result is all false (isnan of an integer)
    fill_true,  ///< the result is all true (isfinite of an integer)
    zeros,      ///< the result is all zero (imag of a real dtype)
    real_part,  ///< the real part of a complex input
    imag_part,  ///< the imaginary part of a complex input
};

struct unary_signature {
    unary_action action;
    dtype compute;
    dtype result;
};

/// The signature of `op` on an input of dtype a; throws type_error when unsupported.
unary_signature unary_types(unary_op op, dtype a);

/// NumPy's "same_kind" casting: safe casts, or casts within a kind or towards a higher kind
/// (bool < unsigned < signed < floating < complex).
bool can_cast_same_kind(dtype from, dtype to) noexcept;

/// Throws type_error unless a `result` can be stored into a `target` dtype in place.
void check_inplace_cast(dtype result, dtype target, std::string_view what);

/// The dtype a weak scalar takes next to a tensor of dtype `t` (NEP 50); throws value_error
/// when an integer scalar does not fit an integer result dtype.
dtype weak_scalar_dtype(dtype t, const scalar& s, std::string_view what);

/// The dtype of a scalar on its own, like a Python number in NumPy (bool, int64, float64,
/// complex128 by kind; uint64 for an unsigned scalar above INT64_MAX).
dtype default_scalar_dtype(const scalar& s) noexcept;

/// `x == y` for the shapes of one op: the same object (an op's shape is often its first
/// input's) or equal sizes elementwise, without the library call std::vector's == makes.
inline bool same_shape(const shape_t& x, const shape_t& y) noexcept {
    if (&x == &y) return true;
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
        if (x[i] != y[i]) return false;
    return true;
}

/// NumPy's broadcast of several shapes; value_error naming `what` and every shape otherwise.
shape_t broadcast_all(std::string_view what, std::initializer_list<const shape_t*> shapes);

/// A new tensor for an op's result, laid out like NumPy's order='K': when the first input of
/// the result's full shape is dense but not C-contiguous (a transposed or permuted tensor), the
/// result takes its dimension order, so the kernel walks every operand forward in memory;
/// otherwise the result is C-contiguous.
tensor new_output(const shape_t& shape, dtype dt, resource_id resource,
                  std::initializer_list<const tensor*> layout_from);

/// The element strides of `t` seen through a broadcast to `shape` (0 on broadcast dimensions).
shape_t broadcast_strides(const tensor& t, const shape_t& shape);

/// Throws value_error unless `t` is defined; names `what` and the operand `which`.
void check_defined(const tensor& t, std::string_view what, std::string_view which);

/// Throws value_error when `t` cannot be written elementwise: a broadcast view (stride 0 on a
/// dimension longer than 1) would write one element several times.
void check_writable(const tensor& t, std::string_view what);

/// True when the memory of `a` and `b` may overlap without being the same view (so an in-place
/// op must read `b` from a copy).
bool overlaps_differently(const tensor& a, const tensor& b);

} // namespace isthmus::ops
