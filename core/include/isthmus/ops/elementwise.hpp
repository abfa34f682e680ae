// Tensor operations: elementwise arithmetic, math, comparisons, logic, where, clamp and casts.
#pragma once

#include "isthmus/dtype.hpp"
#include "isthmus/export.hpp"
#include "isthmus/ops/op_enums.hpp"
#include "isthmus/tensor.hpp"
#include "isthmus/value.hpp"

#include <complex>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace isthmus {

// Note [elementwise semantics]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Every op follows NumPy 2: operands broadcast, dtypes promote with promote_types, and a `scalar`
// operand is always *weak* (NEP 50: it takes the tensor's dtype within its kind; an integer scalar
// outside that dtype's range raises value_error, where NumPy raises OverflowError). Wrap a number
// in a 0-d tensor (scalar::to_tensor) for a strong operand. Integer overflow wraps; integer
// division or modulo by zero gives 0 (NumPy warns), and INT_MIN // -1 gives INT_MIN; nothing traps.
// Results are new dense tensors, C-contiguous unless the first full-shape input is a permuted dense
// view (a.t() + 1): then, like NumPy's order='K', the result takes that dimension order. In-place
// forms write into an existing tensor with NumPy's "same_kind" casting rule.

/// The op's C++ name, its row's `name` column ("add", "floor_div"; Python's are NumPy's).
ISTHMUS_API std::string_view name(binary_op op) noexcept;
/// The op's C++ name ("exp", "logical_not", ...).
ISTHMUS_API std::string_view name(unary_op op) noexcept;

/// The dtype binary(op, a, b) returns for tensors of dtypes a and b; type_error when the op does
/// not support them.
ISTHMUS_API dtype result_type(binary_op op, dtype a, dtype b);
/// The dtype unary(op, a) returns for a tensor of dtype a; type_error when unsupported.
ISTHMUS_API dtype result_type(unary_op op, dtype a);

/// Applies `op` to the broadcast operands and returns a new tensor. Throws value_error when the
/// shapes do not broadcast or a tensor is undefined, type_error when the dtypes are unsupported.
ISTHMUS_API tensor binary(binary_op op, const tensor& a, const tensor& b);
/// `op` with a weak scalar right operand (NEP 50; see Note [elementwise semantics]).
ISTHMUS_API tensor binary(binary_op op, const tensor& a, const scalar& b);
/// `op` with a weak scalar left operand.
ISTHMUS_API tensor binary(binary_op op, const scalar& a, const tensor& b);

/// target = op(target, other), in place. `other` must broadcast to target's shape exactly
/// (value_error otherwise), and the result dtype must cast to target's dtype under NumPy's
/// same_kind rule (type_error otherwise: a float result never goes into an integer target).
/// `other` may alias target in any way (a += a.t()). On error the target is unchanged.
ISTHMUS_API void binary_inplace(binary_op op, const tensor& target, const tensor& other);
/// target = op(target, other) with a weak scalar.
ISTHMUS_API void binary_inplace(binary_op op, const tensor& target, const scalar& other);

/// Applies `op` to every element and returns a new tensor.
ISTHMUS_API tensor unary(unary_op op, const tensor& a);
/// target = op(target), in place, under the same_kind rule (sqrt of an integer tensor in place is
/// a type_error).
ISTHMUS_API void unary_inplace(unary_op op, const tensor& target);

/// Elements of `a` where `cond` is nonzero, else of `b`; the three broadcast together and the
/// result dtype is promote_types(a, b) (cond is read as bool).
ISTHMUS_API tensor where(const tensor& cond, const tensor& a, const tensor& b);
/// where() with a weak scalar for b.
ISTHMUS_API tensor where(const tensor& cond, const tensor& a, const scalar& b);
/// where() with a weak scalar for a.
ISTHMUS_API tensor where(const tensor& cond, const scalar& a, const tensor& b);
/// where() with two scalars: the dtype is that of NumPy's Python scalars (bool, int64, float64,
/// complex128 by kind), promoted.
ISTHMUS_API tensor where(const tensor& cond, const scalar& a, const scalar& b);

/// minimum(maximum(t, lo), hi), NumPy's clip: NaN propagates, lo > hi gives hi. Weak scalars.
ISTHMUS_API tensor clamp(const tensor& t, const scalar& lo, const scalar& hi);
/// clamp() with tensor bounds; t, lo and hi broadcast together and promote.
ISTHMUS_API tensor clamp(const tensor& t, const tensor& lo, const tensor& hi);
/// clamp() in place (same_kind rule; t's shape must be the broadcast shape).
ISTHMUS_API void clamp_inplace(const tensor& t, const scalar& lo, const scalar& hi);

/// A copy converted to `dt` with NumPy's unsafe casting (astype): integers wrap, float -> int
/// truncates toward zero (NaN and out-of-range floats give a fixed value, never undefined
/// behaviour; NumPy's result there is platform-dependent), anything -> bool is `!= 0`, and
/// complex -> real drops the imaginary part.
ISTHMUS_API tensor cast(const tensor& t, dtype dt);

/// The real part: a view for complex tensors (writes go through, like NumPy's .real), `t`
/// itself for real dtypes.
ISTHMUS_API tensor real(const tensor& t);
/// The imaginary part: a view for complex tensors, a new tensor of zeros for real dtypes.
ISTHMUS_API tensor imag(const tensor& t);

/// The next representable value after `a` toward `b`, elementwise (NumPy's nextafter): in the
/// promoted dtype (bool/integers as math functions: float16 for 8-bit, ...; float16 and
/// bfloat16 step by their own spacing); `b` where a == b, NaN where either is NaN; complex
/// raises type_error. Composed of the backend's ops (Note [nextafter by bits]).
ISTHMUS_API tensor nextafter(const tensor& a, const tensor& b);

