"""Rebuilding qvalues from pickle payloads: unpickle targets, payload checks, builders."""

from __future__ import annotations

import contextvars
import math
import pickle
import sys
from typing import Any

import numpy as np

from . import _isthmus
from ._pickle_payload import _DTYPES, _MAX_RANK, _check_device

# The devices of the unpickle_device scopes this context is in, innermost last. A tuple in a
# ContextVar: each thread and asyncio task has its own, and a scope object may be entered from
# several threads at once.
_targets: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar(
    "isthmus_unpickle_device", default=()
)


# ---- payload -> qvalue ----------------------------------------------------------------------

def _bad(msg: str) -> pickle.UnpicklingError:
    return pickle.UnpicklingError(f"isthmus.pickling.rebuild: {msg}")


def _check_dtype(name: Any) -> tuple[Any, int, type]:
    if not isinstance(name, str):
        raise TypeError(f"isthmus.pickling.rebuild: dtype must be a str, got {type(name).__name__}")
    if name not in _DTYPES:
        raise ValueError(f"isthmus.pickling.rebuild: unknown dtype {name!r} (expected one of "
                         f"{', '.join(_DTYPES)})")
    return _DTYPES[name]


def _check_shape(shape: Any, what: str) -> tuple[int, ...]:
    if not isinstance(shape, tuple):
        raise TypeError(f"isthmus.pickling.rebuild: a {what} shape must be a tuple, got "
                        f"{type(shape).__name__}")
    if len(shape) > _MAX_RANK:
        raise ValueError(f"isthmus.pickling.rebuild: a {what} shape has {len(shape)} dimensions, "
                         f"more than isthmus's {_MAX_RANK}")
    for n in shape:
        if type(n) is not int:  # noqa: E721  (bool is no size)
            raise TypeError(f"isthmus.pickling.rebuild: {what} shape {shape!r} holds a "
                            f"{type(n).__name__}, not an int")
        if n < 0:
            raise ValueError(f"isthmus.pickling.rebuild: {what} shape {shape!r} has a negative "
                             "dimension")
    return shape


def _device_for(device: Any) -> str:
    _check_device(device, "isthmus.pickling.rebuild")
    targets = _targets.get()
    return targets[-1] if targets else device


def _to_device(host: Any, target: str, name: str, shape: tuple[int, ...], device: str) -> Any:
    if target == "cpu":
        return host
    try:
        return _isthmus.to(host, target, copy=True)
    except (RuntimeError, ValueError) as e:
        whence = "" if target == device else f" (asked by q.unpickle_device({target!r}))"
        raise RuntimeError(
            f"cannot unpickle a {name} tensor of shape {shape} onto {target}{whence}: {e}. To "
            "load it on another device, unpickle inside `with isthmus.unpickle_device('cpu'):` "
            "(or 'cuda:N')"
        ) from e


