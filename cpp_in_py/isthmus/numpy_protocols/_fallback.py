"""The fallback to NumPy on the host, for CPU values only (See Note [NumPy protocols], rule 3)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _isthmus as _q

_qvalue = _q.qvalue


def _to_host(x: Any, memo: dict[int, tuple[Any, Any]], label: str) -> Any:
    """x with every qvalue replaced by a NumPy view of its memory (CPU values only)."""
    if isinstance(x, _qvalue):
        kind = x.kind
        if kind in ("tensor", "scalar"):
            device = x.device
            if device != "cpu":
                raise TypeError(
                    f"{label}: isthmus has no implementation of it, and NumPy computes on host "
                    f"memory only; this qvalue is on {device}, and isthmus does not copy it to "
                    "the host behind your back. Move it explicitly (A.to('cpu')) or use an "
                    "isthmus function (numpy_protocols.HANDLED_FUNCTIONS lists them)"
                )
            arr = np.asarray(x)
            memo[id(arr)] = (arr, x)
            return arr
        if kind == "none":
            return None
        if kind == "string":
            return x.to_py()
        raise TypeError(f"{label}: NumPy cannot take a qvalue of kind {kind}")
    if type(x) is list or type(x) is tuple:
        return type(x)(_to_host(e, memo, label) for e in x)
    if type(x) is dict:
        return {k: _to_host(v, memo, label) for k, v in x.items()}
    return x


def _from_host(r: Any, memo: dict[int, tuple[Any, Any]]) -> Any:
    """NumPy's result with arrays and NumPy scalars as qvalues (outputs as the given qvalues)."""
    if isinstance(r, np.ndarray):
        hit = memo.get(id(r))
        if hit is not None and hit[0] is r:
            return hit[1]
        if r.dtype.kind in "biufc" and r.dtype != np.longdouble and r.dtype != np.clongdouble:
            return _q.asvalue(r)
        return r
    if isinstance(r, np.generic):
        if r.dtype.kind in "biufc" and r.dtype != np.longdouble and r.dtype != np.clongdouble:
            return _q.asvalue(r)
        return r
    if isinstance(r, tuple):
        items = [_from_host(e, memo) for e in r]
        return type(r)(*items) if hasattr(r, "_fields") else type(r)(items)
    if type(r) is list:
        return [_from_host(e, memo) for e in r]
    return r


def _fallback(fn: Callable[..., Any], label: str, args: Any, kwargs: dict[str, Any]) -> Any:
    memo: dict[int, tuple[Any, Any]] = {}
    host_args = _to_host(tuple(args), memo, label)
    host_kwargs = _to_host(dict(kwargs), memo, label)
    return _from_host(fn(*host_args, **host_kwargs), memo)
