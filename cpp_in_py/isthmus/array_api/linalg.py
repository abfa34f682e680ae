"""The array API standard's linalg extension for isthmus: composed functions, LAPACK through NumPy
for CPU arrays (elimination and Jacobi rotations composed from isthmus ops elsewhere)."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from .. import _isthmus as _q
from . import _elimination, _helpers, _jacobi
from ._linalg import matmul, matrix_transpose, tensordot, vecdot

__all__ = ["cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul",
           "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr",
           "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm"]

_t = _helpers.tensor


class EighResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


class QRResult(NamedTuple):
    Q: Any
    R: Any


class SlogdetResult(NamedTuple):
    sign: Any
    logabsdet: Any


class SVDResult(NamedTuple):
    U: Any
    S: Any
    Vh: Any


def _float_matrix(x: Any, fname: str) -> Any:
    x = _t(x)
    if x.ndim < 2:
        raise ValueError(f"{fname} needs an array of at least 2 dimensions")
    if x.dtype.kind not in "fc":
        raise TypeError(f"{fname} needs a floating-point array, got {x.dtype}")
    return x


def _square(x: Any, fname: str) -> Any:
    x = _float_matrix(x, fname)
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{fname} needs square matrices, got shape {x.shape}")
    return x


# ---- composed from isthmus ops (any device) ----

def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """The cross product of 3-element vectors along axis (the other axes broadcast)."""
    a, b = _t(x1), _t(x2)
    if a.shape[axis] != 3 or b.shape[axis] != 3:
        raise ValueError("cross needs vectors of 3 elements along axis")
    if axis >= 0:
        raise ValueError("cross: axis must be negative (counted from the end)")

    def comp(v: Any, i: int) -> Any:
        key = [slice(None)] * v.ndim
        key[v.ndim + axis] = slice(i, i + 1)
        return v[tuple(key)]
    a0, a1, a2 = (comp(a, i) for i in range(3))
    b0, b1, b2 = (comp(b, i) for i in range(3))
    return _q.concatenate([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0],
                          axis=axis)


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """The offset-th diagonal of each matrix (the last two axes), as a new array."""
    x = _t(x)
    if x.ndim < 2:
        raise ValueError("diagonal needs an array of at least 2 dimensions")
    m, n = x.shape[-2], x.shape[-1]
    start_r, start_c = (0, offset) if offset >= 0 else (-offset, 0)
    k = max(0, min(m - start_r, n - start_c))
    with _helpers.on_device(x.device):
        rows = _q.arange(start_r, start_r + k, 1, dtype="int64") if k else \
            _q.zeros((0,), dtype="int64")
        cols = rows + (start_c - start_r)
    if k == 0:
        return _q.zeros(x.shape[:-2] + (0,), dtype=x.dtype)
    return x[(Ellipsis, rows, cols)]


def outer(x1: Any, x2: Any, /) -> Any:
    """The outer product of two 1-d arrays."""
    a, b = _t(x1), _t(x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError("outer needs two 1-d arrays")
    return _q.reshape(a, (-1, 1)) * _q.reshape(b, (1, -1))


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """The sum of the offset-th diagonal of each matrix (integers in int64 unless dtype says)."""
    from ._statistical import sum as _sum
    return _sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False,
                ord: Any = 2) -> Any:  # noqa: A002
    """The ord-norm of vectors along axis (None: all elements as one vector)."""
    from ._statistical import keep_dims
    x = _t(x)
    if x.dtype.kind not in "fc":
        raise TypeError(f"vector_norm needs a floating-point array, got {x.dtype}")
    axes = _helpers.axis_tuple(axis, x.ndim, "vector_norm")
    a = _q.abs(x)
    if x.ndim == 0 or not axes:
        r = a if ord != 0 else (a != 0).astype(a.dtype)
        return _helpers.out(r)
    if ord == math.inf:
        r = _q.max(a, axis=axes) if a.numel() else _q.zeros((), dtype=a.dtype)
    elif ord == -math.inf:
        r = _q.min(a, axis=axes)
    elif ord == 0:
        r = _q.sum((a != 0).astype(a.dtype), axis=axes)
    elif ord == 1:
        r = _q.sum(a, axis=axes)
    elif ord == 2:
        r = _q.sqrt(_q.sum(a * a, axis=axes))
    else:
        p = _q.full((), float(ord), dtype=a.dtype)
        r = _q.sum(a ** p, axis=axes) ** (1 / p)
    return keep_dims(r, x, axes, keepdims, "vector_norm")


def matrix_power(x: Any, n: int, /) -> Any:
    """x to the integer power n by repeated squaring (negative n: of inv(x))."""
    x = _t(x)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError("matrix_power needs square matrices")
    n = int(n)
    if n < 0:
        x, n = inv(x), -n
    m = x.shape[-1]
    with _helpers.on_device(x.device):
        result = _q.broadcast_to(_q.eye(m, m, 0, dtype=x.dtype), x.shape)
    result = _q.copy(result)
    base = x
    while n:
        if n & 1:
            result = _q.matmul(result, base)
        n >>= 1
        if n:
            base = _q.matmul(base, base)
    return result


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:  # noqa: A002
    """The ord-norm of each matrix: "fro", 1, -1, inf, -inf composed; 2, -2 and "nuc" through
    the singular values (svdvals: LAPACK on the CPU, Jacobi rotations elsewhere)."""
    x = _float_matrix(x, "matrix_norm")
    a = _q.abs(x)
    if ord == "fro":
        r = _q.sqrt(_q.sum(a * a, axis=(-2, -1)))
    elif ord in (1, -1):
        s = _q.sum(a, axis=-2)
        r = _q.max(s, axis=-1) if ord == 1 else _q.min(s, axis=-1)
    elif ord in (math.inf, -math.inf):
        s = _q.sum(a, axis=-1)
        r = _q.max(s, axis=-1) if ord > 0 else _q.min(s, axis=-1)
    elif ord in (2, -2, "nuc"):
        s = svdvals(x)
        r = _q.sum(s, axis=-1) if ord == "nuc" else (
            _q.max(s, axis=-1) if ord == 2 else _q.min(s, axis=-1))
    else:
        raise ValueError(f"matrix_norm: unknown ord {ord!r}")
    r = _helpers.out(r)
    if keepdims:
        r = _q.reshape(r, x.shape[:-2] + (1, 1))
    return r


# ---- LAPACK through NumPy for CPU arrays (Note [CPU stopgaps] in _helpers.py), composed from
# isthmus ops elsewhere (Note [linalg by elimination], Note [linalg by Jacobi rotations]) ----

def _np(label: str, fn: Any, *xs: Any) -> Any:
    hs = _helpers.host(f"linalg.{label}", *xs)
    return fn(*hs)


def _back(a: Any, dtype: Any) -> Any:
    return _helpers.from_host(np.asarray(a).astype(dtype, copy=False))


def _off_cpu(*xs: Any) -> bool:
    """True when an array is on another device than the CPU: LAPACK through NumPy serves CPU
    arrays, elimination and Jacobi rotations composed from isthmus ops the others (Note [linalg
    by elimination] in _elimination.py, Note [linalg by Jacobi rotations] in _jacobi.py)."""
    return any(_t(x).device != "cpu" for x in xs)


def _rtol(rtol: Any) -> Any:
    """pinv's and matrix_rank's rtol for the composed route: None, a Python number, or an array
    (a tensor)."""
    return _t(rtol) if isinstance(rtol, _q.qvalue) else rtol


def cholesky(x: Any, /, *, upper: bool = False) -> Any:
    """The Cholesky factor of each symmetric (Hermitian) positive-definite matrix."""
    x = _square(x, "cholesky")
    if _off_cpu(x):
        with _q.device(x.device):  # every step there (rule 0 of the scheduling rule)
            low = _elimination.cholesky(x)
            return _q.conj(low.mT) if upper else low
    r = _np("cholesky", np.linalg.cholesky, x)
    if upper:
        r = np.conj(np.swapaxes(r, -1, -2))
    return _back(r, x.dtype)


def det(x: Any, /) -> Any:
    """The determinant of each square matrix."""
    x = _square(x, "det")
    if _off_cpu(x):
        with _q.device(x.device):
            return _helpers.out(_elimination.det(x))
    return _back(_np("det", np.linalg.det, x), x.dtype)


def eigh(x: Any, /) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors of each symmetric (Hermitian) matrix, read from
    its lower triangle (off the CPU: two-sided Jacobi, Note [linalg by Jacobi rotations])."""
    x = _square(x, "eigh")
    if _off_cpu(x):
        with _q.device(x.device):
            return EighResult(*_jacobi.eigh(x))
    w, v = _np("eigh", np.linalg.eigh, x)
    return EighResult(_back(w, np.finfo(x.dtype).dtype), _back(v, x.dtype))


