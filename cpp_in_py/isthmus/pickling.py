"""Pickling and copying qvalues: pickle, copy.copy and copy.deepcopy (docs/scaling-out.md).

``qvalue.__reduce_ex__`` turns a value into a call of :func:`rebuild` on a plain payload (a
tuple of Python objects and one buffer per tensor), so qvalues travel through ``pickle``,
``multiprocessing``, Dask and Ray; ``__copy__`` / ``__deepcopy__`` follow NumPy's semantics.
Both are attached to ``qvalue`` in ``isthmus/__init__.py``.

    data = pickle.dumps(A, protocol=5, buffer_callback=bufs.append)   # A's memory, no copy
    B = pickle.loads(data, buffers=bufs)                              # B over that memory
    with q.unpickle_device("cpu"):                                    # CUDA pickles, no GPU
        C = pickle.loads(cuda_pickle)

Note [qvalue pickle payload]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A qvalue pickles as ``rebuild(payload)``, payload a tuple whose first item is the format version
(``VERSION``; ``rebuild`` refuses others with ``pickle.UnpicklingError``) and whose second is the
kind:

    (1, "tensor", dtype, shape, order, byteorder, device, data)
    (1, "scalar", dtype, number)          number: the Python bool/int/float/complex (exact)
    (1, "string", text)
    (1, "none")
    (1, "cell", shape, items)             items: the elements in C order, each a qvalue or a
                                          nested ("cell", shape, items) tuple

dtype is isthmus's name (``"float32"``, ``"bfloat16"``, ...), so the stream needs no NumPy
dtype object and bfloat16 (which NumPy lacks) travels like the others. data is the elements'
bytes, only the view's elements, in the given order ("C", or "F" when the tensor is the
transpose of a C-contiguous one and so leaves without a copy), in the writer's byte order
(swapped on load where the reader's differs). With protocol 5 data is a ``pickle.PickleBuffer``
over the tensor's own memory when the tensor is contiguous on the CPU: out of band with a
``buffer_callback`` (no copy at all), in band as a bytearray otherwise. Protocols 0-4 carry
``bytes`` (one copy). bfloat16 data is read through ``lock``, one copy, because the buffer
protocol has no bfloat16 format. device is where the value was (``"cpu"``, ``"cuda:N"``; see
Note [unpickling onto a device]).

Everything in the payload is checked before it is used (version, kind, types, dtype name,
sizes, byte count against shape x itemsize, device name): a corrupted or hostile payload raises
``pickle.UnpicklingError`` (unknown version, malformed tuple), ``TypeError`` (an item of the
wrong type) or ``ValueError`` (an inconsistent value), never crashes. Note that unpickling runs
whatever the stream names: only load pickles from sources you trust.

Note [sharing inside cells]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
pickle's memo and deepcopy's memo find shared objects by ``id()``. A cell's elements are C++
values: each access makes a new qvalue wrapper, so a cell that holds one tensor twice yields two
different wrappers and the memo would copy the data twice and lose the aliasing. So the cell
payload (and deepcopy of a cell) identifies tensor elements by their view: the address of
element 0 (through ``lock`` on the device where the value is), the byte strides (probed with
one-element slices), the shape and the dtype. Two elements with the same key are the same
elements of the same memory; the payload holds one wrapper for both, which pickle then memoizes,
and deepcopy keeps the key in its memo, so the copies share exactly where the originals did
(deepcopy: across every cell of one ``deepcopy`` call; pickle: within one top-level cell, nested
cells included). Empty tensors are not keyed (no memory to share). Cells themselves cannot be
identified from Python: a cell held twice comes back as two equal cells.

Note [unpickling onto a device]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A tensor goes back to the device its payload names. The data always travels as host bytes; a
CUDA payload (``"cuda:N"``) is copied to that device with ``q.to(..., copy=True)``. When the
running session cannot put data there (no CUDA build, no driver, no device N) ``rebuild`` raises
``RuntimeError`` naming the device and pointing at ``q.unpickle_device``: inside
``with q.unpickle_device("cpu"):`` every tensor unpickled by this thread (or asyncio task; the
setting is a ``contextvars`` variable) goes to the given device instead, whatever its payload
says. CPU payloads are wrapped without a copy where the buffer allows it (writable, aligned):
out-of-band buffers handed back to ``pickle.loads`` and protocol 5's in-band bytearrays;
read-only buffers (``bytes``, Ray's object store) are copied, since isthmus tensors are always
writable (Note [wrapping rules]).

Note [unpickling starts the runtime]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Unpickling needs a session, but a process that receives qvalues (a multiprocessing child, a
Dask or Ray worker) often never called ``q.init``. So ``rebuild`` starts one when none is
running, as ``q.init("cpu")`` would (default precision), under a lock so that two threads do not
race. A worker that wants CUDA or float64 precision calls ``q.init(...)`` itself before it
unpickles anything (``init`` with other settings while a session runs raises). After
``q.destroy()`` the next unpickle starts a new CPU session the same way.
"""