def _rebuild_tensor(fields: tuple[Any, ...]) -> Any:
    if len(fields) not in (6, 7):
        raise _bad(f"a tensor payload has 8 items (9 with requires_grad), got {len(fields) + 2}")
    name, shape, order, byteorder, device, data = fields[:6]
    np_dtype, itemsize, _ = _check_dtype(name)
    requires_grad = len(fields) == 7
    if requires_grad:
        if fields[6] is not True:
            raise TypeError("isthmus.pickling.rebuild: a tensor payload's 9th item (requires_grad) "
                            f"must be True, got {fields[6]!r}")
        if not (name.startswith(("float", "complex")) or name == "bfloat16"):
            raise ValueError(f"isthmus.pickling.rebuild: a {name} tensor cannot require grad "
                             "(only floating-point and complex tensors can)")
    shape = _check_shape(shape, "tensor")
    if order not in ("C", "F"):
        raise ValueError("isthmus.pickling.rebuild: tensor order must be 'C' or 'F', got "
                         f"{order!r}")
    if byteorder not in ("little", "big"):
        raise ValueError("isthmus.pickling.rebuild: byte order must be 'little' or 'big', got "
                         f"{byteorder!r}")
    target = _device_for(device)
    try:
        m = memoryview(data)
    except TypeError:
        raise TypeError("isthmus.pickling.rebuild: tensor data must be a bytes-like buffer, got "
                        f"{type(data).__name__}") from None
    if not m.c_contiguous:
        raise ValueError("isthmus.pickling.rebuild: tensor data must be a C-contiguous buffer")
    if m.nbytes == 0:
        m = memoryview(b"")  # cast() refuses shapes with zeros
    elif m.format != "B" or m.ndim != 1:
        m = m.cast("B")
    need = math.prod(shape) * itemsize
    if m.nbytes != need:
        raise ValueError(f"isthmus.pickling.rebuild: a {name} tensor of shape {shape} needs "
                         f"{need} bytes of data, the payload holds {m.nbytes}")
    c_shape = shape[::-1] if order == "F" else shape
    swap = byteorder != sys.byteorder and itemsize > 1
    if need == 0:
        host = _isthmus.zeros(c_shape, dtype=name)
    elif np_dtype is None:  # bfloat16: copy the bits into a new tensor (no NumPy dtype)
        raw = np.frombuffer(m, dtype=np.uint16)
        if swap:
            raw = raw.byteswap()
        host = _isthmus.uninit(c_shape, dtype=name)
        p = host.lock(_isthmus.LOCK_WRITE, _isthmus.MEMRESOURCE_CPU)
        try:
            _isthmus.memcpy(p, raw.ctypes.data, need)
        finally:
            host.unlock(_isthmus.LOCK_WRITE, _isthmus.MEMRESOURCE_CPU)
    else:
        arr = np.frombuffer(m, dtype=np_dtype)  # over the payload's memory
        if swap:
            arr = arr.byteswap()
        # wraps the buffer when it is writable and aligned, copies otherwise (Note [wrapping rules])
        host = _isthmus.asvalue(arr.reshape(c_shape))
    t = _to_device(host, target, name, shape, device)
    t = t.T if order == "F" else t
    return t.requires_grad_() if requires_grad else t


def _rebuild_scalar(fields: tuple[Any, ...]) -> Any:
    if len(fields) != 2:
        raise _bad(f"a scalar payload has 4 items, got {len(fields) + 2}")
    name, number = fields
    _, _, pytype = _check_dtype(name)
    ok = type(number) is pytype or (pytype is float and type(number) is int) or (
        pytype is complex and type(number) in (int, float))
    if not ok:
        raise TypeError(f"isthmus.pickling.rebuild: a {name} scalar holds a "
                        f"{pytype.__name__}, got {type(number).__name__}")
    try:
        return _isthmus.value(number, dtype=name)
    except OverflowError as e:
        raise ValueError(f"isthmus.pickling.rebuild: {number!r} does not fit a {name} scalar "
                         f"({e})") from e


def _make_cell(shape: tuple[int, ...], items: Any) -> Any:
    shape = _check_shape(shape, "cell")
    if not isinstance(items, list):
        raise TypeError(f"isthmus.pickling.rebuild: cell items must be a list, got "
                        f"{type(items).__name__}")
    if len(items) != math.prod(shape):
        raise ValueError(f"isthmus.pickling.rebuild: a cell of shape {shape} holds "
                         f"{math.prod(shape)} items, the payload has {len(items)}")
    c = _new_cell(shape)
    for i, item in enumerate(items):
        if isinstance(item, tuple) and len(item) == 3 and item[0] == "cell":
            item = _make_cell(item[1], item[2])
        elif not isinstance(item, _isthmus.qvalue):
            raise TypeError(f"isthmus.pickling.rebuild: cell item {i} must be a qvalue or a "
                            f"nested cell, got {type(item).__name__}")
        c[i] = item
    return c


def _new_cell(shape: tuple[int, ...]) -> Any:
    """A cell of ``shape`` whose elements are none."""
    return _isthmus.typename(f"cube{{{len(shape)}}}[??]")(*shape)

