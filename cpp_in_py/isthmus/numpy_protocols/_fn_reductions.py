"""NumPy's reductions and scans as functions (np.sum, np.mean, np.var, np.argmax, np.cumsum)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _isthmus as _q
from ._keywords import (_MISSING, _astype, _dtype_arg, _given, _kind, _mask, _opt, _same_dtype,
                        _shape_of, _store, _tensor, _unsupported)
from ._reductions import _reduction, _scalar_as, _scan
from ._tables import _implements


@_implements("sum")
def _np_sum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: Any = _MISSING, initial: Any = _MISSING, where: Any = _MISSING) -> Any:
    return _reduction("sum", "numpy.sum", a, axis, dtype, out, keepdims,
                      _opt(initial, _MISSING), _opt(where, True))


@_implements("prod")
def _np_prod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
             keepdims: Any = _MISSING, initial: Any = _MISSING, where: Any = _MISSING) -> Any:
    return _reduction("prod", "numpy.prod", a, axis, dtype, out, keepdims,
                      _opt(initial, _MISSING), _opt(where, True))


def _minmax(qname: str, fname: str) -> Callable[..., Any]:
    def impl(a: Any, axis: Any = None, out: Any = None, keepdims: Any = _MISSING,
             initial: Any = _MISSING, where: Any = _MISSING) -> Any:
        return _reduction(qname, fname, a, axis, None, out, keepdims,
                          _opt(initial, _MISSING), _opt(where, True))

    impl.__name__ = f"_np_{qname}"
    return impl


_implements("max", "amax")(_minmax("max", "numpy.max"))
_implements("min", "amin")(_minmax("min", "numpy.min"))


def _logical(qname: str, fname: str) -> Callable[..., Any]:
    def impl(a: Any, axis: Any = None, out: Any = None, keepdims: Any = _MISSING, *,
             where: Any = _MISSING) -> Any:
        return _reduction(qname, fname, a, axis, None, out, keepdims, _MISSING,
                          _opt(where, True))

    impl.__name__ = f"_np_{qname}"
    return impl


_implements("any")(_logical("any", "numpy.any"))
_implements("all")(_logical("all", "numpy.all"))


def _mean_dtype(dt: Any) -> Any:
    """The dtype of a mean: inexact dtypes keep theirs, the others give float64."""
    return dt if _kind(dt) in "fc" else np.dtype(np.float64)


def _real_dtype(dt: Any) -> Any:
    if _kind(dt) == "c":
        return np.dtype(np.float32) if _same_dtype(dt, "complex64") else np.dtype(np.float64)
    return _mean_dtype(dt)


def _masked_count(mask: Any, shape: tuple[int, ...], axis: Any, keepdims: bool) -> Any:
    return _q.sum(_q.broadcast_to(mask, shape), axis, keepdims)


def _masked_mean(A: Any, mask: Any, axis: Any, keepdims: bool) -> Any:
    s = _q.sum(_q.where(mask, A, _scalar_as(0, A.dtype)), axis, keepdims)
    n = _masked_count(mask, tuple(A.shape), axis, keepdims)
    return _astype(s / n, _mean_dtype(A.dtype))


def _check_mask_shape(fname: str, mask: Any, A: Any) -> None:
    if np.broadcast_shapes(_shape_of(mask), tuple(A.shape)) != tuple(A.shape):
        raise ValueError(
            f"{fname}: where= of shape {_shape_of(mask)} does not broadcast to the operand's "
            f"shape {tuple(A.shape)}"
        )


@_implements("mean")
def _np_mean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
             keepdims: Any = _MISSING, *, where: Any = _MISSING) -> Any:
    A = _tensor(a)
    keep = bool(_opt(keepdims, False))
    if dtype is not None:
        dtype = _dtype_arg(dtype, "numpy.mean")
        A = _astype(A, dtype)
    mask = _mask(_opt(where, True), "numpy.mean")
    if mask is None:
        r = _q.mean(A, axis, keep)
    else:
        _check_mask_shape("numpy.mean", mask, A)
        r = _masked_mean(A, mask, axis, keep)
    if dtype is not None:
        r = _astype(r, dtype)
    if out is not None:
        return _store("numpy.mean", out, r, None, "unsafe", what="function")
    return r


def _variance(fname: str, a: Any, axis: Any, dtype: Any, out: Any, ddof: Any, keepdims: Any,
              where: Any, mean: Any, correction: Any, root: bool) -> Any:
    if _given(mean):
        raise _unsupported(fname, "mean", "<array>", "isthmus computes the mean itself")
    if _given(correction):
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    A = _tensor(a)
    keep = bool(_opt(keepdims, False))
    if dtype is not None:
        dtype = _dtype_arg(dtype, fname)
        A = _astype(A, dtype)
    mask = _mask(_opt(where, True), fname)
    if mask is None:
        r = (_q.std if root else _q.var)(A, axis, keep, ddof)
    else:
        _check_mask_shape(fname, mask, A)
        m = _masked_mean(A, mask, axis, True)
        d = _q.abs(A - m) if _kind(A.dtype) == "c" else A - m
        sq = _q.square(d)
        sq = _q.where(mask, sq, _scalar_as(0, sq.dtype))
        n = _masked_count(mask, tuple(A.shape), axis, keep)
        r = _astype(_q.sum(sq, axis, keep) / (n - ddof), _real_dtype(A.dtype))
        if root:
            r = _q.sqrt(r)
    if dtype is not None and _kind(dtype) != "c":
        r = _astype(r, dtype)
    if out is not None:
        return _store(fname, out, r, None, "unsafe", what="function")
    return r


@_implements("var")
def _np_var(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
            keepdims: Any = _MISSING, *, where: Any = _MISSING, mean: Any = _MISSING,
            correction: Any = _MISSING) -> Any:
    return _variance("numpy.var", a, axis, dtype, out, ddof, keepdims, where, mean, correction,
                     False)


@_implements("std")
def _np_std(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
            keepdims: Any = _MISSING, *, where: Any = _MISSING, mean: Any = _MISSING,
            correction: Any = _MISSING) -> Any:
    return _variance("numpy.std", a, axis, dtype, out, ddof, keepdims, where, mean, correction,
                     True)


def _argext(qname: str) -> Callable[..., Any]:
    def impl(a: Any, axis: Any = None, out: Any = None, *, keepdims: Any = _MISSING) -> Any:
        r = getattr(_q, qname)(_tensor(a), axis, bool(_opt(keepdims, False)))
        if out is not None:
            return _store(f"numpy.{qname}", out, r, None, "same_kind", what="function")
        return r

    impl.__name__ = f"_np_{qname}"
    return impl


_implements("argmin")(_argext("argmin"))
_implements("argmax")(_argext("argmax"))


@_implements("cumsum")
def _np_cumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    return _scan("cumsum", "numpy.cumsum", a, axis, dtype, out)


@_implements("cumprod")
def _np_cumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    return _scan("cumprod", "numpy.cumprod", a, axis, dtype, out)
