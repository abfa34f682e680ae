// pyvalue operators with Python's semantics (NumPy broadcasts, torch records autograd); printing.
#pragma once

#include "isthmus/pyvalue/pyapi_members.hpp"

#include <ostream>

namespace isthmus {

namespace detail {
template <typename A, typename B>
concept py_operands = is_pyapi_v<A> || is_pyapi_v<B>;

/// The object an operand stands for: borrowed for pyvalues and references, converted else.
template <typename T>
pyvalue py_operand(const T& v) {
    if constexpr (is_pyapi_v<T>)
        return pyvalue::borrow(v.ptr());
    else
        return to_py(v);
}
} // namespace detail

#define ISTHMUS_PY_BINARY(OP, CODE)                                                                \
    template <typename A, typename B>                                                              \
    requires detail::py_operands<A, B> pyvalue operator OP(const A& a, const B& b) {               \
        return detail::binary(detail::binop::CODE, detail::py_operand(a).get(),                    \
                              detail::py_operand(b).get());                                        \
    }                                                                                              \
    template <typename A, typename B>                                                              \
    requires detail::is_pyapi_v<A> A& operator OP##=(A& a, const B& b) {                           \
        a = detail::inplace(detail::binop::CODE, a.ptr(), detail::py_operand(b).get());            \
        return a;                                                                                  \
    }
ISTHMUS_PY_BINARY(+, add)
ISTHMUS_PY_BINARY(-, sub)
ISTHMUS_PY_BINARY(*, mul)
ISTHMUS_PY_BINARY(/, truediv)
ISTHMUS_PY_BINARY(%, mod)
ISTHMUS_PY_BINARY(&, and_)
ISTHMUS_PY_BINARY(|, or_)
ISTHMUS_PY_BINARY(^, xor_)
#undef ISTHMUS_PY_BINARY

/// Python's `a // b`.
template <typename A, typename B>
requires detail::py_operands<A, B> pyvalue floordiv(const A& a, const B& b) {
    return detail::binary(detail::binop::floordiv, detail::py_operand(a).get(),
                          detail::py_operand(b).get());
}
/// Python's `a ** b`.
template <typename A, typename B>
requires detail::py_operands<A, B> pyvalue pow(const A& a, const B& b) {
    return detail::binary(detail::binop::pow, detail::py_operand(a).get(),
                          detail::py_operand(b).get());
}
/// Python's `a @ b`.
template <typename A, typename B>
requires detail::py_operands<A, B> pyvalue matmul(const A& a, const B& b) {
    return detail::binary(detail::binop::matmul, detail::py_operand(a).get(),
                          detail::py_operand(b).get());
}
/// Python's `a << b` and `a >> b` (operator<< is kept for printing to streams).
template <typename A, typename B>
requires detail::py_operands<A, B> pyvalue lshift(const A& a, const B& b) {
    return detail::binary(detail::binop::lshift, detail::py_operand(a).get(),
                          detail::py_operand(b).get());
}
template <typename A, typename B>
requires detail::py_operands<A, B> pyvalue rshift(const A& a, const B& b) {
    return detail::binary(detail::binop::rshift, detail::py_operand(a).get(),
                          detail::py_operand(b).get());
}

/// Unary minus, plus, `~` and `!` (Python's `not`, a Python bool).
template <typename D>
pyvalue operator-(const pyapi<D>& a) {
    return detail::unary(detail::unop::neg, a.ptr());
}
template <typename D>
pyvalue operator+(const pyapi<D>& a) {
    return detail::unary(detail::unop::pos, a.ptr());
}
template <typename D>
pyvalue operator~(const pyapi<D>& a) {
    return detail::unary(detail::unop::invert, a.ptr());
}
template <typename D>
pyvalue operator!(const pyapi<D>& a) {
    return detail::unary(detail::unop::not_, a.ptr());
}
/// Python's abs(a).
template <typename D>
pyvalue abs(const pyapi<D>& a) {
    return detail::unary(detail::unop::abs, a.ptr());
}

/// Comparisons return what Python returns (a bool, or an array for NumPy operands); use them
/// in conditions through bool(), which is Python's truthiness.
#define ISTHMUS_PY_COMPARE(OP, CODE)                                                               \
    template <typename A, typename B>                                                              \
    requires detail::py_operands<A, B> pyvalue operator OP(const A& a, const B& b) {               \
        return detail::compare(detail::cmpop::CODE, detail::py_operand(a).get(),                   \
                               detail::py_operand(b).get());                                       \
    }
ISTHMUS_PY_COMPARE(<, lt)
ISTHMUS_PY_COMPARE(<=, le)
ISTHMUS_PY_COMPARE(==, eq)
ISTHMUS_PY_COMPARE(!=, ne)
ISTHMUS_PY_COMPARE(>, gt)
ISTHMUS_PY_COMPARE(>=, ge)
#undef ISTHMUS_PY_COMPARE

/// Prints str(v).
ISTHMUS_API std::ostream& operator<<(std::ostream& os, const pyvalue& v);
inline std::ostream& operator<<(std::ostream& os, const attr_ref& v) {
    return os << pyvalue(v);
}
inline std::ostream& operator<<(std::ostream& os, const item_ref& v) {
    return os << pyvalue(v);
}

} // namespace isthmus
