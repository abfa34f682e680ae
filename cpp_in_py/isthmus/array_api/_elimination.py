"""linalg by elimination, composed from isthmus ops: LU with partial pivoting, Cholesky and
Householder QR, for arrays on devices without LAPACK (See Note [linalg by elimination])."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _isthmus as _q

# Note [linalg by elimination]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# det, slogdet, inv, solve, cholesky and qr of CPU arrays run LAPACK through NumPy (Note [CPU
# stopgaps] in _helpers.py). Arrays on other devices (CUDA) have no LAPACK in isthmus yet, so
# these functions compose the textbook algorithms from isthmus's own ops, which run on every
# backend: one step per column, each step a handful of batched ops over the whole stack of
# matrices (O(n) launches, O(n^3) work, as LAPACK's unblocked getf2/potf2):
# - LU (getrf's algorithm): at column k the row with the largest |a_ik| (i >= k; the first on
#   ties) is swapped in by a gather of row indices, the multipliers a_ik / a_kk are stored below
#   the diagonal and the trailing block is updated by a rank-1 product. A zero pivot (the column
#   is zero below the diagonal) gives zero multipliers, so a singular matrix ends with a zero on
#   U's diagonal and det 0, as LAPACK reports it, instead of NaNs.
# - det = the permutation's sign times the product of U's diagonal; slogdet sums log|u_kk| and
#   multiplies the signs (u_kk / |u_kk| for complex), with sign 0 and logabsdet -inf when singular.
# - solve: forward then back substitution on the permuted right-hand sides, one row per step;
#   inv solves against the identity. A singular matrix raises LinAlgError (NumPy's), which
#   means one host read of U's diagonal.
# - cholesky (potf2's algorithm): column j's diagonal is sqrt(a_jj - sum_k |l_jk|^2) and the
#   entries below it (a_ij - sum_k l_ik conj(l_jk)) / l_jj; a matrix that is not positive
#   definite (a diagonal that is not positive, or NaN) raises LinAlgError.
# - qr (geqr2/org2r's algorithm): at column k a Householder reflector H = I - tau v v^H with
#   LAPACK's choice of beta = -sign(Re a_kk) |column| (so R's diagonal has LAPACK's signs, and a
#   zero column below a real diagonal gives tau = 0), applied to the trailing columns; Q is the
#   product of the reflectors applied to the identity in reverse order.
# Results equal LAPACK's up to rounding (same pivots, unblocked order of operations); the tests
# run this code on CPU arrays against NumPy, so it is checked where no GPU is.


def _on(x: Any) -> Any:
    """A device scope for creating arrays where x is."""
    return _q.device(x.device)


def _scalar_like(v: Any, like: Any, dtype: Any = None) -> Any:
    """A 0-d array of v where `like` is, of like's dtype (or `dtype`)."""
    with _on(like):
        return _q.full((), v, dtype=str(like.dtype if dtype is None else dtype))


def _real_of(x: Any) -> str:
    """The name of x's real dtype (float32 for complex64)."""
    return np.finfo(x.dtype).dtype.name


def _is_complex(x: Any) -> bool:
    return x.dtype.kind == "c"


def lu_factor(a: Any) -> tuple[Any, Any, Any]:
    """(LU, perm, sign): L (unit, below the diagonal) and U packed in one array, the row order
    (int64, (..., n)) such that a[..., perm, :] == L @ U, and the permutation's sign (±1, a's
    real dtype, (...)). a: (..., n, n), floating or complex."""
    n = a.shape[-1]
    batch = a.shape[:-2]
    m = _q.copy(a)
    real = _real_of(a)
    with _on(a):
        rows = _q.arange(n, dtype="int64")
        perm = _q.copy(_q.broadcast_to(rows, batch + (n,)))
        sign = _q.ones(batch, dtype=real)
    for k in range(n - 1):
        col = _q.abs(m[..., k:, k])
        p = _q.argmax(col, axis=-1) + k  # (...,): the pivot row
        pk = _q.reshape(p, batch + (1,))
        # the row order after swapping rows k and p: a gather of whole rows
        swap = _q.where(rows == k, pk, _q.where(rows == pk, k, rows))
        m = _q.take_along_axis(m, _q.broadcast_to(_q.reshape(swap, batch + (n, 1)),
                                                 batch + (n, n)), axis=-2)
        perm = _q.take_along_axis(perm, swap, axis=-1)
        sign = _q.where(_q.reshape(p, batch) != k, -sign, sign)
        pivot = m[..., k:k + 1, k:k + 1]  # (..., 1, 1)
        below = m[..., k + 1:, k:k + 1]
        zero = pivot == 0
        safe = _q.where(zero, _scalar_like(1, pivot), pivot)
        mult = _q.where(zero, _q.zeros_like(below), below / safe)
        m[..., k + 1:, k:k + 1] = mult
        m[..., k + 1:, k + 1:] = m[..., k + 1:, k + 1:] - mult * m[..., k:k + 1, k + 1:]
    return m, perm, sign


