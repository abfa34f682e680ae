// The plugin author layer's active numbers: the scalar type a generic function is instantiated
// with when the library derives its backward pass (reverse mode: a tape per call or position).
#pragma once

#include "isthmus/plugin/tape.hpp"

namespace isthmus::plugin {

// Note [active numbers]
// ~~~~~~~~~~~~~~~~~~~~~
// A generic function (a template over its element type T, registered with generic<...>) is also
// instantiated with T = active<E>: every arithmetic operation on active numbers computes the value
// as E would and records what its derivative needs on the tape the numbers carry (one per derived
// function call, one per kernel position): the operands and the partial derivatives with respect
// to them. The derived backward (Note [derived backward] in isthmus/plugin/derive.hpp) makes each
// element read from a differentiable input a leaf, runs the function once, hands the result's
// elements the gradient it is given, and sweeps the tape from the end: each node passes its
// adjoint times its partials to its operands, so the leaves' gradient elements end with the
// vector-Jacobian product. An active number that depends on no leaf (a literal, a constant)
// carries no tape and records nothing; an operation on constants is a constant too. The path
// recorded is the one the forward took: branches and loops on values (compared as E) are allowed,
// and where a branch switches the derivative is that of the side taken (as torch's is). Mixing
// active<E> with plain numbers converts them to E; conversion out of an active number is explicit
// (value_of), so no operation drops a derivative silently: std::floor(x) of an active x does not
// compile, floor(x) (found by argument-dependent lookup, derivative 0) or std::floor(value_of(x))
// do.

// Note [leaves are not nodes]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A value read from a differentiable input (a leaf) records nothing: it carries the address of
// its element of the input's gradient. An operation on two active operands records a node whose
// operands are earlier nodes or such addresses; the sweep adds a leaf's share straight into its
// gradient element (atomically in a kernel), and a result or written output that is a leaf (a
// copy, a gather: the mapping layer's y = a[x]) passes its gradient straight into it. Reads used
// only through value_of, or not at all, cost nothing; a 3x3 blur's position records its eight sums
// and nothing else.

// Note [one-operand chains]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// An operation with one active operand (a product with a constant, a sum with one, a negation,
// sin(x), exp(x), ...) records no node: its result keeps the operand's node or leaf and multiplies
// the operand's scale (d result / d that node or leaf) by the operation's partial. Only an
// operation of two active operands makes a node, whose partials are taken times the operands'
// scales; a result or an output written takes its gradient times its scale. So `s += w * x(i)` over
// a stencil's nine reads, or a chain of math functions of one input, records a node per sum, not
// per operation: a 3x3 blur's position records 8 nodes where one per operation and per read
// (See Note [leaves are not nodes]) would be 27, and the sweep, which is bound by the latency of
// its dependent adds, shortens as much.

template <typename E>
class active;

namespace detail {

template <typename T>
struct is_active : std::false_type {};
template <typename E>
struct is_active<active<E>> : std::true_type {};

} // namespace detail

/// A number that records the operations on it, for the backward pass the library derives from a
/// generic function (See Note [active numbers]). Arithmetic, comparisons and the math functions
/// below work as on E; value_of(x) is the plain value.
template <typename E>
class active {
    static_assert(std::is_floating_point_v<E>, "active numbers are float or double");

public:
    using value_type = E;

    active() = default;
    /// A constant (depends on no input).
    template <typename S>
    requires std::is_arithmetic_v<S> ISTHMUS_HD active(S v) : v_(static_cast<E>(v)) {}

    /// The plain value.
    ISTHMUS_HD E value() const { return v_; }
    /// What its derivative goes to: a node of its tape or a leaf's gradient element (See Note
    /// [tape references]; 0: a constant).
    ISTHMUS_HD detail::tape_ref ref() const { return ref_; }
    /// The tape it is recorded on (null: a constant).
    ISTHMUS_HD detail::tape<E>* recorded_on() const { return tape_; }

