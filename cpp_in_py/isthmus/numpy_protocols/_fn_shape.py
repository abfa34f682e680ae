"""NumPy's joining, splitting and shape functions (np.concatenate, np.split, np.reshape, ...)."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .. import _isthmus as _q
from ._keywords import (_astype, _can_cast, _check_casting_name, _check_python_int, _dtype_arg,
                        _dtype_repr, _is_number, _operand, _store, _tensor, _unsupported)
from ._tables import _implements

_qvalue = _q.qvalue
_AxisError = getattr(getattr(np, "exceptions", np), "AxisError")


# ---- joining and splitting ----


def _join(qname: str, fname: str, arrays: Any, axis: Any, out: Any, dtype: Any,
          casting: str) -> Any:
    _check_casting_name(casting)
    if out is not None and dtype is not None:
        raise TypeError(f"{fname}() only takes `out` or `dtype` as an argument, but both were "
                        "provided.")
    ts = [_tensor(x) for x in arrays]
    if axis is None:
        if qname == "stack":
            raise _unsupported(fname, "axis", None)
        ts = [_q.ravel(t) for t in ts]
        axis = 0
    if dtype is not None:
        dtype = _dtype_arg(dtype, fname)
        for t in ts:
            if not _can_cast(t.dtype, dtype, casting):
                raise TypeError(
                    f"Cannot cast array data from {_dtype_repr(t.dtype)} to "
                    f"{_dtype_repr(dtype)} according to the rule '{casting}'"
                )
        ts = [_astype(t, dtype) for t in ts]
    r = getattr(_q, qname)(ts, axis)
    if out is not None:
        return _store(fname, out, r, None, casting, what="function")
    return r


@_implements("concatenate", "concat")
def _np_concatenate(arrays: Any, axis: Any = 0, out: Any = None, *, dtype: Any = None,
                    casting: str = "same_kind") -> Any:
    return _join("concatenate", "numpy.concatenate", arrays, axis, out, dtype, casting)


@_implements("stack")
def _np_stack(arrays: Any, axis: int = 0, out: Any = None, *, dtype: Any = None,
              casting: str = "same_kind") -> Any:
    return _join("stack", "numpy.stack", arrays, axis, out, dtype, casting)


@_implements("split")
def _np_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    return list(_q.split(_tensor(ary), _index_arg(indices_or_sections), axis))


@_implements("array_split")
def _np_array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    return list(_q.array_split(_tensor(ary), _index_arg(indices_or_sections), axis))


def _index_arg(x: Any) -> Any:
    """An int or a list of ints for isthmus (NumPy arrays and qvalues of indices too)."""
    if isinstance(x, (np.ndarray, _qvalue)) and x.ndim > 0:
        return [operator.index(i) for i in x.tolist()]
    if isinstance(x, (np.ndarray, _qvalue, np.generic)):
        return operator.index(x)
    return x


# ---- shape ----


@_implements("flip")
def _np_flip(m: Any, axis: Any = None) -> Any:
    return _q.flip(_tensor(m), axis)


@_implements("fliplr")
def _np_fliplr(m: Any) -> Any:
    A = _tensor(m)
    if A.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return _q.flip(A, 1)


@_implements("flipud")
def _np_flipud(m: Any) -> Any:
    A = _tensor(m)
    if A.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return _q.flip(A, 0)


@_implements("tile")
def _np_tile(A: Any, reps: Any) -> Any:
    return _q.tile(_tensor(A), reps)


@_implements("repeat")
def _np_repeat(a: Any, repeats: Any, axis: Any = None) -> Any:
    return _q.repeat(_tensor(a), _operand(repeats) if not _is_number(repeats) else repeats,
                     axis)


_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


@_implements("pad")
def _np_pad(array: Any, pad_width: Any, mode: Any = "constant", **kwargs: Any) -> Any:
    if mode not in _PAD_MODES:
        raise _unsupported("numpy.pad", "mode", mode, f"isthmus pads with {', '.join(_PAD_MODES)}")
    constant = kwargs.pop("constant_values", 0)
    reflect_type = kwargs.pop("reflect_type", "even")
    if reflect_type != "even":
        raise _unsupported("numpy.pad", "reflect_type", reflect_type)
    for key, value in kwargs.items():
        raise _unsupported("numpy.pad", key, value)
    if np.ndim(constant) != 0:
        raise _unsupported("numpy.pad", "constant_values", constant, "one value for all sides")
    A = _tensor(array)
    _check_python_int(constant, A.dtype)  # See Note [Python integers out of bounds]
    if isinstance(constant, (_qvalue, np.ndarray)):
        constant = constant.item()
    if isinstance(pad_width, (np.ndarray, _qvalue)):
        pad_width = np.asarray(pad_width).tolist()
    return _q.pad(A, pad_width, mode, constant)


@_implements("reshape")
def _np_reshape(a: Any, /, shape: Any = None, order: str = "C", *, newshape: Any = None,
                copy: Any = None) -> Any:
    if shape is None:
        shape = newshape
    elif newshape is not None:
        raise TypeError("You cannot specify 'newshape' and 'shape' arguments at the same time.")
    if shape is None:
        raise TypeError("reshape() missing 1 required positional argument: 'shape'")
    if order != "C":
        raise _unsupported("numpy.reshape", "order", order, "isthmus reshapes in C order")
    A = _tensor(a)
    if copy is False:
        return A.view(shape if isinstance(shape, (tuple, list)) else (shape,))
    r = _q.reshape(A, shape)
    return _q.copy(r) if copy else r


@_implements("transpose", "permute_dims")
def _np_transpose(a: Any, axes: Any = None) -> Any:
    return _q.transpose(_tensor(a), axes)


def _normalize_axis(axis: Any, ndim: int) -> int:
    ax = operator.index(axis)
    if not -ndim <= ax < ndim:
        raise _AxisError(ax, ndim)
    return ax % ndim


@_implements("moveaxis")
def _np_moveaxis(a: Any, source: Any, destination: Any) -> Any:
    A = _tensor(a)
    src = [source] if np.ndim(source) == 0 else list(source)
    dst = [destination] if np.ndim(destination) == 0 else list(destination)
    src = [_normalize_axis(s, A.ndim) for s in src]
    dst = [_normalize_axis(d, A.ndim) for d in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError("repeated axis")
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of "
                         "elements")
    order = [n for n in range(A.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _q.transpose(A, order)


@_implements("swapaxes")
def _np_swapaxes(a: Any, axis1: Any, axis2: Any) -> Any:
    A = _tensor(a)
    i, j = _normalize_axis(axis1, A.ndim), _normalize_axis(axis2, A.ndim)
    order = list(range(A.ndim))
    order[i], order[j] = order[j], order[i]
    return _q.transpose(A, order)


@_implements("squeeze")
def _np_squeeze(a: Any, axis: Any = None) -> Any:
    return _q.squeeze(_tensor(a), axis)


@_implements("expand_dims")
def _np_expand_dims(a: Any, axis: Any) -> Any:
    A = _tensor(a)
    axes = [axis] if np.ndim(axis) == 0 else list(axis)
    nd = A.ndim + len(axes)
    norm = sorted(_normalize_axis(x, nd) for x in axes)
    if len(set(norm)) != len(norm):
        raise ValueError("repeated axis")
    for x in norm:
        A = _q.expand_dims(A, x)
    return A


@_implements("broadcast_to")
def _np_broadcast_to(array: Any, shape: Any, subok: bool = False) -> Any:
    return _q.broadcast_to(_tensor(array), shape)


@_implements("ravel")
def _np_ravel(a: Any, order: str = "C") -> Any:
    A = _tensor(a)
    if order not in ("C", "K", "A") or (order != "C" and not A.is_contiguous()):
        raise _unsupported("numpy.ravel", "order", order, "isthmus ravels in C order")
    return _q.ravel(A)
