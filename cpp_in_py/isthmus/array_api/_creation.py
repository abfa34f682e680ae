"""Creation functions of the array API namespace: asarray, arange, zeros, eye, tril, meshgrid..."""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from .. import _isthmus as _q
from . import _dtypes, _helpers

__all__ = ["arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full", "full_like",
           "linspace", "meshgrid", "ones", "ones_like", "tril", "triu", "zeros", "zeros_like"]


def _shape(shape: Any, fname: str) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, builtins.bool):
        shape = (int(shape),)
    try:
        res = tuple(int(s) for s in shape)
    except TypeError:
        raise TypeError(f"{fname}: shape must be an int or a tuple of ints, got {shape!r}") \
            from None
    if builtins.any(s < 0 for s in res):
        raise ValueError(f"{fname}: negative dimension in shape {res}")
    return res


def _dtype_or(dtype: Any, default: np.dtype) -> np.dtype:
    return default if dtype is None else _dtypes.as_dtype(dtype)


def _default_for(value: Any) -> np.dtype:
    """The default dtype of a Python scalar (bool, int64, float64, complex128)."""
    if isinstance(value, builtins.bool):
        return _dtypes.bool
    if isinstance(value, int):
        return _dtypes.DEFAULT_INT
    if isinstance(value, float):
        return _dtypes.DEFAULT_FLOAT
    if isinstance(value, complex):
        return _dtypes.DEFAULT_COMPLEX
    if _helpers.is_array(value):
        return value.dtype
    raise TypeError(f"expected a Python scalar, got {type(value).__name__}")


def _like_device(x: Any, device: Any) -> Any:
    return x.device if device is None else device