    /// d value / d (its node or leaf): the chain of one-operand operations since then.
    ISTHMUS_HD E scale() const { return scale_; }

    /// A leaf of tape `t` with value v whose adjoint goes to `*target` (a constant when null);
    /// used by the derived backward. See Note [leaves are not nodes].
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD static active leaf(detail::tape<E>& t, E v, E* target) {
        active r(v);
        if (target) {
            r.tape_ = &t;
            r.ref_ = reinterpret_cast<detail::tape_ref>(target);
        }
        return r;
    }
    /// The result of an operation with value v and operands x (partial dx) and y (partial dy).
    /// See Note [one-operand chains].
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD static active
    node(E v, const active& x, E dx, const active& y = active(), E dy = E(0)) {
        active r(v);
        if (x.tape_ && y.tape_) {
            r.tape_ = x.tape_;
            r.ref_ = x.tape_->push(x.ref_, dx * x.scale_, y.ref_, dy * y.scale_);
        } else if (x.tape_ || y.tape_) {
            const active& a = x.tape_ ? x : y;
            r.tape_ = a.tape_;
            r.ref_ = a.ref_;
            r.scale_ = (x.tape_ ? dx : dy) * a.scale_;
        }
        return r;
    }
    /// Adds g times its scale to its node's adjoint in `adj`, or to its leaf's gradient element:
    /// how a result or a written output takes its gradient.
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD void
    take_gradient(typename detail::tape<E>::adjoints& adj, E g) const {
        if (tape_) tape_->add_gradient(adj, ref_, scale_ * g);
    }