def eigvalsh(x: Any, /) -> Any:
    """The eigenvalues (ascending) of each symmetric (Hermitian) matrix, read from its lower
    triangle (off the CPU: two-sided Jacobi, Note [linalg by Jacobi rotations])."""
    x = _square(x, "eigvalsh")
    if _off_cpu(x):
        with _q.device(x.device):
            return _jacobi.eigh(x, vectors=False)[0]
    return _back(_np("eigvalsh", np.linalg.eigvalsh, x), np.finfo(x.dtype).dtype)


def inv(x: Any, /) -> Any:
    """The inverse of each square matrix."""
    x = _square(x, "inv")
    if _off_cpu(x):
        with _q.device(x.device):
            return _elimination.inv(x)
    return _back(_np("inv", np.linalg.inv, x), x.dtype)


def matrix_rank(x: Any, /, *, rtol: Any = None) -> Any:
    """The number of singular values above rtol * the largest (int64; rtol None: max(m, n) eps;
    off the CPU: one-sided Jacobi, Note [linalg by Jacobi rotations])."""
    x = _float_matrix(x, "matrix_rank")
    if _off_cpu(x):
        with _q.device(x.device):
            return _jacobi.matrix_rank(x, _rtol(rtol))

    def rank(a: np.ndarray) -> np.ndarray:
        s = np.linalg.svd(a, compute_uv=False)
        tol = rtol if rtol is None or np.isscalar(rtol) else np.asarray(rtol)[..., None]
        if tol is None:
            tol = max(a.shape[-2:]) * np.finfo(a.dtype).eps
        big = s.max(axis=-1, keepdims=True) if s.shape[-1] else np.zeros(s.shape[:-1] + (1,))
        return np.count_nonzero(s > tol * big, axis=-1)
    if isinstance(rtol, _q.qvalue):
        rtol = _helpers.host("linalg.matrix_rank", rtol)[0]
    return _back(_np("matrix_rank", rank, x), np.int64)