namespace detail {
/// C++ numbers usable as weak scalar operands.
template <typename T>
concept scalar_operand = std::is_arithmetic_v<T> || std::is_same_v<T, scalar> ||
    std::is_same_v<T, complex64_t> || std::is_same_v<T, complex128_t>;
/// A tensor or a scalar operand.
template <typename T>
concept elementwise_operand = std::is_same_v<T, tensor> || scalar_operand<T>;
/// Two operands of which at least one is a tensor.
template <typename A, typename B>
concept binary_operands = elementwise_operand<A> && elementwise_operand<B> &&
    (std::is_same_v<A, tensor> || std::is_same_v<B, tensor>);

inline const tensor& operand(const tensor& t) {
    return t;
}
inline const scalar& operand(const scalar& s) {
    return s;
}
template <scalar_operand T>
scalar operand(const T& v) {
    if constexpr (std::is_same_v<T, bool>)
        return scalar(v);
    else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
        return scalar(static_cast<int64_t>(v));
    else if constexpr (std::is_integral_v<T>)
        return scalar(static_cast<uint64_t>(v));
    else if constexpr (std::is_floating_point_v<T>)
        return scalar(static_cast<double>(v));
    else
        return scalar(v);
}
} // namespace detail

// Named binary functions: each takes two tensors, or a tensor and a C++ number / scalar on
// either side (weak), e.g. add(t, 1), pow(2.0, t).
// clang-format off
#define ISTHMUS_ELEMENTWISE_BINARY_FN(fn, op)                                                      \
    template <typename A, typename B>                                                              \
        requires detail::binary_operands<A, B>                                                     \
    tensor fn(const A& a, const B& b) {                                                            \
        return binary(binary_op::op, detail::operand(a), detail::operand(b));                      \
    }
// clang-format on

#define ISTHMUS_ELEMENTWISE_BINARY_ROW(name, ...) ISTHMUS_ELEMENTWISE_BINARY_FN(name, name)
/// One function per row of ISTHMUS_BINARY_OPS: add(a, b), floor_div(a, b), eq(a, b) (named, not
/// operator==, so tensors keep value semantics in C++), ...
ISTHMUS_BINARY_OPS(ISTHMUS_ELEMENTWISE_BINARY_ROW)
#undef ISTHMUS_ELEMENTWISE_BINARY_ROW
#undef ISTHMUS_ELEMENTWISE_BINARY_FN

// Named unary functions, one per row of ISTHMUS_UNARY_OPS: exp(t), logical_not(t), conj(t), ...
// (real() and imag() return views; they are declared above).
#define ISTHMUS_ELEMENTWISE_UNARY_ROW(name, ...)                                                   \
    inline tensor name(const tensor& a) {                                                          \
        return unary(unary_op::name, a);                                                           \
    }
ISTHMUS_UNARY_OPS(ISTHMUS_ELEMENTWISE_UNARY_ROW)
#undef ISTHMUS_ELEMENTWISE_UNARY_ROW

// Note [tensor operators]
// ~~~~~~~~~~~~~~~~~~~~~~~
// + - * / % & | ^ << >> and unary - ~ are NumPy's operators (so `/` is true division and `%` takes
// the sign of the divisor, unlike C++ on integers); compound assignment (+= ...) writes into the
// left tensor's memory like NumPy's in-place operators, so `t.slice(0, 1, 3) += 1` updates t.
// Comparisons are the named functions eq/ne/lt/le/gt/ge: operator== on tensors would return a
// tensor, which surprises C++ code and containers.
// clang-format off
#define ISTHMUS_ELEMENTWISE_OPERATOR(sym, op)                                                      \
    template <typename A, typename B>                                                              \
        requires detail::binary_operands<A, B>                                                     \
    tensor operator sym(const A& a, const B& b) {                                                  \
        return binary(binary_op::op, detail::operand(a), detail::operand(b));                      \
    }                                                                                              \
    template <typename B>                                                                          \
        requires detail::elementwise_operand<B>                                                    \
    const tensor& operator sym##=(const tensor& t, const B& b) {                                   \
        binary_inplace(binary_op::op, t, detail::operand(b));                                      \
        return t;                                                                                  \
    }
// clang-format on

/// a + b, and a += b in place
ISTHMUS_ELEMENTWISE_OPERATOR(+, add)
/// a - b, and a -= b in place
ISTHMUS_ELEMENTWISE_OPERATOR(-, sub)
/// a * b, and a *= b in place
ISTHMUS_ELEMENTWISE_OPERATOR(*, mul)
/// a / b (true division), and a /= b in place
ISTHMUS_ELEMENTWISE_OPERATOR(/, div)
/// a % b (Python's modulo), and a %= b in place
ISTHMUS_ELEMENTWISE_OPERATOR(%, mod)
/// a & b, and a &= b in place
ISTHMUS_ELEMENTWISE_OPERATOR(&, bit_and)
/// a | b, and a |= b in place
ISTHMUS_ELEMENTWISE_OPERATOR(|, bit_or)
/// a ^ b, and a ^= b in place
ISTHMUS_ELEMENTWISE_OPERATOR(^, bit_xor)
/// a << b, and a <<= b in place
ISTHMUS_ELEMENTWISE_OPERATOR(<<, shift_left)
/// a >> b, and a >>= b in place
ISTHMUS_ELEMENTWISE_OPERATOR(>>, shift_right)
#undef ISTHMUS_ELEMENTWISE_OPERATOR

/// -a
inline tensor operator-(const tensor& a) {
    return unary(unary_op::neg, a);
}
/// ~a
inline tensor operator~(const tensor& a) {
    return unary(unary_op::bit_not, a);
}

} // namespace isthmus
