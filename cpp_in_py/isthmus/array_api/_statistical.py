"""Statistical functions of the array API namespace: sum, prod, mean, var, std, cumulative_*..."""

from __future__ import annotations

import math
from typing import Any

from .. import _isthmus as _q
from . import _dtypes, _helpers

__all__ = ["cumulative_prod", "cumulative_sum", "max", "mean", "min", "prod", "std", "sum", "var"]

_t = _helpers.tensor


def keep_dims(r: Any, x: Any, axis: Any, keepdims: bool, fname: str) -> Any:
    """r (reduced over axis) with the reduced axes kept as size 1 when keepdims."""
    r = _helpers.out(r)
    if keepdims:
        axes = _helpers.axis_tuple(axis, x.ndim, fname)
        shape = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
        if r.shape != shape:
            r = _q.reshape(r, shape)
    return r


def _reduce(fn: Any, fname: str, x: Any, axis: Any, keepdims: bool) -> Any:
    x = _t(x)
    axes = _helpers.axis_tuple(axis, x.ndim, fname)
    if x.ndim == 0:
        return _q.copy(x)
    return keep_dims(fn(x, axis=axes, keepdims=False), x, axes, keepdims, fname)


def _sum_like(fn: Any, fname: str, x: Any, axis: Any, dtype: Any, keepdims: bool) -> Any:
    x = _t(x)
    dt = None if dtype is None else _dtypes.as_dtype(dtype)
    if dt is not None and x.dtype != dt:
        x = x.astype(dt)
    axes = _helpers.axis_tuple(axis, x.ndim, fname)
    if x.ndim == 0 or not axes:
        r = _q.copy(x)
        want = dt or _accumulator(x.dtype)
        return r if r.dtype == want else r.astype(want)
    r = keep_dims(fn(x, axis=axes, keepdims=False), x, axes, keepdims, fname)
    if dt is not None and r.dtype != dt:
        r = r.astype(dt)
    return r


def _accumulator(dt: Any) -> Any:
    """The default dtype of a sum or product: int64/uint64 for integers and bool, else dt."""
    if dt.kind in "bi":
        return _dtypes.int64
    if dt.kind == "u":
        return _dtypes.uint64
    return dt


def sum(x: Any, /, *, axis: Any = None, dtype: Any = None,  # noqa: A001
        keepdims: bool = False) -> Any:
    """The sum over axis (None: all); integers accumulate in int64/uint64 unless dtype says."""
    return _sum_like(_q.sum, "sum", x, axis, dtype, keepdims)


def prod(x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    """The product over axis (None: all); integers accumulate in int64/uint64 unless dtype says."""
    return _sum_like(_q.prod, "prod", x, axis, dtype, keepdims)


def max(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    """The maximum over axis (NaN propagates; ValueError for no elements)."""
    return _reduce(_q.max, "max", x, axis, keepdims)


def min(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    """The minimum over axis (NaN propagates; ValueError for no elements)."""
    return _reduce(_q.min, "min", x, axis, keepdims)


def _floating(x: Any, fname: str) -> Any:
    x = _t(x)
    if x.dtype.kind not in "fc":
        raise TypeError(f"{fname} needs a floating-point array, got {x.dtype}")
    return x


def mean(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    """The arithmetic mean over axis (floating-point arrays; NaN for no elements)."""
    return _reduce(_q.mean, "mean", _floating(x, "mean"), axis, keepdims)


def _var_like(fn: Any, fname: str, x: Any, axis: Any, correction: Any, keepdims: bool) -> Any:
    x = _floating(x, fname)
    axes = _helpers.axis_tuple(axis, x.ndim, fname)
    if x.ndim == 0 or not axes:
        # one element per result: the deviation is zero, NaN for NaN or infinite elements, and
        # NaN when the correction leaves no degree of freedom
        r = _q.abs(x - x)
        return r if 1 - correction > 0 else r * _q.full((), math.nan, dtype=r.dtype)
    if float(correction) == int(correction):
        r = fn(x, axis=axes, keepdims=False, ddof=int(correction))
    else:
        # isthmus's ddof is an integer: scale the population variance by N / (N - correction)
        n = math.prod(x.shape[a] for a in axes)
        v = _q.var(x, axis=axes, keepdims=False, ddof=0)
        v = v * _q.full((), n / (n - float(correction)) if n != correction else math.inf,
                        dtype=v.dtype)
        r = _q.sqrt(v) if fname == "std" else v
    return keep_dims(r, x, axes, keepdims, fname)


def var(x: Any, /, *, axis: Any = None, correction: Any = 0.0, keepdims: bool = False) -> Any:
    """The variance over axis, dividing by N - correction."""
    return _var_like(_q.var, "var", x, axis, correction, keepdims)


def std(x: Any, /, *, axis: Any = None, correction: Any = 0.0, keepdims: bool = False) -> Any:
    """The standard deviation over axis, dividing by N - correction."""
    return _var_like(_q.std, "std", x, axis, correction, keepdims)


def _cumulative(fn: Any, fname: str, x: Any, axis: Any, dtype: Any, include_initial: bool,
                initial: int) -> Any:
    x = _t(x)
    if axis is None:
        if x.ndim != 1:
            raise ValueError(f"{fname}: axis is required for arrays of more than one dimension")
        axis = 0
    (ax,) = _helpers.axis_tuple(int(axis), x.ndim, fname)
    dt = _accumulator(x.dtype) if dtype is None else _dtypes.as_dtype(dtype)
    if x.dtype != dt:
        x = x.astype(dt)
    r = fn(x, axis=ax) if x.shape[ax] else _q.copy(x)
    if r.dtype != dt:
        r = r.astype(dt)
    if include_initial:
        shape = list(x.shape)
        shape[ax] = 1
        with _helpers.on_device(x.device):
            first = _q.full(tuple(shape), initial, dtype=dt)
        r = _q.concatenate([first, r], axis=ax)
    return r


def cumulative_sum(x: Any, /, *, axis: Any = None, dtype: Any = None,
                   include_initial: bool = False) -> Any:
    """Running sums along axis (optional for 1-d), with a leading zero if include_initial."""
    return _cumulative(_q.cumsum, "cumulative_sum", x, axis, dtype, include_initial, 0)


def cumulative_prod(x: Any, /, *, axis: Any = None, dtype: Any = None,
                    include_initial: bool = False) -> Any:
    """Running products along axis (optional for 1-d), with a leading one if include_initial."""
    return _cumulative(_q.cumprod, "cumulative_prod", x, axis, dtype, include_initial, 1)
