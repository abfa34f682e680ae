"""Shared helpers of the array API namespace: arrays in, 0-d tensors out, the NumPy paths."""

from __future__ import annotations

import contextlib
import threading
from typing import Any

import numpy as np

from .. import _isthmus as _q

_qvalue = _q.qvalue
_init_lock = threading.Lock()


def ensure_session() -> None:
    """Starts a CPU session when none runs (See Note [the namespace starts the runtime])."""
    if _q.is_initialized():
        return
    with _init_lock:
        if not _q.is_initialized():
            _q.init("cpu")


def is_array(x: Any) -> bool:
    """True for a tensor or scalar qvalue (the namespace's arrays)."""
    return isinstance(x, _qvalue) and x.kind in ("tensor", "scalar")


def tensor(x: Any) -> Any:
    """x as a tensor qvalue: scalar qvalues become 0-d tensors (See Note [arrays are tensors])."""
    if isinstance(x, _qvalue):
        kind = x.kind
        if kind == "tensor":
            return x
        if kind == "scalar":
            return _q.reshape(x, ())
        raise TypeError(f"the array API namespace takes tensors, not a qvalue of kind {kind}")
    raise TypeError(f"expected an array (an isthmus tensor), got {type(x).__name__}")


def out(x: Any) -> Any:
    """A result as a tensor: scalar qvalues (full reductions, 0-d ops) become 0-d tensors."""
    if isinstance(x, _qvalue) and x.kind == "scalar":
        return _q.reshape(x, ())
    return x


def operand(x: Any) -> Any:
    """A binary function's operand: arrays as tensors (a scalar qvalue is a 0-d array, strong,
    as the standard's arrays are), Python numbers as they are (weak)."""
    if isinstance(x, _qvalue):
        return tensor(x)
    if isinstance(x, (bool, int, float, complex)):
        return x
    raise TypeError(f"expected an array or a Python number, got {type(x).__name__}")


def exact_scalar(value: Any, ref: Any) -> Any:
    """A Python float or complex operand as a 0-d tensor of the dtype the op gives with ref.

    See Note [Python floats keep their precision].
    """
    # Note [Python floats keep their precision]
    # ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    # isthmus reads a Python float operand in the `scalar` precision (float32 by default) before
    # the op, so `float64_tensor + 0.1` adds 0.1f. The standard's Python scalars are exact, so the
    # namespace passes floats and complexes as 0-d tensors of the result dtype (NumPy's weak rule:
    # the array's dtype, or float64/complex128 next to integers), which gives that dtype exactly.
    if isinstance(value, (float, complex)) and not isinstance(value, bool) and \
            isinstance(ref, _qvalue):
        dt = np.result_type(ref.dtype, value) if ref.dtype != "bfloat16" else None
        if dt is not None and dt.kind in "fc":
            with on_device(None if ref.device == "cpu" else ref.device):
                return _q.full((), value, dtype=dt)
    return value


def two(x1: Any, x2: Any) -> tuple[Any, Any]:
    """Checks a binary function's operands: at least one must be an array; floats made exact."""
    a, b = operand(x1), operand(x2)
    if not isinstance(a, _qvalue) and not isinstance(b, _qvalue):
        raise TypeError("at least one of the operands must be an array")
    return exact_scalar(a, b), exact_scalar(b, a)


def axis_tuple(axis: Any, ndim: int, fname: str) -> tuple[int, ...]:
    """axis (None, an int or a tuple) as a tuple of normalised axes; IndexError out of range."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if not isinstance(axis, tuple) else axis
    res = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < max(ndim, 1) or (ndim == 0 and a not in (0, -1)):
            raise IndexError(f"{fname}: axis {a} is out of range for an array of {ndim} dimensions")
        res.append(a % ndim if ndim else 0)
    if len(set(res)) != len(res):
        raise ValueError(f"{fname}: repeated axis in {axis!r}")
    return tuple(res)


def on_device(device: Any) -> Any:
    """A context for making new values on device (None: the current default)."""
    if device is None:
        return contextlib.nullcontext()
    return _q.device(str(device))


# Note [CPU stopgaps]
# ~~~~~~~~~~~~~~~~~~~
# The linalg functions that need LAPACK (cholesky, det, inv, qr, slogdet, solve, eigh,
# eigvalsh, svd, svdvals, pinv, matrix_rank) and the fft transforms run NumPy's LAPACK and
# pocketfft on a shared view of a CPU array's memory and copy the result into a new tensor:
# on the CPU they are faster than anything composed. Arrays on other devices take code composed
# from isthmus ops instead (Note [linalg by elimination] in _elimination.py, Note [linalg by
# Jacobi rotations] in _jacobi.py, Note [fft by composition] in _fft_compose.py), so no
# function of the namespace is CPU-only any more; `host` still refuses a device array with a
# TypeError (no silent device-to-host copy, the same rule as the fallback in
# numpy_protocols/_fallback.py) should a path reach it with one. sort, argsort, searchsorted,
# the unique_* functions and nextafter were stopgaps and are isthmus's own now (Note [unique by
# sorting] in isthmus/_unique.py, Note [nextafter by bits] in
# core/src/ops/elementwise_nextafter.cpp).


def host(label: str, *xs: Any) -> list[np.ndarray]:
    """NumPy views of CPU arrays for the NumPy paths (See Note [CPU stopgaps])."""
    res = []
    for x in xs:
        x = tensor(x)
        if x.device != "cpu":
            raise TypeError(
                f"{label}: this path of the array API namespace computes on the host through "
                f"NumPy, and this array is on {x.device}; "
                "isthmus does not copy it to the host behind your back. Move it explicitly "
                "(x.to_device('cpu')) if that is what you want")
        res.append(np.asarray(x))
    return res


def from_host(a: Any) -> Any:
    """A NumPy path's result as a new tensor (a copy, so nothing aliases NumPy's memory)."""
    return out(_q.value(np.asarray(a)))
