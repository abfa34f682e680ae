// Tensor operations: shape ops that join, split, reverse, repeat and pad tensors.
#pragma once

#include "isthmus/export.hpp"
#include "isthmus/tensor.hpp"
#include "isthmus/value.hpp"

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace isthmus {

// reshape, transpose, permute, squeeze, unsqueeze and expand are tensor methods (views).

/// Joins tensors along an existing axis (NumPy's concatenate). All inputs have the same rank
/// (at least 1) and equal sizes except along `axis`; the result dtype is the promotion of all
/// input dtypes. Raises value_error for an empty list, 0-d inputs or mismatched shapes.
ISTHMUS_API tensor concat(const std::vector<tensor>& ts, int64_t axis = 0);
/// Joins tensors of one shape along a new axis (in [-rank-1, rank]).
ISTHMUS_API tensor stack(const std::vector<tensor>& ts, int64_t axis = 0);

/// Splits `t` into `sections` equal VIEWS along `axis` (value_error when the size does not
/// divide). Note: `split(t, {2})` means two sections; pass std::vector<int64_t>{2} for indices.
ISTHMUS_API std::vector<tensor> split(const tensor& t, int64_t sections, int64_t axis = 0);
/// Splits `t` into views at the given indices along `axis`: t[:i0], t[i0:i1], ..., t[ik:]
/// (indices clamp and may be negative, as in slicing).
ISTHMUS_API std::vector<tensor> split(const tensor& t, const std::vector<int64_t>& indices,
                                      int64_t axis = 0);
/// Like split with a section count, but the sections may be unequal (the first size % sections
/// sections get one extra element), as NumPy's array_split.
ISTHMUS_API std::vector<tensor> array_split(const tensor& t, int64_t sections, int64_t axis = 0);

/// Reverses the order of elements along every axis: a view with negative strides.
ISTHMUS_API tensor flip(const tensor& t);
/// Reverses the order of elements along the given axes: a view with negative strides.
ISTHMUS_API tensor flip(const tensor& t, const std::vector<int64_t>& axes);

/// NumPy's tile: repeats the whole tensor reps[i] times along axis i (the shorter of t's shape
/// and reps is padded with leading ones).
ISTHMUS_API tensor tile(const tensor& t, const shape_t& reps);
/// NumPy's repeat: repeats each element `repeats` times along `axis` (without an axis, t is
/// flattened first).
ISTHMUS_API tensor repeat(const tensor& t, int64_t repeats,
                          std::optional<int64_t> axis = std::nullopt);
/// NumPy's repeat with per-element counts: `repeats` is an integer tensor with one count per
/// element along the axis (or a single count for all).
ISTHMUS_API tensor repeat(const tensor& t, const tensor& repeats,
                          std::optional<int64_t> axis = std::nullopt);

/// How pad fills the border, as NumPy's pad modes.
enum class pad_mode : uint8_t {
    constant,  ///< a constant value
    edge,      ///< the edge value repeated
    reflect,   ///< mirrored without repeating the edge: 3 2 | 1 2 3 | 2 1
    symmetric, ///< mirrored with the edge repeated: 2 1 | 1 2 3 | 3 2
    wrap,      ///< periodic: 2 3 | 1 2 3 | 1 2
};
/// Parses "constant", "edge", "reflect", "symmetric" or "wrap" (value_error otherwise).
ISTHMUS_API pad_mode parse_pad_mode(std::string_view name);

/// Pads `t` with pad_width[i] = (before, after) elements along axis i. One pair applies to
/// every axis. Non-constant modes need a non-empty axis wherever they pad; `value` is used by
/// pad_mode::constant only (converted to t's dtype).
ISTHMUS_API tensor pad(const tensor& t, const std::vector<std::pair<int64_t, int64_t>>& pad_width,
                       pad_mode mode = pad_mode::constant, const scalar& value = scalar(0));

} // namespace isthmus
