"""Set functions of the array API namespace: unique_* (CPU stopgaps through NumPy), isin."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .. import _isthmus as _q
from . import _helpers

__all__ = ["isin", "unique_all", "unique_counts", "unique_inverse", "unique_values"]


class UniqueAllResult(NamedTuple):
    values: Any
    indices: Any
    inverse_indices: Any
    counts: Any


class UniqueCountsResult(NamedTuple):
    values: Any
    counts: Any


class UniqueInverseResult(NamedTuple):
    values: Any
    inverse_indices: Any


def _unique(label: str, x: Any) -> tuple[np.ndarray, ...]:
    """NumPy's unique of x's elements, every NaN distinct (See Note [CPU stopgaps])."""
    (a,) = _helpers.host(label, x)
    flat = a.reshape(-1)
    vals, idx, inv, cnt = np.unique(flat, return_index=True, return_inverse=True,
                                    return_counts=True, equal_nan=False)
    return vals, idx.astype(np.int64), inv.reshape(a.shape).astype(np.int64), cnt.astype(np.int64)


def unique_all(x: Any, /) -> UniqueAllResult:
    """The unique values, their first indices, the inverse indices and the counts. CPU only."""
    v, i, inv, c = _unique("unique_all", x)
    h = _helpers.from_host
    return UniqueAllResult(h(v), h(i), h(inv), h(c))


def unique_counts(x: Any, /) -> UniqueCountsResult:
    """The unique values and how often each occurs. CPU only (Note [CPU stopgaps])."""
    v, _, _, c = _unique("unique_counts", x)
    return UniqueCountsResult(_helpers.from_host(v), _helpers.from_host(c))


def unique_inverse(x: Any, /) -> UniqueInverseResult:
    """The unique values and, per element of x, the index of its value. CPU only."""
    v, _, inv, _ = _unique("unique_inverse", x)
    return UniqueInverseResult(_helpers.from_host(v), _helpers.from_host(inv))


def unique_values(x: Any, /) -> Any:
    """The unique values of x, sorted (every NaN kept). CPU only (Note [CPU stopgaps])."""
    return _helpers.from_host(_unique("unique_values", x)[0])


def isin(x1: Any, x2: Any, /, *, invert: bool = False) -> Any:
    """Whether each element of x1 occurs in x2 (composed from comparisons: any device)."""
    a = _helpers.tensor(x1)
    b = _q.reshape(_helpers.tensor(x2), (-1,))
    if b.shape[0] == 0:
        r = _q.zeros(a.shape, dtype="bool")
    else:
        r = _helpers.out(_q.any(_q.equal(_q.expand_dims(a, -1), b), axis=-1))
    return _q.logical_not(r) if invert else r
