"""NumPy's linear algebra functions (np.dot, np.vdot, np.inner, np.outer)."""

from __future__ import annotations

from typing import Any

from .. import _isthmus as _q
from ._keywords import _operand, _out_array, _same_dtype, _shape_of, _store, _tensor
from ._tables import _implements


def _exact_out(fname: str, out: Any, r: Any) -> Any:
    """np.dot's out=: NumPy takes only an output of exactly the result's dtype and shape."""
    o = _out_array(out, fname)
    if not _same_dtype(o.dtype, r.dtype) or tuple(o.shape) != _shape_of(r):
        raise ValueError("output array is not acceptable (must have the right datatype, number "
                         "of dimensions, and be a C-Array)")
    return _store(fname, o, r, None, "no", what="function")


@_implements("dot")
def _np_dot(a: Any, b: Any, out: Any = None) -> Any:
    r = _q.dot(_operand(a), _operand(b))
    return r if out is None else _exact_out("numpy.dot", out, r)


@_implements("vdot")
def _np_vdot(a: Any, b: Any) -> Any:
    return _q.vdot(_operand(a), _operand(b))


@_implements("inner")
def _np_inner(a: Any, b: Any) -> Any:
    return _q.inner(_operand(a), _operand(b))


@_implements("outer")
def _np_outer(a: Any, b: Any, out: Any = None) -> Any:
    A, B = _q.ravel(_tensor(a)), _q.ravel(_tensor(b))
    r = _q.multiply(_q.reshape(A, (-1, 1)), _q.reshape(B, (1, -1)))
    if out is not None:
        return _store("multiply", out, r, None, "same_kind")
    return r
