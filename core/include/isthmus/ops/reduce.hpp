// Tensor operations: reductions (sum, prod, mean, var/std, min/max, argmin/argmax, any/all) and
// cumulative sums and products, with NumPy's axes, keepdims and result dtypes.
#pragma once

#include "isthmus/tensor.hpp"
#include "isthmus/value.hpp"

#include <initializer_list>
#include <utility>

namespace isthmus {

/// The axes a reduction runs over, like NumPy's `axis=` argument: every axis by default or with
/// `{}` (`axis=None`), one axis (`sum(t, 1)`), or a list (`sum(t, {0, 2})`). Negative axes count
/// from the end; an axis out of range raises index_error, a repeated axis value_error. An
/// explicitly empty list (`reduce_axes::none()`, NumPy's `axis=()`) reduces nothing.
class reduce_axes {
public:
    /// Every axis.
    reduce_axes() = default;
    /// One axis.
    reduce_axes(int64_t axis) : all_(false), axes_{axis} {} // NOLINT: implicit by design
    /// A list of axes (`{}` selects the default constructor: every axis).
    reduce_axes(std::initializer_list<int64_t> axes) : all_(false), axes_(axes) {} // NOLINT
    /// A list of axes; an empty list reduces nothing.
    reduce_axes(shape_t axes) : all_(false), axes_(std::move(axes)) {} // NOLINT
    /// No axis at all (NumPy's `axis=()`): the reduction maps each element on its own.
    static reduce_axes none() { return reduce_axes(shape_t{}); }

    /// True for "every axis".
    bool all() const noexcept { return all_; }
    /// The listed axes (meaningless when all() is true).
    const shape_t& list() const noexcept { return axes_; }

private:
    bool all_ = true;
    shape_t axes_;
};

/// Sum over `axes`. Result dtype as NumPy: bool and signed integers give int64, unsigned
/// integers uint64 (both wrap around on overflow), floating and complex keep their dtype.
/// float32 (and float16/bfloat16, complex64) accumulate in double precision.
/// `keepdims` keeps the reduced axes with size 1. An empty reduction gives 0.
ISTHMUS_API tensor sum(const tensor& t, const reduce_axes& axes = {}, bool keepdims = false);

/// Product over `axes`; dtypes as sum(). An empty reduction gives 1.
ISTHMUS_API tensor prod(const tensor& t, const reduce_axes& axes = {}, bool keepdims = false);

/// Arithmetic mean over `axes`. bool and integers give float64; floating and complex keep their
/// dtype. An empty reduction gives NaN (as NumPy, without the warning).
ISTHMUS_API tensor mean(const tensor& t, const reduce_axes& axes = {}, bool keepdims = false);

/// Variance over `axes`: mean(|x - mean(x)|^2) with divisor N - ddof (NaN or inf when
/// N - ddof <= 0, as NumPy). bool and integers give float64, complex gives its real dtype.
/// Computed in two passes (NumPy's algorithm), so it is accurate for data with a large mean.
ISTHMUS_API tensor var(const tensor& t, const reduce_axes& axes = {}, bool keepdims = false,
                       int64_t ddof = 0);

/// Standard deviation: sqrt(var(t, axes, keepdims, ddof)), with var's dtypes.
ISTHMUS_API tensor std_(const tensor& t, const reduce_axes& axes = {}, bool keepdims = false,
                        int64_t ddof = 0);

/// Minimum over `axes`, same dtype. NaN propagates (a slice holding NaN gives NaN); complex
/// values compare lexicographically (real part, then imaginary) as NumPy. A reduction over zero
/// elements has no identity and raises value_error.
ISTHMUS_API tensor min(const tensor& t, const reduce_axes& axes = {}, bool keepdims = false);

/// Maximum over `axes`; as min().
ISTHMUS_API tensor max(const tensor& t, const reduce_axes& axes = {}, bool keepdims = false);

/// True where any element over `axes` is non-zero (bool result; false for an empty reduction).
ISTHMUS_API tensor any(const tensor& t, const reduce_axes& axes = {}, bool keepdims = false);

/// True where every element over `axes` is non-zero (bool result; true for an empty reduction).
ISTHMUS_API tensor all(const tensor& t, const reduce_axes& axes = {}, bool keepdims = false);

/// Index (int64, 0-d) of the smallest element of the flattened tensor, in C order. The first
/// occurrence wins; a NaN counts as the extreme (the first NaN wins), as NumPy. An empty tensor
/// raises value_error.
ISTHMUS_API tensor argmin(const tensor& t);

/// Indices (int64) of the smallest elements along `axis` (negative counts from the end); the
/// axis is removed unless `keepdims`. First occurrence and NaN as argmin(t).
ISTHMUS_API tensor argmin(const tensor& t, int64_t axis, bool keepdims = false);

/// Index of the largest element of the flattened tensor; as argmin(t).
ISTHMUS_API tensor argmax(const tensor& t);

/// Indices of the largest elements along `axis`; as argmin(t, axis, keepdims).
ISTHMUS_API tensor argmax(const tensor& t, int64_t axis, bool keepdims = false);

/// Cumulative sum of the flattened tensor (1-d result), dtypes as sum().
ISTHMUS_API tensor cumsum(const tensor& t);

/// Cumulative sum along `axis` (same shape), dtypes as sum().
ISTHMUS_API tensor cumsum(const tensor& t, int64_t axis);

/// Cumulative product of the flattened tensor (1-d result), dtypes as sum().
ISTHMUS_API tensor cumprod(const tensor& t);

/// Cumulative product along `axis` (same shape), dtypes as sum().
ISTHMUS_API tensor cumprod(const tensor& t, int64_t axis);

} // namespace isthmus
