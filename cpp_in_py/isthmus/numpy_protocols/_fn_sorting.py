"""NumPy's sorting functions on qvalues: np.sort, np.argsort, np.searchsorted and np.unique."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _isthmus as _q
from .._unique import unique_parts
from ._keywords import _tensor, _unsupported
from ._tables import _implements

_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _check(fname: str, kind: Any, order: Any, stable: Any) -> None:
    # Every isthmus sort is stable, which is a valid result for any of NumPy's kinds.
    if kind not in _KINDS:
        raise ValueError(f"{fname}: sort kind must be one of {_KINDS[1:]} or None, got {kind!r}")
    if order is not None:
        raise _unsupported(fname, "order", order, "fields of structured arrays")
    if stable is not None and not isinstance(stable, bool):
        raise TypeError(f"{fname}: stable must be None or a bool, got {type(stable).__name__}")


@_implements("sort")
def _np_sort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *,
             stable: Any = None) -> Any:
    _check("numpy.sort", kind, order, stable)
    x = _tensor(a)
    if x.ndim == 0 and axis is not None:
        raise np.exceptions.AxisError(axis, 0)
    return _q.sort(x, axis)


def checked_sorter(fname: str, a: Any, sorter: Any) -> Any:
    """searchsorted's sorter as a tensor, checked as NumPy checks it: a 1-d integer array with
    one valid position of `a` per element of `a` (ValueError/TypeError with NumPy's words)."""
    S = _tensor(sorter)
    kind = S.dtype.kind if isinstance(S.dtype, np.dtype) else "f"
    if S.ndim != 1:
        raise TypeError(f"{fname}: could not parse sorter argument (it must be 1-d, got "
                        f"shape {tuple(S.shape)})")
    if kind not in "iu":
        raise TypeError(f"{fname}: sorter must only contain integers, got dtype {S.dtype}")
    n = a.numel()
    if S.numel() != n:
        raise ValueError(f"{fname}: sorter.size must equal a.size ({S.numel()} != {n})")
    if n and (int(_q.min(S)) < 0 or int(_q.max(S)) >= n):
        raise ValueError(f"{fname}: Sorter index out of range (positions must be in [0, {n}))")
    return S


@_implements("searchsorted")
def _np_searchsorted(a: Any, v: Any, side: Any = "left", sorter: Any = None) -> Any:
    A = _tensor(a)
    if A.ndim != 1:
        raise ValueError(f"numpy.searchsorted: object too deep for desired array (a must be "
                         f"1-d, got shape {tuple(A.shape)})")
    S = None if sorter is None else checked_sorter("numpy.searchsorted", A, sorter)
    return _q.searchsorted(A, v, side, S)


@_implements("argsort")
def _np_argsort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *,
                stable: Any = None) -> Any:
    _check("numpy.argsort", kind, order, stable)
    x = _tensor(a)
    # NumPy gives a 0-d array's argsort as [0], as for the flattened array
    return _q.argsort(x, None if x.ndim == 0 else axis)


@_implements("unique")
def _np_unique(ar: Any, return_index: bool = False, return_inverse: bool = False,
               return_counts: bool = False, axis: Any = None, *, equal_nan: bool = True,
               sorted: bool = True) -> Any:
    if axis is not None:
        raise _unsupported("numpy.unique", "axis", axis, "unique rows or columns")
    values, first, inverse, counts = unique_parts(_tensor(ar), bool(return_inverse),
                                                  bool(equal_nan))
    extra = [r for r, want in ((first, return_index), (inverse, return_inverse),
                               (counts, return_counts)) if want]
    return tuple([values, *extra]) if extra else values