from __future__ import annotations

import contextvars
import ctypes
import math
import pickle
import re
import sys
import threading
from typing import Any

import numpy as np

from . import _isthmus

__all__ = ["VERSION", "payload", "rebuild", "unpickle_device"]

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


# ---- where unpickled tensors go ------------------------------------------------------------

# The devices of the unpickle_device scopes this context is in, innermost last. A tuple in a
# ContextVar: each thread and asyncio task has its own, and a scope object may be entered from
# several threads at once.
_targets: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar(
    "isthmus_unpickle_device", default=()
)


def _check_device(device: Any, fn: str) -> str:
    if not isinstance(device, str):
        raise TypeError(f"{fn}: device must be a str such as 'cpu' or 'cuda:0', got "
                        f"{type(device).__name__}")
    if not _DEVICE.fullmatch(device):
        raise ValueError(f"{fn}: unknown device {device!r} (expected 'cpu', 'cuda' or 'cuda:N')")
    return device


class unpickle_device:
    """``with q.unpickle_device("cpu"):`` puts every tensor unpickled inside on that device.

    A pickle of a CUDA value names its device ("cuda:0"); loading it where the running session
    has no such device raises RuntimeError. Inside this scope tensors go to ``device``
    ("cpu", "cuda" or "cuda:N") instead, whatever their pickle says. The scope belongs to the
    current thread (or asyncio task): it is a ``contextvars`` setting. Scopes nest.
    See Note [unpickling onto a device] in isthmus/pickling.py.
    """

    def __init__(self, device: str) -> None:
        self._device = _check_device(device, "unpickle_device")

    @property
    def device(self) -> str:
        """The device tensors unpickled in this scope go to."""
        return self._device

    def __enter__(self) -> unpickle_device:
        _targets.set(_targets.get() + (self._device,))
        return self

    def __exit__(self, *exc: Any) -> None:
        _targets.set(_targets.get()[:-1])

    def __repr__(self) -> str:
        return f"isthmus.unpickle_device({self._device!r})"


# ---- the session (Note [unpickling starts the runtime]) ----------------------------------------

_init_lock = threading.Lock()


def _ensure_session() -> None:
    if _isthmus.is_initialized():
        return
    with _init_lock:
        if not _isthmus.is_initialized():
            _isthmus.init("cpu")


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
    device = t.device
    src = t if device == "cpu" else _isthmus.to(t, "cpu", copy=True)
    order = "C"
    if not src.is_contiguous():
        if src.ndim > 1 and src.T.is_contiguous():
            order, src = "F", src.T  # a transposed C-contiguous tensor leaves as it is
        else:
            src = src.contiguous()  # only the view's elements, never its whole base
    return (VERSION, "tensor", _dtype_name(t), tuple(t.shape), order, sys.byteorder, device,
            _host_bytes(src, protocol))


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


def payload(v: Any, protocol: int = pickle.DEFAULT_PROTOCOL) -> tuple[Any, ...]:
    """The payload that ``rebuild`` turns back into ``v`` (Note [qvalue pickle payload])."""
    kind = v.kind
    if kind == "tensor":
        return _tensor_payload(v, protocol)
    if kind == "scalar":
        name = _dtype_name(v)
        # float() is exact for bfloat16, whose item() goes through NumPy and has no dtype there
        return (VERSION, "scalar", name, float(v) if name == "bfloat16" else v.item())
    if kind == "string":
        return (VERSION, "string", v.to_py())
    if kind == "none":
        return (VERSION, "none")
    if kind == "cell":
        return (VERSION, "cell", tuple(v.shape), _cell_items(v, {}))
    raise _object_error(v, "pickle")


def reduce_ex(self: Any, protocol: int) -> tuple[Any, ...]:
    """``qvalue.__reduce_ex__``: ``(rebuild, (payload,))`` (Note [qvalue pickle payload])."""
    return (rebuild, (payload(self, protocol),))


def reduce(self: Any) -> tuple[Any, ...]:
    """``qvalue.__reduce__``: the protocol-2 form of ``__reduce_ex__`` (bytes in band)."""
    return reduce_ex(self, 2)


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
    if len(fields) != 6:
        raise _bad(f"a tensor payload has 8 items, got {len(fields) + 2}")
    name, shape, order, byteorder, device, data = fields
    np_dtype, itemsize, _ = _check_dtype(name)
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
    return t.T if order == "F" else t


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


