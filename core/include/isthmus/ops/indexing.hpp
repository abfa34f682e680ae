// Tensor operations: NumPy-style indexing and index assignment, nonzero, take (along an axis).
#pragma once

#include "isthmus/export.hpp"
#include "isthmus/tensor.hpp"
#include "isthmus/value.hpp"

#include <concepts>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <variant>
#include <vector>

namespace isthmus {

/// Python's slice(start, stop, step): an empty optional is Python's None (the default for that
/// part). `index_slice{}` is `:`; `index_slice{std::nullopt, std::nullopt, -1}` is `::-1`.
struct index_slice {
    std::optional<int64_t> start;
    std::optional<int64_t> stop;
    std::optional<int64_t> step;

    index_slice() = default;
    index_slice(std::optional<int64_t> start_, std::optional<int64_t> stop_ = std::nullopt,
                std::optional<int64_t> step_ = std::nullopt)
        : start(start_), stop(stop_), step(step_) {}
};

/// numpy.newaxis (Python's None in a subscript): inserts a dimension of size 1.
struct newaxis_t {
    explicit constexpr newaxis_t(int) {}
};
inline constexpr newaxis_t newaxis{0};

/// Python's `...` in a subscript: as many `:` as needed to index every dimension.
struct ellipsis_t {
    explicit constexpr ellipsis_t(int) {}
};
inline constexpr ellipsis_t ellipsis{0};

/// One entry of a subscript: an integer, a slice, newaxis, ellipsis, or a tensor index (a bool
/// mask or an integer index array). A bool converts to a 0-d bool mask, as in NumPy (True adds
/// a dimension of size 1, False one of size 0); a 0-d integer tensor acts as an integer. An
/// unsigned integer above INT64_MAX is kept as a 0-d uint64 tensor, so it is reported out of
/// range (never wrapped to a negative index).
class ISTHMUS_API index_item {
public:
    enum class kind : uint8_t { integer, slice, newaxis, ellipsis, tensor };

    template <std::integral I>
    requires(!std::same_as<I, bool>) index_item(I i) { // NOLINT: implicit like Python
        if constexpr (std::is_unsigned_v<I> && sizeof(I) >= sizeof(int64_t)) {
            if (i > static_cast<uint64_t>(INT64_MAX)) {
                v_ = huge_unsigned(static_cast<uint64_t>(i));
                return;
            }
        }
        v_ = static_cast<int64_t>(i);
    }
    index_item(bool b);                  // NOLINT
    index_item(index_slice s) : v_(s) {} // NOLINT
    index_item(newaxis_t n) : v_(n) {}   // NOLINT
    index_item(ellipsis_t e) : v_(e) {}  // NOLINT
    index_item(isthmus::tensor t);       // NOLINT

    kind type() const noexcept { return static_cast<kind>(v_.index()); }
    /// The accessors below require the matching kind (internal_error otherwise).
    int64_t integer() const;
    const index_slice& slice() const;
    const isthmus::tensor& tensor() const;

private:
    static isthmus::tensor huge_unsigned(uint64_t i);
    std::variant<int64_t, index_slice, newaxis_t, ellipsis_t, isthmus::tensor> v_;
};

/// `t[items]` with NumPy's rules (See Note [NumPy's subscript rules] in
/// core/src/ops/indexing_parse.cpp). Integers, slices, newaxis and ellipsis alone give a VIEW of t
/// (basic indexing); so does an all-integer subscript (a 0-d view, where Python gives a scalar:
/// is_full_integer_index). A 0-d integer tensor acts as an integer, but beside slices, newaxis or
/// ellipsis it makes the result a copy, as NumPy does. Integer arrays and bool masks give a COPY
/// (advanced indexing): the integer arrays (a mask stands for its nonzero() coordinates, an integer
/// beside an array for a 0-d array, a 0-d bool for a new dimension indexed by [0] or []) broadcast
/// together to a shape B; B replaces the indexed dimensions in place when the advanced entries are
/// next to each other in `items`, else it goes first (an ellipsis, even one standing for no
/// dimension, separates them). Negative indices count from the end. Errors: index_error for an
/// index out of range (naming the index, axis and size), too many indices, a second ellipsis, a
/// mask whose shape does not match, index arrays that are not integer or bool or do not broadcast
/// together, and a result of more than max_rank dimensions (NumPy: 64); value_error for a
/// zero slice step.
ISTHMUS_API tensor index(const tensor& t, const std::vector<index_item>& items);

/// The shape `index(t, items)` has, without reading or copying elements: raises what index()
/// raises for the subscript itself, but does not look at the values of index arrays (their
/// range is checked when they are used).
ISTHMUS_API shape_t index_shape(const tensor& t, const std::vector<index_item>& items);

/// True when `items` index each of the `rank` dimensions with an integer (an int or a 0-d
/// integer tensor) and hold nothing else: NumPy then gives a scalar, not a 0-d array.
ISTHMUS_API bool is_full_integer_index(const std::vector<index_item>& items, int64_t rank);

/// `target[items] = value`: `value` is broadcast to the indexed shape (leading size-1
/// dimensions of value may be dropped, as NumPy does) and converted to target's dtype. As in
/// NumPy, one element (is_full_integer_index) takes a 0-d value only (value_error; a bool
/// element also takes a one-element value), and a lone bool mask of target's shape a 0-d or
/// 1-d value (type_error). Repeated integer indices assign in order, so the last one wins.
/// Every index is checked before anything is written: on error, target is unchanged.
ISTHMUS_API void index_put(const tensor& target, const std::vector<index_item>& items,
                           const tensor& value);
/// `target[items] = value` for a scalar value.
ISTHMUS_API void index_put(const tensor& target, const std::vector<index_item>& items,
                           const scalar& value);

/// NumPy's nonzero: one int64 tensor per dimension holding the coordinates of the nonzero
/// (true) elements in C order. A 0-d tensor raises value_error, as NumPy 2.
ISTHMUS_API std::vector<tensor> nonzero(const tensor& t);
/// The coordinates of the nonzero elements as one int64 tensor of shape (count, t.dim()).
ISTHMUS_API tensor argwhere(const tensor& t);
/// NumPy's take: elements of `t` at `indices` along `axis` (result shape t.shape[:axis] +
/// indices.shape + t.shape[axis+1:]); without an axis, t is flattened first.
ISTHMUS_API tensor take(const tensor& t, const tensor& indices,
                        std::optional<int64_t> axis = std::nullopt);
/// NumPy's take_along_axis (PyTorch's gather): `indices` has t's rank and broadcasts with t
/// on every axis but `axis`; result[..., i, ...] = t[..., indices[..., i, ...], ...].
ISTHMUS_API tensor take_along_axis(const tensor& t, const tensor& indices, int64_t axis);
/// NumPy's put_along_axis (PyTorch's scatter): the inverse of take_along_axis, writing
/// `values` (broadcast to indices' shape) into `target`.
ISTHMUS_API void put_along_axis(const tensor& target, const tensor& indices, const tensor& values,
                                int64_t axis);

} // namespace isthmus
