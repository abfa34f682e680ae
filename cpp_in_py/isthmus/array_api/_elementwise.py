"""Elementwise functions of the array API namespace: isthmus's ops, renamed or composed."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _isthmus as _q
from . import _helpers

_t = _helpers.tensor
_o = _helpers.out


def _unary(name: str, fn: Any, doc: str) -> Any:
    def f(x: Any, /) -> Any:
        return _o(fn(_t(x)))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


# What a comparison of an integer array with a Python int beyond its dtype's range gives: the
# answer for an int above the range (below it, the comparison flips). NumPy 2 answers these
# without casting the int; isthmus's ops raise OverflowError.
_BEYOND = {"equal": False, "not_equal": True, "less": True, "less_equal": True,
           "greater": False, "greater_equal": False}


def _compare_beyond(name: str, a: Any, b: Any) -> Any:
    """The comparison when one operand is a Python int outside the other's integer dtype (else
    None)."""
    arr, num, flip = (a, b, False) if isinstance(a, _q.qvalue) else (b, a, True)
    if not isinstance(num, int) or isinstance(num, bool) or arr.dtype.kind not in "iu":
        return None
    info = np.iinfo(arr.dtype)
    if info.min <= num <= info.max:
        return None
    above = num > info.max
    answer = _BEYOND[name]
    if name not in ("equal", "not_equal"):
        answer = answer if above else not answer
        if flip:  # num OP arr is arr OP' num with the order reversed
            answer = not answer
    return _q.full(arr.shape, answer, dtype="bool")


def _binary(name: str, fn: Any, doc: str) -> Any:
    def f(x1: Any, x2: Any, /) -> Any:
        a, b = _helpers.two(x1, x2)
        if name in _BEYOND:
            r = _compare_beyond(name, a, b)
            if r is not None:
                return r
        return _o(fn(a, b))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


# ---- the ops isthmus has, under the standard's names ----

_UNARY = {
    "abs": _q.abs, "acos": _q.acos, "acosh": _q.acosh, "asin": _q.asin, "asinh": _q.asinh,
    "atan": _q.atan, "atanh": _q.atanh, "bitwise_invert": _q.bitwise_not, "ceil": _q.ceil,
    "conj": _q.conj, "cos": _q.cos, "cosh": _q.cosh, "exp": _q.exp,
    "floor": _q.floor, "imag": _q.imag, "isfinite": _q.isfinite, "isinf": _q.isinf,
    "isnan": _q.isnan, "log": _q.log, "log1p": _q.log1p, "log2": _q.log2, "log10": _q.log10,
    "logical_not": _q.logical_not, "negative": _q.negative, "real": _q.real,
    "reciprocal": _q.reciprocal, "round": _q.round, "signbit": _q.signbit, "sin": _q.sin,
    "sinh": _q.sinh, "square": _q.square, "sqrt": _q.sqrt, "tan": _q.tan, "tanh": _q.tanh,
}

_BINARY = {
    "add": _q.add, "atan2": _q.atan2, "bitwise_and": _q.bitwise_and,
    "bitwise_left_shift": _q.left_shift, "bitwise_or": _q.bitwise_or,
    "bitwise_right_shift": _q.right_shift, "bitwise_xor": _q.bitwise_xor, "divide": _q.divide,
    "equal": _q.equal, "greater": _q.greater,
    "greater_equal": _q.greater_equal, "less": _q.less, "less_equal": _q.less_equal,
    "logical_and": _q.logical_and, "logical_or": _q.logical_or, "logical_xor": _q.logical_xor,
    "maximum": _q.maximum, "minimum": _q.minimum, "multiply": _q.multiply,
    "not_equal": _q.not_equal, "pow": _q.pow, "remainder": _q.remainder,
    "subtract": _q.subtract,
}

for _name, _fn in _UNARY.items():
    globals()[_name] = _unary(_name, _fn, f"Elementwise {_name} (isthmus's q.{_fn.__name__}).")
for _name, _fn in _BINARY.items():
    globals()[_name] = _binary(_name, _fn, f"Elementwise {_name} (isthmus's q.{_fn.__name__}).")


# ---- composed from isthmus ops (the same code runs on every device) ----

def _complex_from(re: Any, im: Any, dtype: Any) -> Any:
    """A complex array from its real and imaginary parts (written through the views, so an
    infinite part does not turn the other into NaN as `re + im * 1j` would)."""
    z = _q.zeros(re.shape, dtype=dtype)
    z.real[...] = re
    z.imag[...] = im
    return z


def expm1(x: Any, /) -> Any:
    """exp(x) - 1, accurate near 0; complex x composed with the standard's special cases."""
    x = _t(x)
    if x.dtype.kind != "c":
        return _o(_q.expm1(x))
    # expm1(a + bi) = (expm1(a) cos b - 2 sin^2(b/2)) + i exp(a) sin b, which keeps the accuracy
    # of expm1 near 0; the rest are the standard's special cases
    a, b = _q.real(x), _q.imag(x)
    half = _q.sin(b * 0.5)
    re = _q.expm1(a) * _q.cos(b) - 2 * half * half
    im = _q.exp(a) * _q.sin(b)
    zero_b = b == 0  # expm1(a) + bi, b's sign kept (a may be inf or NaN); for a = -0 the
    re = _q.where(zero_b, _q.expm1(a) + 0, re)  # real part is +0 (the standard's +-0 + 0j)
    im = _q.where(zero_b, b, im)
    minus_inf = _q.logical_and(_q.isinf(a), a < 0)  # -1 + 0i whatever b is
    re = _q.where(minus_inf, -1, re)
    im = _q.where(minus_inf, _q.where(_q.isfinite(b), im * 0, 0), im)
    plus_inf = _q.logical_and(_q.logical_and(_q.isinf(a), a > 0), _q.logical_not(_q.isfinite(b)))
    re = _q.where(plus_inf, math.inf, re)  # inf + NaN i for an infinite or NaN b
    im = _q.where(plus_inf, math.nan, im)
    return _complex_from(re, im, x.dtype)


