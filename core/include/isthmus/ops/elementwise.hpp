// Tensor operations: elementwise arithmetic, math, comparisons, logic, where, clamp and casts.
#pragma once

#include "isthmus/dtype.hpp"
#include "isthmus/export.hpp"
#include "isthmus/tensor.hpp"
#include "isthmus/value.hpp"

#include <complex>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace isthmus {

// Note [elementwise semantics]: every op follows NumPy 2: operands broadcast, dtypes promote
// with promote_types, and a `scalar` operand is always *weak* (NEP 50: it takes the tensor's
// dtype within its kind; an integer scalar outside that dtype's range raises value_error, where
// NumPy raises OverflowError). Wrap a number in a 0-d tensor (scalar::to_tensor) for a strong
// operand. Integer overflow wraps; integer division or modulo by zero gives 0 (NumPy warns),
// and INT_MIN // -1 gives INT_MIN; nothing traps. Results are new dense tensors, C-contiguous
// unless the first full-shape input is a permuted dense view (a.t() + 1): then, like NumPy's
// order='K', the result takes that dimension order. In-place forms write into an existing
// tensor with NumPy's "same_kind" casting rule.

/// Binary elementwise operations.
enum class binary_op : uint8_t {
    add,         ///< a + b (bool: logical or)
    sub,         ///< a - b (bool: type_error, as in NumPy)
    mul,         ///< a * b (bool: logical and)
    div,         ///< true division a / b; integers and bool give float64
    floor_div,   ///< floor(a / b) (Python's //); not for complex
    mod,         ///< Python's %: the result has the sign of b; not for complex
    pow,         ///< a ** b; integer bases with negative integer exponents raise value_error
    maximum,     ///< NaN-propagating maximum; not for complex
    minimum,     ///< NaN-propagating minimum; not for complex
    atan2,       ///< atan2(a, b) in radians; integers compute in float (as unary math)
    eq,          ///< a == b -> bool
    ne,          ///< a != b -> bool
    lt,          ///< a < b -> bool; not for complex
    le,          ///< a <= b -> bool; not for complex
    gt,          ///< a > b -> bool; not for complex
    ge,          ///< a >= b -> bool; not for complex
    logical_and, ///< (a != 0) and (b != 0) -> bool
    logical_or,  ///< (a != 0) or (b != 0) -> bool
    logical_xor, ///< (a != 0) != (b != 0) -> bool
    bit_and,     ///< a & b; bool and integers only
    bit_or,      ///< a | b; bool and integers only
    bit_xor,     ///< a ^ b; bool and integers only
    shift_left,  ///< a << b; integers (bool computes as int8); shifts >= the bit width give 0
    shift_right, ///< a >> b (arithmetic for signed); shifts >= the bit width give 0 or -1
};

/// Unary elementwise operations. "Math" ops (exp ... tanh, sqrt, rsqrt) on bool and integers
/// compute in promote_types(dtype, float16), as NumPy does: int8/uint8/bool -> float16,
/// int16/uint16 -> float32, wider integers -> float64. float16/bfloat16 compute in float32 and
/// round back.
enum class unary_op : uint8_t {
    neg,         ///< -a (bool: type_error)
    abs,         ///< |a|; complex -> the real dtype; abs(INT_MIN) == INT_MIN
    sign,        ///< -1, 0 or 1 (NaN stays NaN); complex: a / |a| (0 at 0)
    exp,         ///< e^a
    log,         ///< natural logarithm
    log2,        ///< base-2 logarithm
    log10,       ///< base-10 logarithm
    expm1,       ///< e^a - 1, accurate near 0
    log1p,       ///< log(1 + a), accurate near 0
    sqrt,        ///< square root
    rsqrt,       ///< 1 / sqrt(a)
    sin,         ///< sine
    cos,         ///< cosine
    tan,         ///< tangent
    asin,        ///< inverse sine
    acos,        ///< inverse cosine
    atan,        ///< inverse tangent
    sinh,        ///< hyperbolic sine
    cosh,        ///< hyperbolic cosine
    tanh,        ///< hyperbolic tangent
    floor,       ///< round down; integers unchanged; not for complex
    ceil,        ///< round up; integers unchanged; not for complex
    round,       ///< round half to even (NumPy's round); integers unchanged; complex per part
    logical_not, ///< a == 0 -> bool
    bit_not,     ///< ~a; bool: logical not; integers only otherwise
    isnan,       ///< -> bool; false for integers
    isinf,       ///< -> bool; false for integers
    isfinite,    ///< -> bool; true for integers
    real,        ///< real part (a copy; see real() for a view); real dtypes unchanged
    imag,        ///< imaginary part (a copy); zeros for real dtypes
    conj,        ///< complex conjugate; real dtypes unchanged
    square,      ///< a * a
    reciprocal,  ///< 1 / a; integers and bool give float64 (like div, unlike NumPy)
};

