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

    (1, "tensor", dtype, shape, order, byteorder, device, data[, True])
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
Note [unpickling onto a device]). A tensor that requires grad (docs/autograd.md) adds a ninth
item, ``True``: the flag travels, the graph does not, so the rebuilt tensor is a leaf that
requires grad (torch's rule); tensors without it pickle exactly as before. ``copy.copy`` and
``copy.deepcopy`` follow the same rule.

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

import pickle
import threading
from typing import Any

from . import _isthmus
from ._pickle_payload import (_PLAIN_KINDS, VERSION, _cell_items, _check_device,
                              _dtype_name, _native_copy, _native_deepcopy, _native_reduce,
                              _native_reduce_ex, _object_error, _tensor_payload, _view_key)
from ._pickle_rebuild import _bad, _make_cell, _new_cell, _rebuild_scalar, _rebuild_tensor, _targets

__all__ = ["VERSION", "payload", "rebuild", "unpickle_device"]


# ---- where unpickled tensors go ------------------------------------------------------------

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
        if self.requires_grad:  # a new leaf that requires grad (Note [qvalue pickle payload])
            return self.detach().copy().requires_grad_()
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


def refuse_native_objects() -> None:
    """Gives the plugin objects' type (``native_object``) the documented refusal (called by
    isthmus/__init__.py; qvalue's own methods here are attached by _qvalue_python.py).

    Note [plugin objects do not pickle]
    ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    A plugin object (``q.native_object``, what a plugin's constructor returns; or a qvalue
    holding one, whose ``kind`` is the type's name) lives in the plugin's memory with no
    declared way to serialise it. Left alone, pickle would fall back to the generic "cannot
    pickle 'isthmus._isthmus.native_object' object", which names neither the plugin's type nor
    what to do; both paths raise the TypeError docs/scaling-out.md shows instead.
    """
    native = getattr(_isthmus, "native_object", None)
    if native is not None:
        native.__reduce_ex__ = _native_reduce_ex
        native.__reduce__ = _native_reduce
        native.__copy__ = _native_copy
        native.__deepcopy__ = _native_deepcopy
