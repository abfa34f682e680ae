"""NumPy's elementwise helpers that are functions (np.round, np.real, np.isclose, ...)."""

from __future__ import annotations

import math
import operator
from typing import Any

from .. import _isthmus as _q
from ._keywords import _kind, _operand, _shape_of, _store, _tensor, _unsupported
from ._tables import _implements

_qvalue = _q.qvalue


def _power_of_ten(n: int) -> float:
    """10.0**n for n >= 0, inf past float64's range (as NumPy's factor overflows)."""
    try:
        return 10.0**n
    except OverflowError:
        return math.inf


@_implements("round", "around")
def _np_round(a: Any, decimals: int = 0, out: Any = None) -> Any:
    A = _tensor(a)
    decimals = operator.index(decimals)
    # Note [round with huge decimals]
    # ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    # NumPy takes decimals as a C long (OverflowError past int64) and rounds floats as
    # rint(x * 10**d) / 10**d (rint(x / 10**-d) * 10**-d for d < 0), with the factor in the
    # array's dtype: once 10**|d| overflows to inf, the result is NaN (inf / inf, 0 * inf),
    # except for integers, which positive decimals leave as they are. isthmus computes the same
    # way, so it gives NumPy's values for any int64 decimals instead of failing on 10.0**400.
    if not -(2**63) <= decimals < 2**63:
        raise OverflowError(f"numpy.round: decimals={decimals} does not fit in int64 (NumPy "
                            "takes it as a C long)")
    kind = _kind(A.dtype)
    if decimals == 0 or kind in "biu" and decimals > 0:
        r = _q.round(A)
    elif kind in "fc":
        if decimals > 0:
            f = _power_of_ten(decimals)
            r = _q.round(A * f) / f
        else:
            f = _power_of_ten(-decimals)
            r = _q.round(A / f) * f
    else:
        raise _unsupported("numpy.round", "decimals", decimals,
                           "negative decimals for integers")
    if out is not None:
        return _store("rint", out, r, None, "same_kind")
    return r


@_implements("real")
def _np_real(val: Any) -> Any:
    return _q.real(_tensor(val))


@_implements("imag")
def _np_imag(val: Any) -> Any:
    return _q.imag(_tensor(val))


def _inexact(x: Any) -> Any:
    """x for isclose: integer and bool tensors as float64 (as NumPy does)."""
    if isinstance(x, _qvalue) and _kind(x.dtype) in "biu":
        return x.astype("float64")
    return x


@_implements("isclose")
def _np_isclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08,
                equal_nan: bool = False) -> Any:
    x, y = _inexact(_operand(a)), _inexact(_operand(b))
    finite = _q.logical_and(_q.isfinite(x), _q.isfinite(y))
    near = _q.less_equal(_q.abs(_q.subtract(x, y)), atol + rtol * _q.abs(y))
    r = _q.logical_or(_q.logical_and(finite, near), _q.equal(x, y))
    if equal_nan:
        r = _q.logical_or(r, _q.logical_and(_q.isnan(x), _q.isnan(y)))
    return r


@_implements("allclose")
def _np_allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08,
                 equal_nan: bool = False) -> bool:
    return bool(_q.all(_np_isclose(a, b, rtol, atol, equal_nan)))


@_implements("array_equal")
def _np_array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> bool:
    x, y = _operand(a1), _operand(a2)
    if _shape_of(x) != _shape_of(y):
        return False
    same = _q.equal(x, y)
    if equal_nan:
        same = _q.logical_or(same, _q.logical_and(_q.isnan(x), _q.isnan(y)))
    return bool(_q.all(same))