def rebuild(payload: Any) -> Any:
    """The qvalue a pickle payload describes (Note [qvalue pickle payload]).

    ``qvalue.__reduce_ex__`` names this function in every pickle of a qvalue. Starts a CPU
    session when none runs (Note [unpickling starts the runtime]); puts tensors on the payload's
    device or on the ``unpickle_device`` scope's (Note [unpickling onto a device]). Raises
    ``pickle.UnpicklingError`` for an unknown version or a malformed payload, ``TypeError`` and
    ``ValueError`` for items of the wrong type or value.
    """
    if not isinstance(payload, tuple) or len(payload) < 2:
        raise _bad(f"expected a payload tuple (version, kind, ...), got {type(payload).__name__}"
                   + (f" of {len(payload)} items" if isinstance(payload, tuple) else ""))
    version, kind, *rest = payload
    if type(version) is not int:  # noqa: E721
        raise _bad(f"the payload version must be an int, got {type(version).__name__}")
    if version != VERSION:
        raise _bad(f"payload version {version} is not known to this isthmus (it reads version "
                   f"{VERSION}); the pickle was written by another isthmus release")
    _ensure_session()
    fields = tuple(rest)
    if kind == "tensor":
        return _rebuild_tensor(fields)
    if kind == "scalar":
        return _rebuild_scalar(fields)
    if kind == "string":
        if len(fields) != 1 or not isinstance(fields[0], str):
            raise TypeError("isthmus.pickling.rebuild: a string payload holds one str")
        return _isthmus.value(fields[0])
    if kind == "none":
        if fields:
            raise _bad(f"a none payload has 2 items, got {len(payload)}")
        return _isthmus.value(None)
    if kind == "cell":
        if len(fields) != 2:
            raise _bad(f"a cell payload has 4 items, got {len(payload)}")
        return _make_cell(*fields)
    raise _bad(f"unknown value kind {kind!r} (expected one of {', '.join(_PLAIN_KINDS)})")


# ---- copy.copy / copy.deepcopy --------------------------------------------------------------

def copy_(self: Any) -> Any:
    """``qvalue.__copy__`` (NumPy's semantics): a tensor's data is copied into a new contiguous
    tensor; scalars, strings and none are immutable and return themselves; a cell becomes a
    new cell holding the same elements."""
    kind = self.kind
    if kind == "tensor":
        return self.copy()
    if kind == "cell":
        c = _new_cell(tuple(self.shape))
        for i, item in enumerate(self):
            c[i] = item
        return c
    if kind in _PLAIN_KINDS:
        return self
    raise _object_error(self, "copy")


def _deep_item(item: Any, memo: dict[Any, Any]) -> Any:
    kind = item.kind
    if kind == "cell":
        return _deep_cell(item, memo)
    if kind == "tensor":
        key = _view_key(item)  # Note [sharing inside cells]
        if key is None:
            return item.copy()
        hit = memo.get(key)
        if hit is None:
            hit = memo[key] = (item.copy(), item)  # the original stays alive with its key
        return hit[0]
    return copy_(item)


def _deep_cell(c: Any, memo: dict[Any, Any]) -> Any:
    out = _new_cell(tuple(c.shape))
    for i, item in enumerate(c):
        out[i] = _deep_item(item, memo)
    return out


def deepcopy_(self: Any, memo: dict[Any, Any]) -> Any:
    """``qvalue.__deepcopy__``: as ``__copy__``, but a cell's elements are copied too (at every
    depth); an element held twice is copied once and stays shared (Note [sharing inside
    cells])."""
    if self.kind == "cell":
        return _deep_cell(self, memo)
    return copy_(self)


def attach(qvalue: Any) -> None:
    """Gives the qvalue type its pickling and copy methods (called by isthmus/__init__.py), and
    the plugin objects' type (``native_object``) the documented refusal.

    Note [plugin objects do not pickle]
    ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    A plugin object (``q.native_object``, what a plugin's constructor returns; or a qvalue
    holding one, whose ``kind`` is the type's name) lives in the plugin's memory with no
    declared way to serialise it. Left alone, pickle would fall back to the generic "cannot
    pickle 'isthmus._isthmus.native_object' object", which names neither the plugin's type nor
    what to do; both paths raise the TypeError docs/scaling-out.md shows instead.
    """
    qvalue.__reduce_ex__ = reduce_ex
    qvalue.__reduce__ = reduce
    qvalue.__copy__ = copy_
    qvalue.__deepcopy__ = deepcopy_
    native = getattr(_isthmus, "native_object", None)
    if native is not None:
        native.__reduce_ex__ = _native_reduce_ex
        native.__reduce__ = _native_reduce
        native.__copy__ = _native_copy
        native.__deepcopy__ = _native_deepcopy
