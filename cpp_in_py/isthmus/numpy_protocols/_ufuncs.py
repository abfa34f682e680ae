"""qvalue.__array_ufunc__ (NEP 13): a ufunc's __call__, and the dispatch of its methods."""

from __future__ import annotations

import builtins
from typing import Any, Callable

import numpy as np

from .. import _isthmus as _q
from ._fallback import _fallback
from ._foreign import _foreign
from ._keywords import (_astype, _check_casting_name, _check_python_int, _dtype_arg, _kind,
                        _mask, _operand, _single_out, _store, _unsupported)
from ._reductions import _ufunc_accumulate, _ufunc_reduce
from ._tables import HANDLED_ACCUMULATIONS, HANDLED_REDUCTIONS, HANDLED_UFUNCS

_qvalue = _q.qvalue


def _weak_type(x: Any) -> Any:
    """An operand's entry for ufunc.resolve_dtypes (Python types for weak scalars)."""
    if isinstance(x, _qvalue):
        dt = x.dtype
        if x.kind == "scalar":  # isthmus's scalars are weak, as Python numbers
            kind = _kind(dt)
            return np.dtype(bool) if kind == "b" else {"i": int, "u": int, "f": float}.get(
                kind, complex)
        if not isinstance(dt, np.dtype):
            raise TypeError(
                f"dtype= and casting= need NumPy dtypes, and {dt} is not one; convert with "
                "A.astype('float32') first"
            )
        return dt
    if isinstance(x, (np.generic, np.ndarray)):
        return x.dtype
    if isinstance(x, bool):
        return np.dtype(bool)
    for t in (int, float, complex):
        if isinstance(x, t):
            return t
    return np.asarray(x).dtype


def _numpy_loop(ufunc: np.ufunc, ops: list[Any], dtype: Any, casting: str) -> tuple[Any, ...]:
    """NumPy's loop dtypes for these operands, dtype= and casting (raising NumPy's errors)."""
    dts = tuple(_weak_type(x) for x in ops) + (None,) * ufunc.nout
    if dtype is None:
        return tuple(ufunc.resolve_dtypes(dts, casting=casting))
    if not isinstance(dtype, np.dtype):
        raise TypeError(
            f"{ufunc.__name__}: dtype={dtype!r} is not a NumPy dtype; cast the operands "
            "with .astype() instead"
        )
    sig = (None,) * ufunc.nin + (dtype,) * ufunc.nout
    return tuple(ufunc.resolve_dtypes(dts, signature=sig, casting=casting))


def _is_default_matmul_axes(axes: Any) -> bool:
    """axes= of matmul that says what matmul does anyway (the last two axes of each)."""
    if axes is None:
        return False
    try:
        return [tuple(a) for a in axes] == [(-2, -1)] * 3
    except TypeError:
        return False


def _ufunc_call(ufunc: np.ufunc, fn: Callable[..., Any], inputs: tuple[Any, ...],
                kwargs: dict[str, Any]) -> Any:
    name = ufunc.__name__
    out = _single_out(kwargs.pop("out", None), name)
    where = kwargs.pop("where", True)
    casting = kwargs.pop("casting", "same_kind")
    dtype = kwargs.pop("dtype", None)
    order = kwargs.pop("order", "K")
    kwargs.pop("subok", None)  # our results are qvalues either way
    if ufunc is np.matmul and _is_default_matmul_axes(kwargs.get("axes")):
        del kwargs["axes"]  # ndarray's @= passes the default axes explicitly
    for key, value in kwargs.items():
        if value is not None:  # signature=, axes=, axis=, keepdims= (gufuncs)
            raise _unsupported(f"numpy.{name}", key, value)
    if order not in ("K", "A", "C", None):
        raise _unsupported(f"numpy.{name}", "order", order, "results are in C or K order")
    _check_casting_name(casting)
    if dtype is not None:
        dtype = _dtype_arg(dtype, f"numpy.{name}")
    ops = [_operand(x) for x in inputs]
    mask = _mask(where, f"numpy.{name}")
    loop = None
    if dtype is not None or casting != "same_kind":  # NumPy's own checks and messages
        loop = _numpy_loop(ufunc, ops, dtype, casting)
        for x, d in zip(ops, loop):  # See Note [Python integers out of bounds]
            _check_python_int(x, d)
    if dtype is not None:
        ops = [_astype(x, d) for x, d in zip(ops, loop)]
    r = fn(*ops)
    if dtype is not None:
        r = _astype(r, loop[-1])
    if out is None:
        if mask is not None:
            r = _q.where(mask, r, _q.zeros_like(r))
        return r
    return _store(name, out, r, mask, casting)


# Operand types the module functions take exactly as _operand would pass them (no foreign
# overrides, no lists to read): a ufunc call with only these and no keywords goes straight in.
_PLAIN = frozenset(
    [_qvalue, np.ndarray, bool, int, float, complex]
    + [t for t in np.sctypeDict.values() if issubclass(t, np.number) or t is np.bool_]
)


def array_ufunc(self: Any, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
    """qvalue.__array_ufunc__ (NEP 13): NumPy ufuncs on qvalues compute in isthmus.

    See Note [NumPy protocols] in isthmus/numpy_protocols/__init__.py and docs/numpy-protocols.md.
    """
    if method == "__call__" and not kwargs:  # the common case, as cheap as it can be
        fn = HANDLED_UFUNCS.get(ufunc)
        if fn is not None and builtins.all(type(x) in _PLAIN for x in inputs):
            return fn(*inputs)
    outs = kwargs.get("out") or ()
    if builtins.any(_foreign(x) for x in inputs + tuple(outs)):
        return NotImplemented
    if method == "__call__":
        fn = HANDLED_UFUNCS.get(ufunc)
        if fn is not None:
            return _ufunc_call(ufunc, fn, inputs, dict(kwargs))
    elif method == "reduce" and ufunc in HANDLED_REDUCTIONS:
        return _ufunc_reduce(ufunc, HANDLED_REDUCTIONS[ufunc], inputs, dict(kwargs))
    elif method == "accumulate" and ufunc in HANDLED_ACCUMULATIONS:
        return _ufunc_accumulate(ufunc, HANDLED_ACCUMULATIONS[ufunc], inputs, dict(kwargs))
    label = f"numpy.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
    fn_np = ufunc if method == "__call__" else getattr(ufunc, method)
    return _fallback(fn_np, label, inputs, kwargs)
