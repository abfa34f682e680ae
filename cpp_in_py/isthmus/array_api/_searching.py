"""Searching functions of the array API namespace: argmax, nonzero, searchsorted, where, ..."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _isthmus as _q
from . import _helpers
from ._statistical import keep_dims

__all__ = ["argmax", "argmin", "count_nonzero", "nonzero", "searchsorted", "where"]

_t = _helpers.tensor


def _arg(fn: Any, fname: str, x: Any, axis: Any, keepdims: bool) -> Any:
    x = _t(x)
    if x.ndim == 0:
        return _q.zeros((), dtype="int64")
    if axis is None:
        r = _helpers.out(fn(x, axis=None))
        return _q.reshape(r, (1,) * x.ndim) if keepdims else r
    (ax,) = _helpers.axis_tuple(int(axis), x.ndim, fname)
    return keep_dims(fn(x, axis=ax, keepdims=False), x, ax, keepdims, fname)


def argmax(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    """The index of the first maximum along axis (None: of the flattened array)."""
    return _arg(_q.argmax, "argmax", x, axis, keepdims)


def argmin(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    """The index of the first minimum along axis (None: of the flattened array)."""
    return _arg(_q.argmin, "argmin", x, axis, keepdims)


def count_nonzero(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    """The number of nonzero elements along axis (int64)."""
    x = _t(x)
    axes = _helpers.axis_tuple(axis, x.ndim, "count_nonzero")
    nz = (x != 0).astype("int64")
    if x.ndim == 0 or not axes:
        return nz
    return keep_dims(_q.sum(nz, axis=axes, keepdims=False), x, axes, keepdims, "count_nonzero")


def nonzero(x: Any, /) -> tuple[Any, ...]:
    """The indices of the nonzero elements, one int64 array per dimension (not for 0-d arrays)."""
    x = _t(x)
    if x.ndim == 0:
        raise ValueError("nonzero is not defined for 0-d arrays")
    return tuple(_q.nonzero(x))


def where(condition: Any, x1: Any, x2: Any, /) -> Any:
    """x1 where condition is true, x2 elsewhere (broadcast; Python scalars are weak)."""
    c = _t(condition)
    a, b = _helpers.two(x1, x2)
    return _helpers.out(_q.where(c, a, b))


def _before(a: Any, b: Any) -> Any:
    """a < b in the sort order of the standard, where NaNs come last."""
    if a.dtype.kind not in "fc":
        return _q.less(a, b)
    return _q.logical_or(_q.less(a, b), _q.logical_and(_q.logical_not(_q.isnan(a)), _q.isnan(b)))


# Above this many comparisons searchsorted runs NumPy's binary search (See Note [CPU stopgaps]).
_COMPARE_LIMIT = 1 << 22


def searchsorted(x1: Any, x2: Any, /, *, side: str = "left", sorter: Any = None) -> Any:
    """Indices where x2's elements would go in the sorted 1-d x1 to keep it sorted (int64).

    Composed from comparisons (every device) while x1.size * x2.size is small; larger CPU
    inputs use NumPy's binary search, larger CUDA inputs raise TypeError (Note [CPU stopgaps]).
    """
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    x1 = _t(x1)
    x2 = _t(x2) if isinstance(x2, _q.qvalue) else _helpers.exact_scalar(x2, x1)
    x2 = _t(x2) if isinstance(x2, _q.qvalue) else _q.full((), x2, dtype=x1.dtype)
    if x1.ndim != 1:
        raise ValueError("searchsorted: x1 must be one-dimensional")
    if sorter is not None:
        x1 = _q.take(x1, _t(sorter))
    n = x1.shape[0]
    if n * max(x2.numel(), 1) <= _COMPARE_LIMIT:
        a = _q.reshape(x1, (1,) * x2.ndim + (n,))
        b = _q.expand_dims(x2, -1)
        hits = _before(a, b) if side == "left" else _q.logical_not(_before(b, a))
        return _helpers.out(_q.sum(hits.astype("int64"), axis=-1)) if n else \
            _q.zeros(x2.shape, dtype="int64")
    h1, h2 = _helpers.host("searchsorted", x1, x2)
    return _helpers.from_host(np.searchsorted(h1, h2, side=side).astype(np.int64))