def _diagonal(m: Any) -> Any:
    n = m.shape[-1]
    with _on(m):
        idx = _q.reshape(_q.arange(n, dtype="int64"), (1,) * (m.ndim - 2) + (n, 1))
    idx = _q.broadcast_to(idx, m.shape[:-2] + (n, 1))
    return _q.reshape(_q.take_along_axis(m, idx, axis=-1), m.shape[:-1])


def det(a: Any) -> Any:
    n = a.shape[-1]
    if n == 0:
        with _on(a):
            return _q.ones(a.shape[:-2], dtype=str(a.dtype))
    m, _, sign = lu_factor(a)
    return _q.prod(_diagonal(m), axis=-1) * sign


def slogdet(a: Any) -> tuple[Any, Any]:
    n = a.shape[-1]
    real = _real_of(a)
    if n == 0:
        with _on(a):
            return (_q.ones(a.shape[:-2], dtype=str(a.dtype)),
                    _q.zeros(a.shape[:-2], dtype=real))
    m, _, sign = lu_factor(a)
    d = _diagonal(m)
    mag = _q.abs(d)
    zero = mag == 0
    unit = d / _q.where(zero, _scalar_like(1, mag), mag)  # d / |d|, 0 where d is 0
    s = _q.prod(unit, axis=-1) * sign
    logabs = _q.sum(_q.log(mag), axis=-1)
    return s, logabs


def _singular_check(m: Any, fn: str) -> None:
    if bool(_q.any(_diagonal(m) == 0)):
        raise np.linalg.LinAlgError(f"{fn}: the matrix is singular")


def lu_solve(m: Any, perm: Any, b: Any) -> Any:
    """X with a @ X == b from a's LU factors; b: (..., n, k), batch shapes broadcast."""
    n = m.shape[-1]
    batch = np.broadcast_shapes(m.shape[:-2], b.shape[:-2])
    k = b.shape[-1]
    m = _q.broadcast_to(m, batch + (n, n))
    perm = _q.broadcast_to(perm, batch + (n,))
    b = _q.broadcast_to(b, batch + (n, k))
    # the permuted right-hand sides
    y = _q.take_along_axis(b, _q.broadcast_to(_q.reshape(perm, batch + (n, 1)), batch + (n, k)),
                           axis=-2)
    y = _q.copy(y)
    for i in range(1, n):  # forward: L has a unit diagonal
        y[..., i:i + 1, :] = y[..., i:i + 1, :] - _q.matmul(m[..., i:i + 1, :i], y[..., :i, :])
    for i in range(n - 1, -1, -1):  # back substitution through U
        r = y[..., i:i + 1, :]
        if i + 1 < n:
            r = r - _q.matmul(m[..., i:i + 1, i + 1:], y[..., i + 1:, :])
        y[..., i:i + 1, :] = r / m[..., i:i + 1, i:i + 1]
    return y


def solve(a: Any, b: Any) -> Any:
    m, perm, _ = lu_factor(a)
    _singular_check(m, "solve")
    return lu_solve(m, perm, b)


def inv(a: Any) -> Any:
    n = a.shape[-1]
    m, perm, _ = lu_factor(a)
    _singular_check(m, "inv")
    with _on(a):
        eye = _q.eye(n, dtype=str(a.dtype))
    return lu_solve(m, perm, _q.broadcast_to(eye, a.shape))


def cholesky(a: Any) -> Any:
    """The lower Cholesky factor of each Hermitian positive-definite matrix."""
    n = a.shape[-1]
    complex_ = _is_complex(a)
    low = _q.zeros_like(a)
    for j in range(n):
        prev = low[..., j:j + 1, :j]  # (..., 1, j)
        prev_h = _q.conj(prev) if complex_ else prev
        d = a[..., j:j + 1, j:j + 1]
        if j:
            d = d - _q.matmul(prev, prev_h.mT)
        if complex_:
            d = _q.real(d)
        if bool(_q.any(~(d > 0))):  # not positive, or NaN
            raise np.linalg.LinAlgError("cholesky: the matrix is not positive definite")
        root = _q.sqrt(d)
        low[..., j:j + 1, j:j + 1] = root
        if j + 1 < n:
            col = a[..., j + 1:, j:j + 1]
            if j:
                col = col - _q.matmul(low[..., j + 1:, :j], prev_h.mT)
            low[..., j + 1:, j:j + 1] = col / root
    return low


