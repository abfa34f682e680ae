"""Indexing functions of the array API namespace: take, take_along_axis."""

from __future__ import annotations

from typing import Any

from .. import _isthmus as _q
from . import _helpers

__all__ = ["take", "take_along_axis"]


def take(x: Any, indices: Any, /, *, axis: Any = None) -> Any:
    """Elements of x at integer indices along axis (required unless x is 1-d)."""
    x = _helpers.tensor(x)
    idx = _helpers.tensor(indices)
    if idx.ndim != 1:
        raise ValueError("take: indices must be a one-dimensional array")
    if axis is None:
        if x.ndim != 1:
            raise ValueError("take: axis is required for arrays of more than one dimension")
        axis = 0
    (ax,) = _helpers.axis_tuple(int(axis), x.ndim, "take")
    return _q.take(x, idx, axis=ax)


def take_along_axis(x: Any, indices: Any, /, *, axis: int = -1) -> Any:
    """Elements of x at indices along axis, the other axes matched by broadcasting."""
    x = _helpers.tensor(x)
    (ax,) = _helpers.axis_tuple(int(axis), x.ndim, "take_along_axis")
    return _q.take_along_axis(x, _helpers.tensor(indices), ax)
