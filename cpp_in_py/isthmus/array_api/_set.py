"""Set functions of the array API namespace: unique_* by sorting, isin by comparisons."""

from __future__ import annotations

from typing import Any, NamedTuple

from .. import _isthmus as _q
from .._unique import unique_parts
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


def _unique(x: Any, inverse: bool) -> tuple[Any, Any, Any, Any]:
    """The array API's unique: every NaN its own value (Note [unique by sorting])."""
    return unique_parts(_helpers.tensor(x), inverse, equal_nan=False)


def unique_all(x: Any, /) -> UniqueAllResult:
    """The unique values, their first indices, the inverse indices and the counts."""
    v, i, inv, c = _unique(x, True)
    o = _helpers.out
    return UniqueAllResult(o(v), o(i), o(inv), o(c))


def unique_counts(x: Any, /) -> UniqueCountsResult:
    """The unique values and how often each occurs."""
    v, _, _, c = _unique(x, False)
    return UniqueCountsResult(_helpers.out(v), _helpers.out(c))


def unique_inverse(x: Any, /) -> UniqueInverseResult:
    """The unique values and, per element of x, the index of its value."""
    v, _, inv, _ = _unique(x, True)
    return UniqueInverseResult(_helpers.out(v), _helpers.out(inv))


def unique_values(x: Any, /) -> Any:
    """The unique values of x, sorted (every NaN kept: NaNs are never equal)."""
    return _helpers.out(_unique(x, False)[0])


def isin(x1: Any, x2: Any, /, *, invert: bool = False) -> Any:
    """Whether each element of x1 occurs in x2 (composed from comparisons: any device)."""
    a = _helpers.tensor(x1)
    b = _q.reshape(_helpers.tensor(x2), (-1,))
    if b.shape[0] == 0:
        r = _q.zeros(a.shape, dtype="bool")
    else:
        r = _helpers.out(_q.any(_q.equal(_q.expand_dims(a, -1), b), axis=-1))
    return _q.logical_not(r) if invert else r
