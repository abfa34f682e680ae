"""Searching functions of the array API namespace: argmax, nonzero, searchsorted, where, ..."""

from __future__ import annotations

from typing import Any

from .. import _isthmus as _q
from ..numpy_protocols._fn_sorting import checked_sorter
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


def searchsorted(x1: Any, x2: Any, /, *, side: str = "left", sorter: Any = None) -> Any:
    """Indices where x2's elements would go in the sorted 1-d x1 to keep it sorted (int64),
    by isthmus's binary search (NaNs sort last)."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    x1 = _t(x1)
    x2 = _t(x2) if isinstance(x2, _q.qvalue) else _helpers.exact_scalar(x2, x1)
    x2 = _t(x2) if isinstance(x2, _q.qvalue) else _q.full((), x2, dtype=x1.dtype)
    if x1.ndim != 1:
        raise ValueError("searchsorted: x1 must be one-dimensional")
    if sorter is not None:
        sorter = checked_sorter("searchsorted", x1, _t(sorter))
    return _helpers.out(_q.searchsorted(x1, x2, side, sorter))
