// The plugin author layer's dual numbers: the scalar type a generic function or kernel is
// instantiated with for the forward mode the library derives from it (a value and its tangent).
#pragma once

#include "isthmus/plugin/active.hpp"

namespace isthmus::plugin {

// Note [dual numbers]
// ~~~~~~~~~~~~~~~~~~~
// The forward mode derived from a generic function or kernel (`<name>_jvp`, Note [derived forward
// mode] in isthmus/plugin/derive.hpp) runs it once with T = dual<E>: a number that carries its
// value and its tangent (the derivative along the direction the caller gives) and computes both at
// each operation, the tangent by the operation's partial derivatives, the rules active<E> records
// for the backward (ISTHMUS_PLUGIN_UNARY_RULES and the two-operand rules in active.hpp, shared so
// that the two modes cannot disagree). Nothing is recorded: no tape, no sweep, no memory beyond
// the numbers, so a forward mode costs about twice the plain function (each operation computed
// once more for the tangent), where reverse mode pays for recording and replaying every
// operation. A read of a differentiable input is the element and its tangent's element; an
// operation on constants is a constant (tangent 0). The path is the one the forward takes, as in
// reverse mode; comparisons and value_of see the value. A dual number converts from plain numbers
// and not back (value_of), as active<E> does.

/// A value with its tangent, for the forward mode derived from generic code (See Note [dual
/// numbers]). Arithmetic, comparisons and the math functions work as on E; value_of(x) is the
/// value.
template <typename E>
class dual {
    static_assert(std::is_floating_point_v<E>, "dual numbers are float or double");

public:
    using value_type = E;

    dual() = default;
    /// A constant (tangent 0).
    template <typename S>
    requires std::is_arithmetic_v<S> ISTHMUS_HD dual(S v) : v_(static_cast<E>(v)) {}
    /// The value v with tangent t.
    ISTHMUS_HD dual(E v, E t) : v_(v), t_(t) {}

    /// The plain value.
    ISTHMUS_HD E value() const { return v_; }
    /// d value along the direction of the forward mode.
    ISTHMUS_HD E tangent() const { return t_; }

    ISTHMUS_HD dual& operator+=(const dual& o) { return *this = *this + o; }
    ISTHMUS_HD dual& operator-=(const dual& o) { return *this = *this - o; }
    ISTHMUS_HD dual& operator*=(const dual& o) { return *this = *this * o; }
    ISTHMUS_HD dual& operator/=(const dual& o) { return *this = *this / o; }

    ISTHMUS_HD friend dual operator+(const dual& x) { return x; }
    ISTHMUS_HD friend dual operator-(const dual& x) { return {-x.v_, -x.t_}; }
    ISTHMUS_HD friend dual operator+(const dual& x, const dual& y) {
        return {x.v_ + y.v_, x.t_ + y.t_};
    }
    ISTHMUS_HD friend dual operator-(const dual& x, const dual& y) {
        return {x.v_ - y.v_, x.t_ - y.t_};
    }
    ISTHMUS_HD friend dual operator*(const dual& x, const dual& y) {
        return {x.v_ * y.v_, x.t_ * y.v_ + x.v_ * y.t_};
    }
    ISTHMUS_HD friend dual operator/(const dual& x, const dual& y) {
        const E q = x.v_ / y.v_;
        return {q, (x.t_ - q * y.t_) / y.v_};
    }
    ISTHMUS_HD friend bool operator==(const dual& x, const dual& y) { return x.v_ == y.v_; }
    ISTHMUS_HD friend auto operator<=>(const dual& x, const dual& y) { return x.v_ <=> y.v_; }

private:
    E v_ = E(0);
    E t_ = E(0);
};

// Mixed operations: a plain number becomes a constant dual<E>.
ISTHMUS_NUMBER_MIXED_ALL(dual)

/// The plain value of a dual number.
template <typename E>
ISTHMUS_HD E value_of(const dual<E>& x) {
    return x.value();
}

// Math on dual numbers, by the rules active numbers record (See Note [dual numbers]).
#define ISTHMUS_DUAL_UNARY(NAME, VALUE, DERIV)                                                     \
    template <typename E>                                                                          \
    ISTHMUS_HD dual<E> NAME(const dual<E>& x) {                                                    \
        using std::NAME;                                                                           \
        const E v = x.value();                                                                     \
        const E f = VALUE;                                                                         \
        return {f, (DERIV)*x.tangent()};                                                           \
    }
ISTHMUS_PLUGIN_UNARY_RULES(ISTHMUS_DUAL_UNARY)
#undef ISTHMUS_DUAL_UNARY

namespace detail {
/// The result of a two-operand rule applied to dual operands.
template <typename E>
ISTHMUS_HD dual<E> apply_rule(const partials<E>& r, const dual<E>& x, const dual<E>& y) {
    return {r.f, r.dx * x.tangent() + r.dy * y.tangent()};
}
} // namespace detail

/// x to the power y (dual, plain or mixed).
template <typename E>
ISTHMUS_HD dual<E> pow(const dual<E>& x, const dual<E>& y) {
    return detail::apply_rule(detail::pow_rule(x.value(), y.value()), x, y);
}
template <typename E, typename S>
requires std::is_arithmetic_v<S> ISTHMUS_HD dual<E> pow(const dual<E>& x, S y) {
    return pow(x, dual<E>(y));
}
template <typename E, typename S>
requires std::is_arithmetic_v<S> ISTHMUS_HD dual<E> pow(S x, const dual<E>& y) {
    return pow(dual<E>(x), y);
}
/// atan2(y, x): the angle of (x, y).
template <typename E>
ISTHMUS_HD dual<E> atan2(const dual<E>& y, const dual<E>& x) {
    return detail::apply_rule(detail::atan2_rule(y.value(), x.value()), y, x);
}
/// hypot(x, y) = sqrt(x^2 + y^2).
template <typename E>
ISTHMUS_HD dual<E> hypot(const dual<E>& x, const dual<E>& y) {
    return detail::apply_rule(detail::hypot_rule(x.value(), y.value()), x, y);
}
/// The smaller / larger of two numbers, with its tangent (the first on ties).
template <typename E>
ISTHMUS_HD dual<E> fmin(const dual<E>& x, const dual<E>& y) {
    return y.value() < x.value() ? y : x;
}
template <typename E>
ISTHMUS_HD dual<E> fmax(const dual<E>& x, const dual<E>& y) {
    return y.value() > x.value() ? y : x;
}

} // namespace isthmus::plugin