/// The op's name as NumPy spells the ufunc ("add", "floor_divide" is spelled "floor_div" here).
ISTHMUS_API std::string_view name(binary_op op) noexcept;
/// The op's name ("exp", "logical_not", ...).
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
/// The complex conjugate (a new tensor; a copy for real dtypes).
ISTHMUS_API tensor conj(const tensor& t);

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

/// a + b
ISTHMUS_ELEMENTWISE_BINARY_FN(add, add)
/// a - b
ISTHMUS_ELEMENTWISE_BINARY_FN(sub, sub)
/// a * b
ISTHMUS_ELEMENTWISE_BINARY_FN(mul, mul)
/// a / b (true division)
ISTHMUS_ELEMENTWISE_BINARY_FN(div, div)
/// a // b (floor division)
ISTHMUS_ELEMENTWISE_BINARY_FN(floor_div, floor_div)
/// a % b (Python's sign rule)
ISTHMUS_ELEMENTWISE_BINARY_FN(mod, mod)
/// a ** b
ISTHMUS_ELEMENTWISE_BINARY_FN(pow, pow)
/// NaN-propagating elementwise maximum
ISTHMUS_ELEMENTWISE_BINARY_FN(maximum, maximum)
/// NaN-propagating elementwise minimum
ISTHMUS_ELEMENTWISE_BINARY_FN(minimum, minimum)
/// atan2(a, b)
ISTHMUS_ELEMENTWISE_BINARY_FN(atan2, atan2)
/// a == b as a bool tensor (named, not operator==, so tensors keep value semantics in C++)
ISTHMUS_ELEMENTWISE_BINARY_FN(eq, eq)
/// a != b as a bool tensor
ISTHMUS_ELEMENTWISE_BINARY_FN(ne, ne)
/// a < b as a bool tensor
ISTHMUS_ELEMENTWISE_BINARY_FN(lt, lt)
/// a <= b as a bool tensor
ISTHMUS_ELEMENTWISE_BINARY_FN(le, le)
/// a > b as a bool tensor
ISTHMUS_ELEMENTWISE_BINARY_FN(gt, gt)
/// a >= b as a bool tensor
ISTHMUS_ELEMENTWISE_BINARY_FN(ge, ge)
/// logical and -> bool
ISTHMUS_ELEMENTWISE_BINARY_FN(logical_and, logical_and)
/// logical or -> bool
ISTHMUS_ELEMENTWISE_BINARY_FN(logical_or, logical_or)
/// logical xor -> bool
ISTHMUS_ELEMENTWISE_BINARY_FN(logical_xor, logical_xor)
/// a & b
ISTHMUS_ELEMENTWISE_BINARY_FN(bit_and, bit_and)
/// a | b
ISTHMUS_ELEMENTWISE_BINARY_FN(bit_or, bit_or)
/// a ^ b
ISTHMUS_ELEMENTWISE_BINARY_FN(bit_xor, bit_xor)
/// a << b
ISTHMUS_ELEMENTWISE_BINARY_FN(shift_left, shift_left)
/// a >> b
ISTHMUS_ELEMENTWISE_BINARY_FN(shift_right, shift_right)
#undef ISTHMUS_ELEMENTWISE_BINARY_FN