def qr(a: Any, mode: str) -> tuple[Any, Any]:
    """(Q, R) of each (..., m, n) matrix by Householder reflections with LAPACK's conventions
    (geqrf's reflectors, so R's diagonal signs are LAPACK's; orgqr's Q), mode "reduced" (Q is
    m x k, R k x n, k = min(m, n)) or "complete" (Q m x m, R m x n)."""
    m_, n_ = a.shape[-2], a.shape[-1]
    k_ = min(m_, n_)
    batch = a.shape[:-2]
    complex_ = _is_complex(a)
    r = _q.copy(a)
    vs, taus = [], []
    for k in range(k_):
        col = r[..., k:, k]  # (..., m - k)
        alpha = col[..., 0]
        x = col[..., 1:]
        xsq = _q.sum(_q.real(x * _q.conj(x)) if complex_ else x * x, axis=-1)
        ar = _q.real(alpha) if complex_ else alpha
        ai = _q.imag(alpha) if complex_ else _q.zeros_like(alpha)
        nrm = _q.sqrt(ar * ar + ai * ai + xsq)
        trivial = (xsq == 0) & (ai == 0)
        one = _scalar_like(1, nrm)
        beta = _q.where(ar >= 0, -nrm, nrm)
        safe_beta = _q.where(trivial, one, beta)
        if complex_:
            tau = _q.where(trivial, _q.zeros_like(alpha),
                           ((safe_beta - ar) / safe_beta).astype(str(a.dtype)) -
                           (ai / safe_beta).astype(str(a.dtype)) * 1j)
        else:
            tau = _q.where(trivial, _q.zeros_like(alpha), (safe_beta - ar) / safe_beta)
        denom = _q.where(trivial, _scalar_like(1, alpha), alpha - safe_beta)
        tail = x / _q.reshape(denom, batch + (1,))
        tail = _q.where(_q.reshape(trivial, batch + (1,)), _q.zeros_like(tail), tail)
        with _on(a):
            head = _q.ones(batch + (1,), dtype=str(a.dtype))
        v = _q.concat([head, tail], axis=-1)  # (..., m - k)
        r[..., k:k + 1, k:k + 1] = _q.reshape(_q.where(trivial, alpha, beta.astype(str(a.dtype))),
                                              batch + (1, 1))
        r[..., k + 1:, k:k + 1] = _q.zeros_like(r[..., k + 1:, k:k + 1])
        if k + 1 < n_:  # apply H^H = I - conj(tau) v v^H to the trailing columns
            t = r[..., k:, k + 1:]
            vh = _q.conj(v) if complex_ else v
            w = _q.matmul(_q.reshape(vh, batch + (1, m_ - k)), t)
            ct = _q.conj(tau) if complex_ else tau
            r[..., k:, k + 1:] = t - _q.reshape(ct, batch + (1, 1)) * \
                _q.reshape(v, batch + (m_ - k, 1)) * w
        vs.append(v)
        taus.append(tau)
    cols = m_ if mode == "complete" else k_
    with _on(a):
        eye = _q.eye(m_, cols, dtype=str(a.dtype))
    qm = _q.copy(_q.broadcast_to(eye, batch + (m_, cols)))
    for k in range(k_ - 1, -1, -1):  # Q = H(0) H(1) ... H(k-1) applied to the identity
        v, tau = vs[k], taus[k]
        rows = qm[..., k:, :]
        vh = _q.conj(v) if complex_ else v
        w = _q.matmul(_q.reshape(vh, batch + (1, m_ - k)), rows)
        qm[..., k:, :] = rows - _q.reshape(tau, batch + (1, 1)) * \
            _q.reshape(v, batch + (m_ - k, 1)) * w
    rr = r if mode == "complete" else r[..., :k_, :]
    return qm, _triu(rr)


def _triu(x: Any) -> Any:
    m_, n_ = x.shape[-2], x.shape[-1]
    with _on(x):
        i = _q.reshape(_q.arange(m_, dtype="int64"), (m_, 1))
        j = _q.reshape(_q.arange(n_, dtype="int64"), (1, n_))
    return _q.where(j >= i, x, _q.zeros_like(x))
