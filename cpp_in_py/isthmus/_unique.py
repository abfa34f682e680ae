"""The unique values of a tensor by sorting, shared by the array API and np.unique on qvalues."""

from __future__ import annotations

from typing import Any

from . import _isthmus as _q

# Note [unique by sorting]
# ~~~~~~~~~~~~~~~~~~~~~~~~
# unique is composed from isthmus's ops, so it runs where x is: a stable argsort of the flattened x,
# a "head" mask where a sorted element differs from the one before it, the heads' positions
# (nonzero), and from them the values, the first occurrences (the stable sort keeps equal elements
# in their order, so a group's head is its smallest index), the counts (differences of the heads'
# positions) and the inverse indices (the running count of heads, scattered back to the elements'
# places). NaN != NaN, so every NaN is its own value unless `equal_nan` (NumPy's default, not the
# array API's) joins the NaNs, which sort last, into one. -0.0 == 0.0 are one value, the first in
# sorted order kept.


def unique_parts(x: Any, inverse: bool, equal_nan: bool) -> tuple[Any, Any, Any, Any]:
    """x's unique values, their first indices, the inverse indices (x's shape; None unless
    `inverse`) and the counts, all int64 but the values."""
    flat = _q.reshape(x, (-1,))
    n = flat.shape[0]
    i64 = "int64"
    if n == 0:
        empty = _q.zeros((0,), dtype=i64)
        return flat, empty, _q.zeros(x.shape, dtype=i64) if inverse else None, empty
    order = _q.argsort(flat)
    ordered = _q.take(flat, order)
    new = _q.not_equal(ordered[1:], ordered[:-1])
    if equal_nan and ordered.dtype.kind in "fc":
        new = _q.logical_and(new, _q.logical_not(_q.logical_and(_q.isnan(ordered[1:]),
                                                                _q.isnan(ordered[:-1]))))
    head = _q.concat([_q.ones((1,), dtype="bool"), new])
    starts = _q.nonzero(head)[0]
    ends = _q.concat([starts[1:], _q.full((1,), n, dtype=i64)])
    inv = None
    if inverse:
        inv = _q.zeros((n,), dtype=i64)
        inv[order] = _q.subtract(_q.cumsum(head.astype(i64)), 1)
        inv = _q.reshape(inv, x.shape)
    return (_q.take(ordered, starts), _q.take(order, starts), inv,
            _q.subtract(ends, starts))
