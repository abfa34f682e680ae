"""NumPy's indexing functions (np.nonzero, np.take, np.where, np.clip, ...)."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .. import _isthmus as _q
from ._fn_shape import _normalize_axis
from ._keywords import (_MISSING, _check_casting_name, _check_python_int, _given, _is_number,
                        _operand, _store, _tensor, _unsupported)
from ._tables import _implements


@_implements("nonzero")
def _np_nonzero(a: Any) -> Any:
    return _q.nonzero(_tensor(a))


@_implements("flatnonzero")
def _np_flatnonzero(a: Any) -> Any:
    return _q.nonzero(_q.ravel(_tensor(a)))[0]


@_implements("argwhere")
def _np_argwhere(a: Any) -> Any:
    return _q.argwhere(_tensor(a))


@_implements("take")
def _np_take(a: Any, indices: Any, axis: Any = None, out: Any = None,
             mode: str = "raise") -> Any:
    A = _tensor(a)
    idx = _tensor(indices)
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    if mode != "raise":
        n = A.numel() if axis is None else A.shape[_normalize_axis(axis, A.ndim)]
        if mode == "wrap":
            idx = _q.remainder(idx, n) if n > 0 else idx
        else:
            idx = _q.clip(idx, 0, builtins.max(n - 1, 0))
    r = _q.take(A, idx, axis)
    if _is_number(indices) and r.ndim == 0:
        r = r[()]  # one index gives a scalar, as NumPy's take
    if out is not None:
        return _store("numpy.take", out, r, None, "unsafe", what="function")
    return r


@_implements("take_along_axis")
def _np_take_along_axis(arr: Any, indices: Any, axis: Any = -1) -> Any:
    A = _tensor(arr)
    if axis is None:
        return _q.take_along_axis(_q.ravel(A), _tensor(indices), 0)
    return _q.take_along_axis(A, _tensor(indices), axis)


@_implements("put_along_axis")
def _np_put_along_axis(arr: Any, indices: Any, values: Any, axis: Any) -> None:
    A = _q.from_py(arr, copy=False) if isinstance(arr, np.ndarray) else _tensor(arr)
    if axis is None:
        _check_python_int(values, A.dtype)
        flat = _q.ravel(A)
        _q.put_along_axis(flat, _tensor(indices), _tensor(values), 0)
        if not A.is_contiguous():
            A[...] = _q.reshape(flat, tuple(A.shape))
        return None
    _check_python_int(values, A.dtype)  # See Note [Python integers out of bounds]
    _q.put_along_axis(A, _tensor(indices), _tensor(values), axis)
    return None


@_implements("where")
def _np_where(condition: Any, x: Any = _MISSING, y: Any = _MISSING, /) -> Any:
    if (x is _MISSING) != (y is _MISSING):
        raise ValueError("either both or neither of x and y should be given")
    if x is _MISSING:
        return _q.nonzero(_tensor(condition))
    return _q.where(_operand(condition), _operand(x), _operand(y))


def _clip_bound(bound: Any, dt: Any, lower: bool) -> Any:
    """A Python int bound of np.clip as NumPy 2 takes it for an integer array: one past the
    dtype's range on its own side bounds nothing (None: clip(int8, 0, 300) is clip(int8, 0,
    None)); one past the other side raises OverflowError (See Note [Python integers out of
    bounds] in _keywords.py)."""
    if type(bound) is bool or not isinstance(bound, int):
        return bound
    if not isinstance(dt, np.dtype) or dt.kind not in "iu":
        return bound
    info = np.iinfo(dt)
    if (bound < info.min) if lower else (bound > info.max):
        return None
    _check_python_int(bound, dt)
    return bound


@_implements("clip")
def _np_clip(a: Any, a_min: Any = _MISSING, a_max: Any = _MISSING, out: Any = None, *,
             min: Any = _MISSING, max: Any = _MISSING, **kwargs: Any) -> Any:
    if _given(min):
        if _given(a_min):
            raise TypeError("Passed more than one argument for a_min: a_min and min")
        a_min = min
    if _given(max):
        if _given(a_max):
            raise TypeError("Passed more than one argument for a_max: a_max and max")
        a_max = max
    lo = _operand(a_min) if _given(a_min) and a_min is not None else None
    hi = _operand(a_max) if _given(a_max) and a_max is not None else None
    casting = kwargs.pop("casting", "same_kind")
    _check_casting_name(casting)
    for key, value in kwargs.items():
        raise _unsupported("numpy.clip", key, value)
    A = _tensor(a)
    lo, hi = _clip_bound(lo, A.dtype, True), _clip_bound(hi, A.dtype, False)
    r = _q.copy(A) if lo is None and hi is None else _q.clip(A, lo, hi)
    if out is not None:
        return _store("clip", out, r, None, casting)
    return r