def floor_divide(x1: Any, x2: Any, /) -> Any:
    """floor(x1 / x2), NumPy's exact floor division; infinite operands give the standard's
    special cases (NumPy and q.floor_divide give NaN for inf // 2, the standard +inf)."""
    a, b = _helpers.two(x1, x2)
    r = _q.floor_divide(a, b)
    if isinstance(r, _q.qvalue) and r.dtype.kind == "f":
        inf = _q.logical_or(_q.isinf(a), _q.isinf(b))
        r = _q.where(inf, _q.floor(_q.divide(a, b)), r)
    return _o(r)


def positive(x: Any, /) -> Any:
    """+x: a copy of x."""
    return _q.copy(_t(x))


def sign(x: Any, /) -> Any:
    """-1, 0 or 1 by x's sign (NaN stays NaN); x / |x| for complex x (0 for 0, NaN for inf)."""
    x = _t(x)
    if x.dtype.kind == "f":
        return _o(_q.sign(x) + 0)  # -0.0 + 0 is +0.0: the standard's sign(-0.0) is +0
    if x.dtype.kind != "c":
        return _o(_q.sign(x))
    mag = _q.abs(x)
    return _q.where(mag == 0, _q.zeros_like(x), x / _q.where(mag == 0, 1, mag).astype(x.dtype))


def trunc(x: Any, /) -> Any:
    """Rounds toward zero (integers unchanged)."""
    x = _t(x)
    if x.dtype.kind in "biu":
        return _q.copy(x)
    return _q.where(x < 0, _q.ceil(x), _q.floor(x))