    ISTHMUS_HD active& operator+=(const active& o) { return *this = *this + o; }
    ISTHMUS_HD active& operator-=(const active& o) { return *this = *this - o; }
    ISTHMUS_HD active& operator*=(const active& o) { return *this = *this * o; }
    ISTHMUS_HD active& operator/=(const active& o) { return *this = *this / o; }

    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD friend active operator+(const active& x) { return x; }
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD friend active operator-(const active& x) {
        return node(-x.v_, x, E(-1));
    }
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD friend active operator+(const active& x,
                                                                  const active& y) {
        return node(x.v_ + y.v_, x, E(1), y, E(1));
    }
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD friend active operator-(const active& x,
                                                                  const active& y) {
        return node(x.v_ - y.v_, x, E(1), y, E(-1));
    }
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD friend active operator*(const active& x,
                                                                  const active& y) {
        return node(x.v_ * y.v_, x, y.v_, y, x.v_);
    }
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD friend active operator/(const active& x,
                                                                  const active& y) {
        const E q = x.v_ / y.v_;
        return node(q, x, E(1) / y.v_, y, -q / y.v_);
    }
    ISTHMUS_HD friend bool operator==(const active& x, const active& y) { return x.v_ == y.v_; }
    ISTHMUS_HD friend auto operator<=>(const active& x, const active& y) { return x.v_ <=> y.v_; }

private:
    E v_ = E(0);
    E scale_ = E(1);
    detail::tape_ref ref_ = 0;
    detail::tape<E>* tape_ = nullptr;
};

// Mixed operations of a derivative number type NUM (active here, dual in dual.hpp) and a plain
// number: the plain number becomes a constant NUM<E>.
#define ISTHMUS_NUMBER_MIXED(NUM, OP)                                                              \
    template <typename E, typename S>                                                              \
    requires std::is_arithmetic_v<S> ISTHMUS_HD auto operator OP(const NUM<E>& x, S y) {           \
        return x OP NUM<E>(y);                                                                     \
    }                                                                                              \
    template <typename E, typename S>                                                              \
    requires std::is_arithmetic_v<S> ISTHMUS_HD auto operator OP(S x, const NUM<E>& y) {           \
        return NUM<E>(x) OP y;                                                                     \
    }
#define ISTHMUS_NUMBER_MIXED_ALL(NUM)                                                              \
    ISTHMUS_NUMBER_MIXED(NUM, +)                                                                   \
    ISTHMUS_NUMBER_MIXED(NUM, -)                                                                   \
    ISTHMUS_NUMBER_MIXED(NUM, *)                                                                   \
    ISTHMUS_NUMBER_MIXED(NUM, /)                                                                   \
    ISTHMUS_NUMBER_MIXED(NUM, ==)                                                                  \
    ISTHMUS_NUMBER_MIXED(NUM, <=>)
ISTHMUS_NUMBER_MIXED_ALL(active)

/// The plain value of an active number; any other value as it is. For code that must not be
/// differentiated through, e.g. an index: `a(static_cast<int64_t>(std::floor(value_of(x))))`.
template <typename E>
ISTHMUS_HD E value_of(const active<E>& x) {
    return x.value();
}
template <typename T>
requires(!detail::is_active<T>::value) ISTHMUS_HD const T& value_of(const T& x) {
    return x;
}

// The math functions of the derivative numbers (active<E> here, dual<E> in dual.hpp), one rule
// each: X(name, its value f at v, its derivative at v (which may use f)). Used by both types,
// so their derivatives cannot disagree.
#define ISTHMUS_PLUGIN_UNARY_RULES(X)                                                              \
    X(sin, sin(v), cos(v))                                                                         \
    X(cos, cos(v), -std::sin(v))                                                                   \
    X(tan, tan(v), E(1) + f * f)                                                                   \
    X(asin, asin(v), E(1) / std::sqrt(E(1) - v * v))                                               \
    X(acos, acos(v), E(-1) / std::sqrt(E(1) - v * v))                                              \
    X(atan, atan(v), E(1) / (E(1) + v * v))                                                        \
    X(sinh, sinh(v), std::cosh(v))                                                                 \
    X(cosh, cosh(v), std::sinh(v))                                                                 \
    X(tanh, tanh(v), E(1) - f * f)                                                                 \
    X(exp, exp(v), f)                                                                              \
    X(exp2, exp2(v), f* E(0.693147180559945309417232121458176568L))                                \
    X(expm1, expm1(v), f + E(1))                                                                   \
    X(log, log(v), E(1) / v)                                                                       \
    X(log2, log2(v), E(1) / (v * E(0.693147180559945309417232121458176568L)))                      \
    X(log10, log10(v), E(1) / (v * E(2.30258509299404568401799145468436421L)))                     \
    X(log1p, log1p(v), E(1) / (E(1) + v))                                                          \
    X(sqrt, sqrt(v), E(0.5) / f)                                                                   \
    X(cbrt, cbrt(v), E(1) / (E(3) * f * f))                                                        \
    X(erf, erf(v), E(1.12837916709551257389615890312154517L) * std::exp(-v * v))                   \
    X(fabs, fabs(v), v > E(0) ? E(1) : (v < E(0) ? E(-1) : E(0)))                                  \
    X(abs, abs(v), v > E(0) ? E(1) : (v < E(0) ? E(-1) : E(0)))                                    \
    X(floor, floor(v), E(0))                                                                       \
    X(ceil, ceil(v), E(0))                                                                         \
    X(round, round(v), E(0))                                                                       \
    X(trunc, trunc(v), E(0))

// Math on active numbers, found by argument-dependent lookup (`sin(x)`), or as ip::sin(x) for
// active and plain numbers alike; each records its derivative (floor, ceil, round, trunc: 0).
#define ISTHMUS_ACTIVE_UNARY(NAME, VALUE, DERIV)                                                   \
    template <typename E>                                                                          \
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD active<E> NAME(const active<E>& x) {                     \
        using std::NAME;                                                                           \
        const E v = x.value();                                                                     \
        const E f = VALUE;                                                                         \
        return active<E>::node(f, x, DERIV);                                                       \
    }                                                                                              \
    template <typename T>                                                                          \
    requires std::is_floating_point_v<T> ISTHMUS_HD T NAME(T x) {                                  \
        return std::NAME(x);                                                                       \
    }
ISTHMUS_PLUGIN_UNARY_RULES(ISTHMUS_ACTIVE_UNARY)
#undef ISTHMUS_ACTIVE_UNARY

namespace detail {
/// A two-operand function's value and partial derivatives at (x, y).
template <typename E>
struct partials {
    E f, dx, dy;
};
/// x^y; d/dx = y x^(y-1), d/dy = x^y log x (0 where x is not positive).
template <typename E>
ISTHMUS_HD partials<E> pow_rule(E x, E y) {
    const E f = std::pow(x, y);
    return {f, y == E(0) ? E(0) : y * std::pow(x, y - E(1)), x > E(0) ? f * std::log(x) : E(0)};
}
/// atan2(y, x) with its partials by y (dx) and by x (dy): the angle of (x, y).
template <typename E>
ISTHMUS_HD partials<E> atan2_rule(E y, E x) {
    const E r2 = x * x + y * y;
    return {std::atan2(y, x), r2 == E(0) ? E(0) : x / r2, r2 == E(0) ? E(0) : -y / r2};
}
/// hypot(x, y) = sqrt(x^2 + y^2).
template <typename E>
ISTHMUS_HD partials<E> hypot_rule(E x, E y) {
    const E h = std::hypot(x, y);
    return {h, h == E(0) ? E(0) : x / h, h == E(0) ? E(0) : y / h};
}
} // namespace detail

/// x to the power y (active, plain or mixed); d/dx = y x^(y-1), d/dy = x^y log x (0 where x is 0).
template <typename E>
ISTHMUS_HD active<E> pow(const active<E>& x, const active<E>& y) {
    const auto r = detail::pow_rule(x.value(), y.value());
    return active<E>::node(r.f, x, r.dx, y, r.dy);
}
template <typename E, typename S>
requires std::is_arithmetic_v<S> ISTHMUS_HD active<E> pow(const active<E>& x, S y) {
    return pow(x, active<E>(y));
}
template <typename E, typename S>
requires std::is_arithmetic_v<S> ISTHMUS_HD active<E> pow(S x, const active<E>& y) {
    return pow(active<E>(x), y);
}
/// atan2(y, x): the angle of (x, y).
template <typename E>
ISTHMUS_HD active<E> atan2(const active<E>& y, const active<E>& x) {
    const auto r = detail::atan2_rule(y.value(), x.value());
    return active<E>::node(r.f, y, r.dx, x, r.dy);
}
/// hypot(x, y) = sqrt(x^2 + y^2).
template <typename E>
ISTHMUS_HD active<E> hypot(const active<E>& x, const active<E>& y) {
    const auto r = detail::hypot_rule(x.value(), y.value());
    return active<E>::node(r.f, x, r.dx, y, r.dy);
}
/// The smaller / larger of two numbers: the derivative goes to the one taken (the first on ties).
template <typename E>
ISTHMUS_HD active<E> fmin(const active<E>& x, const active<E>& y) {
    return y.value() < x.value() ? y : x;
}
template <typename E>
ISTHMUS_HD active<E> fmax(const active<E>& x, const active<E>& y) {
    return y.value() > x.value() ? y : x;
}
// The two-argument functions on plain numbers, so that ip::pow(x, y) serves both instantiations.
#define ISTHMUS_PLAIN_BINARY(NAME)                                                                 \
    template <typename T>                                                                          \
    requires std::is_floating_point_v<T> ISTHMUS_HD T NAME(T x, T y) {                             \
        return std::NAME(x, y);                                                                    \
    }
ISTHMUS_PLAIN_BINARY(pow)
ISTHMUS_PLAIN_BINARY(atan2)
ISTHMUS_PLAIN_BINARY(hypot)
ISTHMUS_PLAIN_BINARY(fmin)
ISTHMUS_PLAIN_BINARY(fmax)
#undef ISTHMUS_PLAIN_BINARY

} // namespace isthmus::plugin
