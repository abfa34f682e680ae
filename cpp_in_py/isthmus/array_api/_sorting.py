"""Sorting functions of the array API namespace: sort and argsort (CPU stopgaps through NumPy)."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _helpers

__all__ = ["argsort", "sort"]

# Note [CPU stopgaps]
# ~~~~~~~~~~~~~~~~~~~
# isthmus has no sort, unique or nextafter op yet, and composing one from the ops it has would
# cost O(n^2) work or bit access it lacks. Until those ops exist, these functions run NumPy on
# a shared view of a CPU array's memory and copy the result into a new tensor. A CUDA array
# raises TypeError instead (no silent device-to-host copy, the same rule as the fallback in
# numpy_protocols/_fallback.py). The list is in docs/array-api.md; each will become a native op.


def _argsort_np(a: np.ndarray, axis: int, descending: bool, stable: bool) -> np.ndarray:
    kind = "stable" if stable else None
    if not descending:
        return np.argsort(a, axis=axis, kind=kind)
    # stable descending order: sort the reversed array, then map the indices back
    n = a.shape[axis]
    idx = np.argsort(np.flip(a, axis=axis), axis=axis, kind="stable")
    return np.flip(n - 1 - idx, axis=axis)


def argsort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Any:
    """The indices that sort x along axis (int64; NaNs last). CPU only (Note [CPU stopgaps])."""
    (a,) = _helpers.host("argsort", x)
    if a.ndim == 0:
        return _helpers.from_host(np.zeros((), dtype=np.int64))
    (ax,) = _helpers.axis_tuple(int(axis), a.ndim, "argsort")
    return _helpers.from_host(_argsort_np(a, ax, descending, stable).astype(np.int64))


def sort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Any:
    """x sorted along axis (NaNs last). CPU only (Note [CPU stopgaps])."""
    (a,) = _helpers.host("sort", x)
    if a.ndim == 0:
        return _helpers.from_host(a.copy())
    (ax,) = _helpers.axis_tuple(int(axis), a.ndim, "sort")
    r = np.sort(a, axis=ax, kind="stable")
    return _helpers.from_host(np.flip(r, axis=ax) if descending else r)
