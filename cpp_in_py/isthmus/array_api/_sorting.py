"""Sorting functions of the array API namespace: sort and argsort, isthmus's own sort."""

from __future__ import annotations

from typing import Any

from .. import _isthmus as _q
from . import _helpers

__all__ = ["argsort", "sort"]


def argsort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Any:
    """The int64 indices that sort x along axis: NaNs last (first when descending), equal
    elements in their order (every sort is stable). A 0-d array gives 0."""
    return _helpers.out(_q.argsort(_helpers.tensor(x), int(axis), descending=bool(descending)))


def sort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Any:
    """x sorted along axis: NaNs last (first when descending), equal elements in their order.
    A 0-d array is returned as a copy."""
    return _helpers.out(_q.sort(_helpers.tensor(x), int(axis), descending=bool(descending)))