def pinv(x: Any, /, *, rtol: Any = None) -> Any:
    """The Moore-Penrose pseudo-inverse of each matrix, dropping the singular values up to rtol *
    the largest (rtol None: max(m, n) eps; off the CPU: one-sided Jacobi, Note [linalg by Jacobi
    rotations])."""
    x = _float_matrix(x, "pinv")
    if _off_cpu(x):
        with _q.device(x.device):
            return _jacobi.pinv(x, _rtol(rtol))
    if isinstance(rtol, _q.qvalue):
        rtol = _helpers.host("linalg.pinv", rtol)[0]
    return _back(_np("pinv", lambda a: np.linalg.pinv(a, rtol=rtol), x), x.dtype)


def qr(x: Any, /, *, mode: str = "reduced") -> QRResult:
    """The QR factorisation of each matrix ("reduced" or "complete")."""
    x = _float_matrix(x, "qr")
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr: mode must be 'reduced' or 'complete', got {mode!r}")
    if _off_cpu(x):
        with _q.device(x.device):
            return QRResult(*_elimination.qr(x, mode))
    q_, r_ = _np("qr", lambda a: np.linalg.qr(a, mode=mode), x)
    return QRResult(_back(q_, x.dtype), _back(r_, x.dtype))


def slogdet(x: Any, /) -> SlogdetResult:
    """The sign and the log of the absolute determinant of each square matrix."""
    x = _square(x, "slogdet")
    if _off_cpu(x):
        with _q.device(x.device):
            sign, logabs = _elimination.slogdet(x)
            return SlogdetResult(_helpers.out(sign), _helpers.out(logabs))
    s, ld = _np("slogdet", np.linalg.slogdet, x)
    return SlogdetResult(_back(s, x.dtype), _back(ld, np.finfo(x.dtype).dtype))


def solve(x1: Any, x2: Any, /) -> Any:
    """The solution X of x1 @ X = x2 (x2 a vector when 1-d)."""
    a = _square(x1, "solve")
    b = _t(x2)
    dt = np.result_type(a.dtype, b.dtype)
    if _off_cpu(a, b):
        with _q.device(a.device if a.device != "cpu" else b.device):
            a, b = a.astype(dt.name), b.astype(dt.name)
            if b.ndim == 1:
                return _q.reshape(_elimination.solve(a, _q.reshape(b, b.shape + (1,))),
                                  a.shape[:-2] + b.shape)
            return _elimination.solve(a, b)

    def run(ha: np.ndarray, hb: np.ndarray) -> np.ndarray:
        if hb.ndim == 1:
            return np.linalg.solve(ha, hb[..., None])[..., 0]
        return np.linalg.solve(ha, hb)
    return _back(_np("solve", run, a, b), dt)


def svd(x: Any, /, *, full_matrices: bool = True) -> SVDResult:
    """The singular value decomposition of each matrix (off the CPU: one-sided Jacobi, Note
    [linalg by Jacobi rotations])."""
    x = _float_matrix(x, "svd")
    if _off_cpu(x):
        with _q.device(x.device):
            return SVDResult(*_jacobi.svd(x, full_matrices))
    u, s, vh = _np("svd", lambda a: np.linalg.svd(a, full_matrices=full_matrices), x)
    return SVDResult(_back(u, x.dtype), _back(s, np.finfo(x.dtype).dtype), _back(vh, x.dtype))


def svdvals(x: Any, /) -> Any:
    """The singular values of each matrix (descending; off the CPU: one-sided Jacobi, Note
    [linalg by Jacobi rotations])."""
    x = _float_matrix(x, "svdvals")
    if _off_cpu(x):
        with _q.device(x.device):
            return _jacobi.svdvals(x)
    return _back(_np("svdvals", lambda a: np.linalg.svd(a, compute_uv=False), x),
                 np.finfo(x.dtype).dtype)