// Named unary functions.
/// -a
inline tensor neg(const tensor& a) {
    return unary(unary_op::neg, a);
}
/// |a|
inline tensor abs(const tensor& a) {
    return unary(unary_op::abs, a);
}
/// sign of a
inline tensor sign(const tensor& a) {
    return unary(unary_op::sign, a);
}
/// e^a
inline tensor exp(const tensor& a) {
    return unary(unary_op::exp, a);
}
/// natural logarithm
inline tensor log(const tensor& a) {
    return unary(unary_op::log, a);
}
/// base-2 logarithm
inline tensor log2(const tensor& a) {
    return unary(unary_op::log2, a);
}
/// base-10 logarithm
inline tensor log10(const tensor& a) {
    return unary(unary_op::log10, a);
}
/// e^a - 1
inline tensor expm1(const tensor& a) {
    return unary(unary_op::expm1, a);
}
/// log(1 + a)
inline tensor log1p(const tensor& a) {
    return unary(unary_op::log1p, a);
}
/// square root
inline tensor sqrt(const tensor& a) {
    return unary(unary_op::sqrt, a);
}
/// 1 / sqrt(a)
inline tensor rsqrt(const tensor& a) {
    return unary(unary_op::rsqrt, a);
}
/// sine
inline tensor sin(const tensor& a) {
    return unary(unary_op::sin, a);
}
/// cosine
inline tensor cos(const tensor& a) {
    return unary(unary_op::cos, a);
}
/// tangent
inline tensor tan(const tensor& a) {
    return unary(unary_op::tan, a);
}
/// inverse sine
inline tensor asin(const tensor& a) {
    return unary(unary_op::asin, a);
}
/// inverse cosine
inline tensor acos(const tensor& a) {
    return unary(unary_op::acos, a);
}
/// inverse tangent
inline tensor atan(const tensor& a) {
    return unary(unary_op::atan, a);
}
/// hyperbolic sine
inline tensor sinh(const tensor& a) {
    return unary(unary_op::sinh, a);
}
/// hyperbolic cosine
inline tensor cosh(const tensor& a) {
    return unary(unary_op::cosh, a);
}
/// hyperbolic tangent
inline tensor tanh(const tensor& a) {
    return unary(unary_op::tanh, a);
}
/// round down
inline tensor floor(const tensor& a) {
    return unary(unary_op::floor, a);
}
/// round up
inline tensor ceil(const tensor& a) {
    return unary(unary_op::ceil, a);
}
/// round half to even
inline tensor round(const tensor& a) {
    return unary(unary_op::round, a);
}
/// a == 0 -> bool
inline tensor logical_not(const tensor& a) {
    return unary(unary_op::logical_not, a);
}
/// ~a
inline tensor bit_not(const tensor& a) {
    return unary(unary_op::bit_not, a);
}
/// NaN test -> bool
inline tensor isnan(const tensor& a) {
    return unary(unary_op::isnan, a);
}
/// infinity test -> bool
inline tensor isinf(const tensor& a) {
    return unary(unary_op::isinf, a);
}
/// finiteness test -> bool
inline tensor isfinite(const tensor& a) {
    return unary(unary_op::isfinite, a);
}
/// a * a
inline tensor square(const tensor& a) {
    return unary(unary_op::square, a);
}
/// 1 / a
inline tensor reciprocal(const tensor& a) {
    return unary(unary_op::reciprocal, a);
}

// Note [tensor operators]: + - * / % & | ^ << >> and unary - ~ are NumPy's operators (so `/` is
// true division and `%` takes the sign of the divisor, unlike C++ on integers); compound
// assignment (+= ...) writes into the left tensor's memory like NumPy's in-place operators, so
// `t.slice(0, 1, 3) += 1` updates t. Comparisons are the named functions eq/ne/lt/le/gt/ge:
// operator== on tensors would return a tensor, which surprises C++ code and containers.
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
