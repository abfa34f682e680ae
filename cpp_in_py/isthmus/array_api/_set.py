"""Set functions of the array API namespace: unique_* by sorting, isin by comparisons."""

from __future__ import annotations

from typing import Any, NamedTuple

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


# Note [unique by sorting]: the unique_* functions are composed from isthmus's ops, so they
# run where x is: a stable argsort of the flattened x, a "head" mask where a sorted element
# differs from the one before it (NaN != NaN, so every NaN is its own value, as the standard
# asks; -0.0 == 0.0 are one value, the first one in sorted order kept), the heads' positions
# (nonzero), and from them the values, the first occurrences (the stable sort keeps equal
# elements in their order, so a group's head is its smallest index), the counts (differences of
# the heads' positions) and the inverse indices (the running count of heads, scattered back to
# the elements' places).


def _unique(x: Any, inverse: bool) -> tuple[Any, Any, Any, Any]:
    """x's unique values, their first indices, the inverse indices (when asked) and the counts."""
    x = _helpers.tensor(x)
    flat = _q.reshape(x, (-1,))
    n = flat.shape[0]
    i64 = "int64"
    if n == 0:
        empty = _q.zeros((0,), dtype=i64)
        return flat, empty, _q.zeros(x.shape, dtype=i64), empty
    order = _q.argsort(flat)
    ordered = _q.take(flat, order)
    head = _q.concat([_q.ones((1,), dtype="bool"), _q.not_equal(ordered[1:], ordered[:-1])])
    starts = _q.nonzero(head)[0]
    values = _q.take(ordered, starts)
    first = _q.take(order, starts)
    ends = _q.concat([starts[1:], _q.full((1,), n, dtype=i64)])
    counts = _q.subtract(ends, starts)
    inv = None
    if inverse:
        group = _q.subtract(_q.cumsum(head.astype(i64)), 1)
        inv = _q.zeros((n,), dtype=i64)
        inv[order] = group
        inv = _q.reshape(inv, x.shape)
    return values, first, inv, counts


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