def copysign(x1: Any, x2: Any, /) -> Any:
    """|x1| with the sign bit of x2 (-0.0 and a NaN with the sign bit count as negative)."""
    a, b = _helpers.two(x1, x2)
    if not isinstance(b, _q.qvalue):
        b = _q.full((), float(b), dtype=a.dtype)
    if not isinstance(a, _q.qvalue):
        a = _q.full((), float(a), dtype=b.dtype)
    dt = np.promote_types(a.dtype, b.dtype)
    mag = _q.abs(a if a.dtype == dt else a.astype(dt))
    return _o(_q.where(_q.signbit(b), _q.negative(mag), mag))


def hypot(x1: Any, x2: Any, /) -> Any:
    """sqrt(x1**2 + x2**2) without undue overflow (scaled by the larger magnitude)."""
    a, b = _helpers.two(x1, x2)
    a, b = _q.abs(a), _q.abs(b)
    big = _q.maximum(a, b)
    small = _q.minimum(a, b)
    safe = _q.where(big == 0, 1, big)
    ratio = small / safe
    r = big * _q.sqrt(1 + ratio * ratio)
    r = _q.where(_q.logical_or(_q.isinf(a), _q.isinf(b)), math.inf, r)
    return _o(r)


def logaddexp(x1: Any, x2: Any, /) -> Any:
    """log(exp(x1) + exp(x2)) without overflow."""
    a, b = _helpers.two(x1, x2)
    big = _q.maximum(a, b)
    r = big + _q.log1p(_q.exp(-_q.abs(a - b)))
    # equal infinities: a - b is NaN, the answer is the infinity itself
    r = _q.where(_q.logical_and(a == b, _q.isinf(big)), big, r)
    return _o(r)


def _nan(bound: Any) -> Any:
    """Where a clip bound is NaN (False for integer bounds)."""
    if isinstance(bound, _q.qvalue):
        kind = bound.dtype.kind if not isinstance(bound.dtype, str) else "f"
        return _q.isnan(bound) if kind in "fc" else False
    return isinstance(bound, (float, complex)) and bound != bound


def clip(x: Any, /, min: Any = None, max: Any = None) -> Any:  # noqa: A002
    """x limited to [min, max] (either may be None, a number or an array); keeps x's dtype."""
    x = _t(x)
    if min is None and max is None:
        return _q.copy(x)
    r = x
    min, max = _helpers.exact_scalar(min, x), _helpers.exact_scalar(max, x)
    # A NaN bound gives NaN, as NumPy's clip (maximum/minimum propagate NaN): `r < nan` is
    # false, so the bound's NaN is put in explicitly.
    if min is not None:
        r = _q.where(_q.logical_or(_q.less(r, min), _nan(min)), min, r)
        r = _q.where(_q.isnan(x), x, r) if x.dtype.kind == "f" else r
    if max is not None:
        r = _q.where(_q.logical_or(_q.greater(r, max), _nan(max)), max, r)
        r = _q.where(_q.isnan(x), x, r) if x.dtype.kind == "f" else r
    r = _o(r)
    if r.dtype != x.dtype:
        r = r.astype(x.dtype)
    if r.shape != x.shape:
        r = _q.copy(_q.broadcast_to(r, x.shape))
    return r


def nextafter(x1: Any, x2: Any, /) -> Any:
    """The next representable float after x1 toward x2 (isthmus's nextafter, any device)."""
    a, b = _helpers.two(x1, x2)
    dt = a.dtype if isinstance(a, _q.qvalue) else b.dtype
    if not isinstance(a, _q.qvalue):
        a = _q.full((), float(a), dtype=dt)
    if not isinstance(b, _q.qvalue):
        b = _q.full((), float(b), dtype=dt)
    if a.dtype != b.dtype:
        raise TypeError(f"nextafter: the arrays must have one dtype, got {a.dtype} and {b.dtype}")
    if a.dtype.kind != "f":
        raise TypeError(f"nextafter needs real floating-point arrays, got {a.dtype}")
    return _helpers.out(_q.nextafter(a, b))


__all__ = sorted(list(_UNARY) + list(_BINARY) + [
    "expm1", "floor_divide", "positive", "sign", "trunc", "copysign", "hypot", "logaddexp",
    "clip", "nextafter"])
