"""Pickle payloads of qvalues: dtype table, device names, reading memory, building payloads."""

from __future__ import annotations

import ctypes
import math
import pickle
import re
import sys
from typing import Any

import numpy as np

from . import _isthmus


#: The payload format version this module writes and the only one it reads.
VERSION = 1

# isthmus dtype name -> (NumPy dtype or None, itemsize, Python number type of its scalars)
_DTYPES: dict[str, tuple[Any, int, type]] = {
    "bool": (np.dtype(np.bool_), 1, bool),
    "int8": (np.dtype(np.int8), 1, int),
    "int16": (np.dtype(np.int16), 2, int),
    "int32": (np.dtype(np.int32), 4, int),
    "int64": (np.dtype(np.int64), 8, int),
    "uint8": (np.dtype(np.uint8), 1, int),
    "uint16": (np.dtype(np.uint16), 2, int),
    "uint32": (np.dtype(np.uint32), 4, int),
    "uint64": (np.dtype(np.uint64), 8, int),
    "float16": (np.dtype(np.float16), 2, float),
    "bfloat16": (None, 2, float),
    "float32": (np.dtype(np.float32), 4, float),
    "float64": (np.dtype(np.float64), 8, float),
    "complex64": (np.dtype(np.complex64), 8, complex),
    "complex128": (np.dtype(np.complex128), 16, complex),
}
_MAX_RANK = 32  # isthmus::max_rank
_DEVICE = re.compile(r"cpu|cuda(:[0-9]+)?")
_PLAIN_KINDS = ("tensor", "scalar", "string", "none", "cell")


def _check_device(device: Any, fn: str) -> str:
    if not isinstance(device, str):
        raise TypeError(f"{fn}: device must be a str such as 'cpu' or 'cuda:0', got "
                        f"{type(device).__name__}")
    if not _DEVICE.fullmatch(device):
        raise ValueError(f"{fn}: unknown device {device!r} (expected 'cpu', 'cuda' or 'cuda:N')")
    return device


# ---- reading a value's memory -------------------------------------------------------------

def _dtype_name(v: Any) -> str:
    dt = v.dtype
    return dt if isinstance(dt, str) else dt.name


def _resource(device: str) -> int:
    """The MEMRESOURCE number of a device name (cpu: 1, cuda:N: 2 + N)."""
    if device == "cpu":
        return _isthmus.MEMRESOURCE_CPU
    return _isthmus.MEMRESOURCE_DEVICE2 + int(device.partition(":")[2] or 0)


def _address(t: Any, resource: int) -> int:
    """The address of t's element 0 on ``resource`` (a read lock taken and given back)."""
    p = t.lock(_isthmus.LOCK_READ, resource)
    t.unlock(_isthmus.LOCK_READ, resource)
    return p


def _view_key(t: Any) -> tuple[Any, ...] | None:
    """What identifies a non-empty tensor view (Note [sharing inside cells]); None: no key."""
    shape = tuple(t.shape)
    if math.prod(shape) == 0:
        return None
    try:
        resource = _resource(t.device)
        base = _address(t, resource)
        strides = []
        for d, n in enumerate(shape):
            if n == 1:
                strides.append(0)
                continue
            probe = tuple(slice(1, 2) if i == d else slice(0, 1) for i in range(len(shape)))
            strides.append(_address(t[probe], resource) - base)
    except (RuntimeError, ValueError):  # a conflicting lock: leave this one unshared
        return None
    return ("isthmus.qvalue view", t.device, base, tuple(strides), shape, _dtype_name(t))


def _host_bytes(t: Any, protocol: int) -> Any:
    """The bytes of a C-contiguous CPU tensor: a PickleBuffer over its memory (protocol 5), or
    ``bytes`` (a copy). bfloat16 is copied through lock (no buffer format for it)."""
    if _dtype_name(t) == "bfloat16":
        n = t.nbytes
        if n == 0:
            data = b""
        else:
            p = t.lock(_isthmus.LOCK_READ, _isthmus.MEMRESOURCE_CPU)
            try:
                data = ctypes.string_at(p, n)
            finally:
                t.unlock(_isthmus.LOCK_READ, _isthmus.MEMRESOURCE_CPU)
        return pickle.PickleBuffer(data) if protocol >= 5 else data
    m = memoryview(t)  # t's memory, pinned to the CPU while the view lives (Note [export pins])
    # PickleBuffer(m), not PickleBuffer(t): PickleBuffer re-exports from the Py_buffer's owner
    # object, which for a qvalue is its export owner (no buffer slots), not the qvalue.
    return pickle.PickleBuffer(m) if protocol >= 5 else m.tobytes()


# ---- qvalue -> payload ----------------------------------------------------------------------

def _object_error(v: Any, what: str,
                  holder: str = "a qvalue holding a native object") -> TypeError:
    return TypeError(
        f"cannot {what} {holder} of type '{v.kind}': its plugin declares "
        "no way to pickle or copy it (pass its fields as plain values and rebuild it on the "
        "other side)"
    )


class _NativeObjectKind:
    """A native_object seen through its type name, as _object_error reads `kind`."""

    def __init__(self, obj: Any) -> None:
        try:
            self.kind = obj.type_name
        except Exception:  # a broken object still gets the message
            self.kind = type(obj).__name__


def _native_object_error(obj: Any, what: str) -> TypeError:
    return _object_error(_NativeObjectKind(obj), what, "a native object")


def _native_reduce_ex(self: Any, protocol: int) -> Any:
    """``native_object.__reduce_ex__``: plugin objects do not pickle (TypeError naming the type)."""
    raise _native_object_error(self, "pickle")


def _native_reduce(self: Any) -> Any:
    """``native_object.__reduce__``: as ``__reduce_ex__``."""
    raise _native_object_error(self, "pickle")


def _native_copy(self: Any) -> Any:
    """``native_object.__copy__``: plugin objects are not copied (TypeError naming the type)."""
    raise _native_object_error(self, "copy")


def _native_deepcopy(self: Any, memo: dict[Any, Any]) -> Any:
    """``native_object.__deepcopy__``: as ``__copy__``."""
    raise _native_object_error(self, "copy")


def _tensor_payload(t: Any, protocol: int) -> tuple[Any, ...]:
    # the flag travels, the graph does not (Note [qvalue pickle payload])
    requires_grad = bool(t.requires_grad)
    if requires_grad:
        t = t.detach()
    device = t.device
    src = t if device == "cpu" else _isthmus.to(t, "cpu", copy=True)
    order = "C"
    if not src.is_contiguous():
        if src.ndim > 1 and src.T.is_contiguous():
            order, src = "F", src.T  # a transposed C-contiguous tensor leaves as it is
        else:
            src = src.contiguous()  # only the view's elements, never its whole base
    fields = (VERSION, "tensor", _dtype_name(t), tuple(t.shape), order, sys.byteorder, device,
              _host_bytes(src, protocol))
    return fields + (True,) if requires_grad else fields


def _cell_items(c: Any, shared: dict[Any, Any]) -> list[Any]:
    items: list[Any] = []
    for item in c:
        kind = item.kind
        if kind == "cell":
            items.append(("cell", tuple(item.shape), _cell_items(item, shared)))
        elif kind == "tensor":
            key = _view_key(item)
            items.append(item if key is None else shared.setdefault(key, item))
        elif kind in _PLAIN_KINDS:
            items.append(item)
        else:
            raise _object_error(item, "pickle")
    return items
