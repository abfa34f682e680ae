"""Utility functions of the array API namespace: all, any, diff."""

from __future__ import annotations

from typing import Any

from .. import _isthmus as _q
from . import _helpers
from ._statistical import keep_dims

__all__ = ["all", "any", "diff"]


def _logical(fn: Any, fname: str, x: Any, axis: Any, keepdims: bool) -> Any:
    x = _helpers.tensor(x)
    axes = _helpers.axis_tuple(axis, x.ndim, fname)
    if x.ndim == 0 or not axes:
        return x != 0
    return keep_dims(fn(x, axis=axes, keepdims=False), x, axes, keepdims, fname)


def all(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    """Whether every element along axis is true (nonzero; True for no elements)."""
    return _logical(_q.all, "all", x, axis, keepdims)


def any(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    """Whether some element along axis is true (nonzero; False for no elements)."""
    return _logical(_q.any, "any", x, axis, keepdims)


def diff(x: Any, /, *, axis: int = -1, n: int = 1, prepend: Any = None, append: Any = None) -> Any:
    """The n-th forward difference along axis, after joining prepend and append."""
    x = _helpers.tensor(x)
    if x.ndim == 0:
        raise ValueError("diff needs an array of at least one dimension")
    (ax,) = _helpers.axis_tuple(int(axis), x.ndim, "diff")
    n = int(n)
    if n < 0:
        raise ValueError("diff: n must be non-negative")
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = _q.concatenate([_helpers.tensor(p) for p in parts], axis=ax)
    for _ in range(n):
        m = x.shape[ax]
        if m == 0:
            break
        hi = [slice(None)] * x.ndim
        lo = [slice(None)] * x.ndim
        hi[ax] = slice(1, None)
        lo[ax] = slice(0, m - 1)
        x = _q.not_equal(x[tuple(hi)], x[tuple(lo)]) if x.dtype.kind == "b" else \
            x[tuple(hi)] - x[tuple(lo)]
    return x if n else _q.copy(x)
