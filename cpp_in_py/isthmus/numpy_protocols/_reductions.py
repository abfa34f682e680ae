"""ufunc.reduce and ufunc.accumulate, and the reductions and scans np.sum and np.cumsum share."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .. import _isthmus as _q
from ._keywords import (_MISSING, _astype, _check_python_int, _dtype_arg, _mask, _opt,
                        _same_dtype, _shape_of, _single_out, _store, _tensor, _unsupported)

_qvalue = _q.qvalue


def _reduction(qname: str, fname: str, a: Any, axis: Any, dtype: Any, out: Any,
               keepdims: Any, initial: Any, where: Any, out_casting: str = "unsafe") -> Any:
    """sum/prod/max/min/all/any with NumPy's keywords (np.sum and np.add.reduce alike)."""
    A = _tensor(a)
    keepdims = bool(_opt(keepdims, False))
    if dtype is not None:
        dtype = _dtype_arg(dtype, fname)
        if qname in ("all", "any") and not _same_dtype(dtype, "bool"):
            raise _unsupported(fname, "dtype", dtype, "logical reductions give bool")
        A = _astype(A, dtype)
    mask = _mask(where, fname)
    if mask is not None:
        if qname in ("max", "min"):
            if initial is _MISSING:
                op = "maximum" if qname == "max" else "minimum"
                raise ValueError(
                    f"reduction operation '{op}' does not have an identity, so to use a where "
                    "mask one has to specify 'initial'"
                )
            identity = initial
        else:
            identity = {"sum": 0, "prod": 1, "all": True, "any": False}[qname]
        if np.broadcast_shapes(_shape_of(mask), tuple(A.shape)) != tuple(A.shape):
            raise ValueError(
                f"{fname}: where= of shape {_shape_of(mask)} does not broadcast to the "
                f"operand's shape {tuple(A.shape)}"
            )
        A = _q.where(mask, A, _initial_as(identity, A.dtype))
    fn = getattr(_q, qname)
    if initial is not _MISSING and qname in ("max", "min") and A.numel() == 0:
        shape = _shape_of(_q.sum(A, axis, keepdims))
        r = _q.full(shape, _initial_as(initial, A.dtype), dtype=A.dtype)
        if shape == ():
            r = r[()]
    else:
        r = fn(A, axis, keepdims)
        if initial is not _MISSING:
            # with dtype=, NumPy converts initial to that dtype (sum and prod widen after)
            init = _initial_as(initial, dtype if dtype is not None else r.dtype)
            combine = {"sum": operator.add, "prod": operator.mul, "max": _q.maximum,
                       "min": _q.minimum, "all": _q.logical_and, "any": _q.logical_or}[qname]
            r = _keep_scalar(r, combine(r, init))
    if dtype is not None and qname in ("sum", "prod"):
        r = _astype(r, dtype)
    if out is not None:
        return _store(fname, _single_out(out, fname), r, None, out_casting, what="function")
    return r


def _keep_scalar(before: Any, after: Any) -> Any:
    """after, as a scalar qvalue when before was one (a full reduction stays a scalar)."""
    if before.kind == "scalar" and after.kind == "tensor" and after.ndim == 0:
        return after[()]
    return after


def _scalar_as(value: Any, dt: Any) -> Any:
    """value converted to dtype dt (as NumPy casts a fill value): a NumPy scalar of that dtype;
    OverflowError for a Python int out of dt's bounds (See Note [Python integers out of
    bounds] in _keywords.py)."""
    if isinstance(value, _qvalue):
        value = value.item()
    if isinstance(dt, np.dtype):
        _check_python_int(value, dt)
        return np.asarray(value).astype(dt)[()]
    return float(value)  # bfloat16: a weak Python float takes the tensor's dtype


def _initial_as(value: Any, dt: Any) -> Any:
    """initial= of a reduction converted to dtype dt as NumPy converts it: for an integer dtype
    through int() (3.5 is 3), and OverflowError when that int does not fit dt, whatever the
    number's type (np.max(int8_array, initial=300.0) raises in NumPy too)."""
    if isinstance(value, _qvalue):
        value = value.item()
    if isinstance(dt, np.dtype) and dt.kind in "iu" and not isinstance(value, (bool, np.bool_)):
        if isinstance(value, (int, float, np.integer, np.floating)):
            value = int(value)  # OverflowError for infinities, ValueError for NaN, as NumPy
    return _scalar_as(value, dt)


def _ufunc_reduce(ufunc: np.ufunc, qname: str, inputs: tuple[Any, ...],
                  kwargs: dict[str, Any]) -> Any:
    name = f"numpy.{ufunc.__name__}.reduce"
    if len(inputs) != 1:
        raise TypeError(f"{name} takes one array, got {len(inputs)}")
    axis = kwargs.pop("axis", 0)
    dtype = kwargs.pop("dtype", None)
    out = kwargs.pop("out", None)
    keepdims = kwargs.pop("keepdims", False)
    initial = kwargs.pop("initial", _MISSING)
    if initial is np._NoValue:
        initial = _MISSING
    where = kwargs.pop("where", True)
    for key, value in kwargs.items():
        raise _unsupported(name, key, value)
    return _reduction(qname, name, inputs[0], axis, dtype, out, keepdims, initial, where)


def _scan(qname: str, fname: str, a: Any, axis: Any, dtype: Any, out: Any) -> Any:
    A = _tensor(a)
    if dtype is not None:
        dtype = _dtype_arg(dtype, fname)
        A = _astype(A, dtype)
    r = getattr(_q, qname)(A, axis)
    if dtype is not None:
        r = _astype(r, dtype)
    if out is not None:
        return _store(fname, _single_out(out, fname), r, None, "unsafe", what="function")
    return r


def _ufunc_accumulate(ufunc: np.ufunc, qname: str, inputs: tuple[Any, ...],
                      kwargs: dict[str, Any]) -> Any:
    name = f"numpy.{ufunc.__name__}.accumulate"
    if len(inputs) != 1:
        raise TypeError(f"{name} takes one array, got {len(inputs)}")
    axis = kwargs.pop("axis", 0)
    dtype = kwargs.pop("dtype", None)
    out = kwargs.pop("out", None)
    for key, value in kwargs.items():
        raise _unsupported(name, key, value)
    A = _tensor(inputs[0])
    if A.ndim == 0:
        raise TypeError(f"{name}: cannot accumulate on a scalar")
    if axis is None:
        if A.ndim != 1:
            raise ValueError(f"{name}: axis=None needs a 1-d array (accumulate takes one axis)")
        axis = 0
    if isinstance(axis, tuple):
        if len(axis) != 1:
            raise ValueError(f"{name}: accumulate does not allow multiple axes")
        axis = axis[0]
    return _scan(qname, name, A, axis, dtype, out)
