"""Data types of the array API namespace: dtype objects, finfo, iinfo, isdtype, result_type, ..."""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _isthmus as _q
from . import _helpers

# Note [dtypes are NumPy dtypes]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A qvalue's `dtype` is a numpy.dtype (docs/python.md), so the namespace's dtype objects are the
# numpy.dtype instances themselves: `x.dtype == xp.float32` holds with no conversion, and they are
# hashable and print as NumPy's do. bfloat16 and float16 are isthmus dtypes outside the standard
# and are not exported here (`isdtype` and `result_type` still take them).

bool = np.dtype("bool")  # noqa: A001  (the standard's name)
int8 = np.dtype("int8")
int16 = np.dtype("int16")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
uint8 = np.dtype("uint8")
uint16 = np.dtype("uint16")
uint32 = np.dtype("uint32")
uint64 = np.dtype("uint64")
float32 = np.dtype("float32")
float64 = np.dtype("float64")
complex64 = np.dtype("complex64")
complex128 = np.dtype("complex128")

ALL = (bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
       float32, float64, complex64, complex128)
SIGNED = (int8, int16, int32, int64)
UNSIGNED = (uint8, uint16, uint32, uint64)
REAL_FLOAT = (float32, float64)
COMPLEX = (complex64, complex128)

DEFAULT_FLOAT = float64
DEFAULT_COMPLEX = complex128
DEFAULT_INT = int64
DEFAULT_INDEX = int64


def as_dtype(dtype: Any) -> np.dtype:
    """A dtype argument as one of the namespace's dtype objects (TypeError for others)."""
    if dtype is None:
        raise TypeError("a dtype is required here")
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"not a dtype of the array API namespace: {dtype!r}") from None
    if dt not in ALL:
        raise TypeError(f"not a dtype of the array API namespace: {dtype!r}")
    return dt


@dataclass(frozen=True)
class finfo_object:
    """Machine limits of a floating-point dtype (the standard's finfo object)."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: np.dtype


@dataclass(frozen=True)
class iinfo_object:
    """Machine limits of an integer dtype (the standard's iinfo object)."""

    bits: int
    max: int
    min: int
    dtype: np.dtype


def _dtype_of(type: Any) -> np.dtype:
    return type.dtype if _helpers.is_array(type) else as_dtype(type)


def finfo(type: Any, /) -> finfo_object:
    """Machine limits of a real or complex floating-point dtype (or an array's dtype)."""
    dt = _dtype_of(type)
    if dt.kind not in "fc":
        raise TypeError(f"finfo needs a floating-point dtype, got {dt}")
    fi = np.finfo(dt)
    real = fi.dtype
    return finfo_object(int(fi.bits), float(fi.eps), float(fi.max), float(fi.min),
                        float(fi.smallest_normal), np.dtype(real))


def iinfo(type: Any, /) -> iinfo_object:
    """Machine limits of an integer dtype (or an array's dtype)."""
    dt = _dtype_of(type)
    if dt.kind not in "iu":
        raise TypeError(f"iinfo needs an integer dtype, got {dt}")
    ii = np.iinfo(dt)
    return iinfo_object(int(ii.bits), int(ii.max), int(ii.min), dt)


_KINDS = {
    "bool": lambda d: d.kind == "b",
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: d.kind == "f",
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iufc",
}


def isdtype(dtype: Any, kind: Any) -> builtins.bool:
    """Whether dtype is of kind: a dtype, a kind name ("integral", ...) or a tuple of them."""
    if not isinstance(dtype, np.dtype):
        raise TypeError(f"isdtype needs a dtype object, got {type(dtype).__name__}")
    if isinstance(kind, tuple):
        return builtins.any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        test = _KINDS.get(kind)
        if test is None:
            raise ValueError(f"isdtype: unknown kind {kind!r} (one of {', '.join(_KINDS)})")
        return test(dtype)
    if isinstance(kind, np.dtype):
        return dtype == kind
    raise TypeError(f"isdtype: kind must be a dtype, a kind name or a tuple, got {kind!r}")


def _scalar_type(value: Any, dt: np.dtype) -> np.dtype:
    """The dtype of `dt op value` for a Python scalar, weak as in isthmus's ops (NEP 50)."""
    if not isinstance(value, (builtins.bool, int, float, complex)):
        raise TypeError(f"result_type takes arrays, dtypes and Python scalars, got {value!r}")
    return np.result_type(dt, value)


# Note [promotion]
# ~~~~~~~~~~~~~~~~
# isthmus's ops promote as NumPy 2 does (NEP 50, docs/ops.md), which is the standard's table
# wherever the standard defines one; where it leaves a pair undefined (integers with floats,
# int64 with uint64) isthmus gives NumPy's answer (float64) rather than an error, and
# result_type says what the ops do. Python scalars are weak, as in the ops.


def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """The dtype of an op on these arrays, dtypes and Python scalars (See Note [promotion])."""
    dts = []
    scalars = []
    for x in arrays_and_dtypes:
        if _helpers.is_array(x):
            dts.append(x.dtype)
        elif isinstance(x, (builtins.bool, int, float, complex)):
            scalars.append(x)
        else:
            dts.append(as_dtype(x))
    if not dts:
        raise ValueError("result_type needs at least one array or dtype")
    res = dts[0]
    for d in dts[1:]:
        res = np.promote_types(res, d)
    for s in scalars:
        res = _scalar_type(s, res)
    return res


def astype(x: Any, dtype: Any, /, *, copy: builtins.bool = True, device: Any = None) -> Any:
    """x converted to dtype (a new array unless copy=False and nothing changes); complex to real
    raises TypeError, as the standard leaves it undefined."""
    x = _helpers.tensor(x)
    dt = as_dtype(dtype)
    if x.dtype.kind == "c" and dt.kind != "c":
        raise TypeError(f"astype: complex to {dt} is not defined (take real() or abs() first)")
    if x.dtype == dt:
        r = _q.value(x) if copy else x
    else:
        r = x.astype(dt)
    if device is not None and str(device) != r.device:
        r = _q.to(r, str(device), copy=True)
    return _helpers.out(r)


def can_cast(from_: Any, to: Any, /) -> builtins.bool:
    """Whether from_ (a dtype or array) casts to `to` without losing values (NumPy's "safe")."""
    src = _dtype_of(from_)
    dst = as_dtype(to)
    return builtins.bool(np.can_cast(src, dst, "safe"))