def empty(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    """A new array of this shape with unspecified contents (default dtype float64)."""
    dt = _dtype_or(dtype, _dtypes.DEFAULT_FLOAT)
    with _helpers.on_device(device):
        return _q.uninit(_shape(shape, "empty"), dtype=dt)


def zeros(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    """A new array of zeros (default dtype float64)."""
    dt = _dtype_or(dtype, _dtypes.DEFAULT_FLOAT)
    with _helpers.on_device(device):
        return _q.zeros(_shape(shape, "zeros"), dtype=dt)


def ones(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    """A new array of ones (default dtype float64)."""
    dt = _dtype_or(dtype, _dtypes.DEFAULT_FLOAT)
    with _helpers.on_device(device):
        return _q.ones(_shape(shape, "ones"), dtype=dt)


def full(shape: Any, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Any:
    """A new array filled with fill_value (dtype: fill_value's default dtype unless given)."""
    dt = _dtype_or(dtype, _default_for(fill_value))
    if _helpers.is_array(fill_value):
        fill_value = fill_value.item()
    with _helpers.on_device(device):
        return _q.full(_shape(shape, "full"), fill_value, dtype=dt)


def empty_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Any:
    """An uninitialised array with x's shape (and dtype and device unless given)."""
    x = _helpers.tensor(x)
    return empty(x.shape, dtype=x.dtype if dtype is None else dtype, device=_like_device(x, device))


def zeros_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Any:
    """Zeros with x's shape (and dtype and device unless given)."""
    x = _helpers.tensor(x)
    return zeros(x.shape, dtype=x.dtype if dtype is None else dtype, device=_like_device(x, device))


def ones_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Any:
    """Ones with x's shape (and dtype and device unless given)."""
    x = _helpers.tensor(x)
    return ones(x.shape, dtype=x.dtype if dtype is None else dtype, device=_like_device(x, device))


def full_like(x: Any, /, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Any:
    """fill_value with x's shape (and dtype and device unless given)."""
    x = _helpers.tensor(x)
    return full(x.shape, fill_value, dtype=x.dtype if dtype is None else dtype,
                device=_like_device(x, device))


def arange(start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None,
           device: Any = None) -> Any:
    """Evenly spaced values in [start, stop) (default dtype int64 for ints, else float64).

    Floating values are start + i * step computed in float64 (See Note [arange in float64]).
    """
    if stop is None:
        start, stop = 0, start
    for v in (start, stop, step):
        if not isinstance(v, (int, float, np.integer, np.floating)) or isinstance(v, complex):
            raise TypeError(f"arange takes real numbers, got {v!r}")
    if step == 0:
        raise ValueError("arange: step must not be zero")
    is_int = builtins.all(isinstance(v, (int, np.integer)) for v in (start, stop, step))
    dt = _dtype_or(dtype, _dtypes.DEFAULT_INT if is_int else _dtypes.DEFAULT_FLOAT)
    if is_int:
        n = builtins.max(0, -((int(start) - int(stop)) // int(step)))
    else:
        n = builtins.max(0, math.ceil((stop - start) / step))
    with _helpers.on_device(device):
        if n == 0:
            return _q.zeros((0,), dtype=dt)
        if is_int and dt.kind in "iu":
            return _q.arange(int(start), int(start) + n * int(step), int(step), dtype=dt)
        # Note [arange in float64]
        # ~~~~~~~~~~~~~~~~~~~~~~~~
        # q.arange reads floating bounds in the `scalar` precision (float32 by default), so the
        # namespace computes start + i * delta itself, in float64, and casts once at the end;
        # delta is (start + step) - start, as NumPy's arange takes it, so the values match NumPy's.
        delta = (float(start) + float(step)) - float(start)
        i = _q.arange(0, n, 1, dtype="float64")
        r = i * _q.full((), delta, dtype="float64") + _q.full((), float(start), dtype="float64")
        return r if dt == _dtypes.float64 else r.astype(dt)


def _is_nested_scalars(obj: Any) -> builtins.bool:
    """True for Python scalars and (nested) sequences, which NumPy reads with default dtypes."""
    return isinstance(obj, (builtins.bool, int, float, complex, list, tuple))


def _has_big_int(obj: Any) -> builtins.bool:
    if isinstance(obj, (list, tuple)):
        return builtins.any(_has_big_int(e) for e in obj)
    return isinstance(obj, int) and not -2 ** 63 <= obj < 2 ** 64


def asarray(obj: Any, /, *, dtype: Any = None, device: Any = None, copy: Any = None) -> Any:
    """obj as an array: arrays as they are (or copied/converted), Python data with default dtypes.

    copy=None copies only when needed, copy=True always, copy=False never (ValueError if it must).
    """
    dt = None if dtype is None else _dtypes.as_dtype(dtype)
    if isinstance(obj, _q.qvalue):
        x = _helpers.tensor(obj)
        needs = dt is not None and x.dtype != dt
        move = device is not None and str(device) != x.device
        if copy is False and (needs or move):
            raise ValueError("asarray: copy=False, but the dtype or device must change (a copy)")
        if needs:
            x = x.astype(dt)
        elif copy:
            x = _q.value(x)
        if move:
            x = _q.to(x, str(device), copy=True)
        return x
    if _is_nested_scalars(obj):
        if copy is False:
            raise ValueError("asarray: copy=False, but Python data must be copied")
        try:
            arr = np.asarray(obj, dtype=dt)
        except OverflowError as e:
            raise OverflowError(f"asarray: {e}") from None
        if arr.dtype.kind == "O" and _has_big_int(obj):
            raise OverflowError(f"asarray: an integer is out of the int64 range in {obj!r}")
        if arr.dtype.kind not in "biufc":
            raise TypeError(f"asarray: cannot make an array from {obj!r}")
        if dt is None and arr.dtype.kind == "u" and not isinstance(obj, np.ndarray):
            raise OverflowError("asarray: an integer is out of the int64 range")
        with _helpers.on_device(device):
            return _helpers.out(_q.value(arr))
    # buffers, NumPy arrays, DLPack producers: shared where the memory allows
    if copy is False:
        x = _q.from_py(obj, copy=False)
    elif copy:
        x = _q.from_py(obj, copy=True)
    else:
        x = _q.asvalue(obj)
    x = _helpers.tensor(x)
    if dt is not None and x.dtype != dt:
        if copy is False:
            raise ValueError("asarray: copy=False, but the dtype must change (a copy)")
        x = x.astype(dt)
    if device is not None and str(device) != x.device:
        x = _q.to(x, str(device), copy=True)
    return x


def from_dlpack(x: Any, /, *, device: Any = None, copy: Any = None) -> Any:
    """An array sharing the memory of a DLPack producer (copied with copy=True).

    copy=False never copies: a producer whose memory cannot be shared (read-only, as NumPy's
    read-only arrays, or on another device) raises ValueError/BufferError, as the standard
    says; copy=None copies only then.
    """
    if copy is not None and not isinstance(copy, bool):
        raise TypeError(f"from_dlpack: copy must be True, False or None, got {copy!r}")
    r = _helpers.tensor(_q.from_dlpack(x, copy=copy))
    if device is not None and str(device) != r.device:
        if copy is False:
            raise ValueError("from_dlpack: copy=False, but the data is on another device")
        r = _q.to(r, str(device), copy=True)
    return r


def eye(n_rows: int, n_cols: Any = None, /, *, k: int = 0, dtype: Any = None,
        device: Any = None) -> Any:
    """A 2-d array with ones on the k-th diagonal (default dtype float64)."""
    dt = _dtype_or(dtype, _dtypes.DEFAULT_FLOAT)
    with _helpers.on_device(device):
        return _q.eye(int(n_rows), int(n_rows if n_cols is None else n_cols), int(k), dtype=dt)


def linspace(start: Any, stop: Any, /, num: int, *, dtype: Any = None, device: Any = None,
             endpoint: builtins.bool = True) -> Any:
    """num evenly spaced values from start to stop (default float64, complex128 for complex)."""
    is_complex = isinstance(start, complex) or isinstance(stop, complex)
    default = _dtypes.DEFAULT_COMPLEX if is_complex else _dtypes.DEFAULT_FLOAT
    dt = _dtype_or(dtype, default)
    if dt.kind not in "fc":
        raise TypeError(f"linspace: dtype must be floating, got {dt}")
    num = int(num)
    if num < 0:
        raise ValueError("linspace: num must be non-negative")
    with _helpers.on_device(device):
        if dt.kind == "c":
            s, e = complex(start), complex(stop)
            re = _q.linspace(s.real, e.real, num, endpoint=endpoint, dtype="float64")
            im = _q.linspace(s.imag, e.imag, num, endpoint=endpoint, dtype="float64")
            return (re + im * 1j).astype(dt)
        r = _q.linspace(float(start), float(stop), num, endpoint=endpoint, dtype="float64")
        return r if dt == _dtypes.float64 else r.astype(dt)


def meshgrid(*arrays: Any, indexing: str = "xy") -> list[Any]:
    """Coordinate arrays from 1-d arrays ("xy": Cartesian, "ij": matrix indexing)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    xs = [_helpers.tensor(a) for a in arrays]
    if not xs:
        return []
    dts = {a.dtype for a in xs}
    if len(dts) > 1:
        raise TypeError("meshgrid: the arrays must all have the same dtype")
    sizes = [a.shape[0] if a.ndim else 1 for a in xs]
    if indexing == "xy" and len(xs) > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    n = len(xs)
    res = []
    for i, a in enumerate(xs):
        axis = i
        if indexing == "xy" and n > 1 and i < 2:
            axis = 1 - i
        shape = [1] * n
        shape[axis] = sizes[axis]
        res.append(_q.copy(_q.broadcast_to(_q.reshape(a, tuple(shape)), tuple(sizes))))
    return res


def _tri(x: Any, k: int, lower: builtins.bool, fname: str) -> Any:
    x = _helpers.tensor(x)
    if x.ndim < 2:
        raise ValueError(f"{fname}: the array must have at least 2 dimensions")
    m, n = x.shape[-2], x.shape[-1]
    with _helpers.on_device(x.device):
        rows = _q.reshape(_q.arange(0, m, 1, dtype="int64"), (m, 1))
        cols = _q.reshape(_q.arange(0, n, 1, dtype="int64"), (1, n))
    keep = (cols - rows <= int(k)) if lower else (cols - rows >= int(k))
    return _q.where(keep, x, _q.zeros_like(x))


def tril(x: Any, /, *, k: int = 0) -> Any:
    """x with the elements above the k-th diagonal zeroed (the last two axes)."""
    return _tri(x, k, True, "tril")


def triu(x: Any, /, *, k: int = 0) -> Any:
    """x with the elements below the k-th diagonal zeroed (the last two axes)."""
    return _tri(x, k, False, "triu")
