"""Foreign array types, which the protocols leave alone (See Note [NumPy protocols], rule 4)."""

from __future__ import annotations

import builtins
import sys
from typing import Any

import numpy as np

from .. import _isthmus as _q

_qvalue = _q.qvalue


def _masked(x: Any) -> bool:
    """True for NumPy masked arrays, whose mask isthmus would drop (numpy.ma loaded only)."""
    ma = sys.modules.get("numpy.ma")
    return ma is not None and isinstance(x, ma.MaskedArray)


def _foreign(x: Any) -> bool:
    """True when x's type overrides NumPy's ufuncs itself (neither ndarray nor qvalue), and for
    masked arrays, whose meaning (the mask) isthmus cannot keep."""
    t = type(x)
    if issubclass(t, _qvalue):
        return False
    if not hasattr(t, "__array_ufunc__"):
        return False
    return t.__array_ufunc__ is not np.ndarray.__array_ufunc__ or _masked(x)


def _has_masked(x: Any, depth: int = 0) -> bool:
    """True when a masked array is among a function's arguments (or in a list of them)."""
    if _masked(x):
        return True
    if depth < 2 and type(x) in (list, tuple):
        return builtins.any(_has_masked(e, depth + 1) for e in x)
    if depth < 1 and type(x) is dict:
        return builtins.any(_has_masked(e, depth + 1) for e in x.values())
    return False
