"""NumPy's creation functions from a prototype (np.zeros_like, ..., np.copy, np.astype)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _isthmus as _q
from ._keywords import _dtype_arg, _operand, _same_dtype, _tensor, _unsupported
from ._reductions import _scalar_as
from ._tables import _implements

_qvalue = _q.qvalue


def _like(fname: str, a: Any, dtype: Any, order: Any, shape: Any, device: Any,
          make: Callable[..., Any]) -> Any:
    A = _tensor(a)
    if order not in ("K", "A", "C", None):
        raise _unsupported(fname, "order", order, "isthmus makes C-order tensors")
    if device is not None and device != A.device:
        raise _unsupported(fname, "device", device, f"the prototype is on {A.device}")
    dt = A.dtype if dtype is None else _dtype_arg(dtype, fname)
    if shape is None:
        return make(A, dt)
    with _q.device(A.device):  # a new shape, on the prototype's device
        proto = _q.uninit(shape, dtype=dt)
    return make(proto, dt)


@_implements("zeros_like")
def _np_zeros_like(a: Any, dtype: Any = None, order: str = "K", subok: bool = True,
                   shape: Any = None, *, device: Any = None) -> Any:
    return _like("numpy.zeros_like", a, dtype, order, shape, device,
                 lambda p, dt: _q.zeros_like(p, dtype=dt))


@_implements("ones_like")
def _np_ones_like(a: Any, dtype: Any = None, order: str = "K", subok: bool = True,
                  shape: Any = None, *, device: Any = None) -> Any:
    return _like("numpy.ones_like", a, dtype, order, shape, device,
                 lambda p, dt: _q.ones_like(p, dtype=dt))


@_implements("empty_like")
def _np_empty_like(prototype: Any, dtype: Any = None, order: str = "K", subok: bool = True,
                   shape: Any = None, *, device: Any = None) -> Any:
    return _like("numpy.empty_like", prototype, dtype, order, shape, device,
                 lambda p, dt: _q.uninit_like(p, dtype=dt))


@_implements("full_like")
def _np_full_like(a: Any, fill_value: Any, dtype: Any = None, order: str = "K",
                  subok: bool = True, shape: Any = None, *, device: Any = None) -> Any:
    def make(p: Any, dt: Any) -> Any:
        if np.ndim(fill_value) != 0 or isinstance(fill_value, _qvalue):
            r = _q.zeros_like(p, dtype=dt)
            r[...] = _operand(fill_value)  # broadcasts and casts, as NumPy's copyto
            return r
        return _q.full_like(p, _scalar_as(fill_value, dt), dtype=dt)

    return _like("numpy.full_like", a, dtype, order, shape, device, make)


@_implements("copy")
def _np_copy(a: Any, order: str = "K", subok: bool = False) -> Any:
    if order not in ("K", "A", "C"):
        raise _unsupported("numpy.copy", "order", order, "isthmus copies in C or K order")
    return _q.copy(_tensor(a))


@_implements("astype")
def _np_astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Any:
    A = _tensor(x)
    if device is not None and device != A.device:
        raise _unsupported("numpy.astype", "device", device, f"the value is on {A.device}")
    dt = _dtype_arg(dtype, "numpy.astype")
    if not copy and _same_dtype(A.dtype, dt):
        return A
    return A.astype(dt)
