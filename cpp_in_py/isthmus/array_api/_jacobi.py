"""Eigen- and singular value decompositions by Jacobi rotations, composed from isthmus ops, for
arrays on devices without LAPACK (See Note [linalg by Jacobi rotations])."""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import numpy as np

from .. import _isthmus as _q
from . import _elimination
from ._elimination import _diagonal, _is_complex, _on, _real_of, _scalar_like

# Note [linalg by Jacobi rotations]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# eigh, eigvalsh, svd, svdvals, pinv, matrix_rank (and matrix_norm's ord 2, -2, "nuc") of CPU
# arrays run LAPACK through NumPy. Arrays on other devices (CUDA) have no LAPACK in isthmus yet,
# and LAPACK's algorithms (reduction to tridiagonal or bidiagonal form, then QR iteration or
# divide and conquer) are long chains of small steps; Jacobi methods are made of wide batched
# steps, so these functions compose them from isthmus's own ops (the model of Note [linalg by
# elimination] in _elimination.py):
# - The 2x2 step (Golub & Van Loan's symmetric Schur decomposition, Hermitian): for
#   M = [[a, g], [conj(g), b]] (a, b real, g = |g| e^{i phi}), tau = (b - a) / (2 |g|),
#   t = sign(tau) / (|tau| + sqrt(1 + tau^2)) (sign(0) = +1), c = 1 / sqrt(1 + t^2), s = t c,
#   and U = [[c, s], [-s w, c w]] with w = e^{-i phi} (1 for real arrays, whose tau takes the
#   signed g) makes U^H M U diagonal. g == 0 gives t = 0 and w = 1: no rotation (every division
#   is guarded, so no 0/0 appears); a huge |tau| overflows tau^2 and also gives t = 0, which is
#   right to rounding.
# - Parallel ("round-robin") order: for an even n a sweep is n - 1 rounds, each of n / 2
#   disjoint pairs (p, q) (the circle method: index 0 fixed, the others rotated one place per
#   round), so every pair meets once per sweep. The schedule is made on the host once per n and
#   sent to the device once per call. In a round all pairs' rotations are computed at once and
#   applied by gathering the p and q columns (rows), mixing them and gathering concat(new_p,
#   new_q) back with the inverse permutation: a round is about 40 batched ops over the whole
#   stack of matrices whatever n is (O(n) launches and O(n^3) work per sweep). An odd n
#   gets a zero row and column (two-sided) or a zero column (one-sided): its coupling g is
#   exactly 0, so it is never rotated, and it is dropped at the end.
# - eigh (two-sided cyclic Jacobi): A is the Hermitian matrix of x's lower triangle and real
#   diagonal (as LAPACK reads it); a round rotates columns p, q of A and of V (stacked as one
#   [A; V] array, V starting at the identity), then rows p, q of A: A <- U^H A U, V <- V U.
#   The eigenvalues are A's diagonal sorted ascending (argsort), V's columns permuted alike.
# - svd (one-sided Jacobi, Hestenes): x (or x^H when wide, with U and V swapped at the end) has
#   its columns orthogonalised pairwise, the 2x2 step on their Gram matrix (a = |A_p|^2,
#   b = |A_q|^2, g = A_p^H A_q), V accumulating the rotations. The singular values are the
#   final column norms sorted descending, U's columns A's divided by them. U is then put
#   through Householder QR (_elimination.qr, "reduced" or "complete") and its columns multiplied
#   by the phases of R's diagonal: that leaves an orthonormal U as it is and orthonormalises
#   the columns of zero (or rounding-level) singular values and the full_matrices completion.
#   pinv and matrix_rank need no U: pinv = V diag(1/s) (A diag(1/s))^H over the singular values
#   above rtol * max(s).
# - Convergence, read on the host once per sweep (max over the batch): eigh's off-diagonal
#   Frobenius norm relative to A's, until <= n eps; svd's largest |A_p^H A_q| / max(|A_p| |A_q|,
#   eps |A|_F^2) (the Gram matrix by one matmul), until <= sqrt(m) eps. The floor keeps columns
#   that are rounding noise (zero singular values), whose cosines never get small, from holding
#   the sweeps up, while columns down to eps |A| are made orthogonal. Either also stops after
#   _STALL sweeps without a new minimum of a measure that falls monotonically in exact
#   arithmetic (the off-diagonal norm of A, or of the Gram matrix: each 2x2 step takes 2 |g|^2
#   off its square), so rounding level is where it stops, and after 50 sweeps. Jacobi
#   converges quadratically: 4 to 8 sweeps for the sizes the tests take. The measure is read
#   before the first sweep, so a diagonal matrix (or orthogonal columns) costs no rotation.
# - Each matrix is first scaled by the power of two that brings its largest |entry| into
#   [1, 2) (the results scaled back), so that the squares in the 2x2 steps and the measures
#   neither overflow nor underflow.
# - A matrix with a NaN or an infinity (in the part that is read) gives NaN results for that
#   matrix only, as NumPy's eigh does, rather than raising as NumPy's svd does (matrix_rank,
#   an integer, counts 0 for it): it is left out of the convergence measure, so it costs no
#   sweeps and cannot hold the others up. Empty matrices and batches give empty
#   results shaped as NumPy's (svd's full U of an m x 0 matrix: the identity).
# The tests run this code on CPU arrays against NumPy, so it is checked where no GPU is.

_MAX_SWEEPS = 50
_STALL = 2  # sweeps without a new minimum of the progress measure before giving up


@functools.lru_cache(maxsize=64)
def _schedule(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The round-robin sweep of an even n: P and Q (int64, (n - 1, n / 2), P < Q; every pair
    once) and, per round, the inverse permutation of concat(P, Q) (int64, (n - 1, n))."""
    arr = np.arange(n)
    ps, qs = [], []
    for _ in range(n - 1):
        first, last = arr[:n // 2], arr[::-1][:n // 2]
        ps.append(np.minimum(first, last))
        qs.append(np.maximum(first, last))
        arr = np.concatenate([arr[:1], arr[-1:], arr[1:-1]])
    p = np.array(ps, dtype=np.int64).reshape(n - 1, n // 2)
    q = np.array(qs, dtype=np.int64).reshape(n - 1, n // 2)
    inv = np.argsort(np.concatenate([p, q], axis=1), axis=1).astype(np.int64)
    return p, q, inv


class _Round(NamedTuple):
    """One round of the schedule on the device (int64 index arrays, h = n / 2 pairs)."""
    pq: Any  # concat(p, q): the pairs' first indices, then their second ones (2h)
    inv: Any  # the inverse permutation of pq (2h)
    ext: Any  # inv extended by the identity on the indices beyond n
    rows: Any  # concat(p, q, p) and concat(p, q, q): the entries a, b, g of the 2x2 blocks
    cols: Any


def _rounds(n: int, like: Any, extra: int = 0) -> list[_Round]:
    """The schedule of an even n on like's device, made once per call (extra: how many
    further indices, kept in place, the rows of the array to rotate have beyond n)."""
    p, q, inv = _schedule(n)
    tail = np.broadcast_to(np.arange(n, n + extra, dtype=np.int64), (n - 1, extra))
    host = (np.concatenate([p, q], axis=1), inv, np.concatenate([inv, tail], axis=1),
            np.concatenate([p, q, p], axis=1), np.concatenate([p, q, q], axis=1))
    with _on(like):
        dev = [_q.value(np.ascontiguousarray(a)) for a in host]
    return [_Round(*(d[r] for d in dev)) for r in range(n - 1)]


def _rotation(a: Any, b: Any, g: Any, complex_: bool) -> tuple[Any, Any, Any]:
    """(c, s, w) of the 2x2 step for [[a, g], [conj(g), b]] (a, b real, batched alike): U =
    [[c, s], [-s w, c w]] diagonalises it; w is None for real arrays (See Note [linalg by
    Jacobi rotations])."""
    mag = _q.abs(g) if complex_ else g
    zero = g == 0
    safe = _q.where(zero, 1, mag)
    tau = (b - a) / (2 * safe)
    sign = _q.where(tau >= 0, 1, -1).astype(str(tau.dtype))
    t = sign / (_q.abs(tau) + _q.sqrt(1 + tau * tau))
    t = _q.where(zero, 0, t)
    c = _q.rsqrt(1 + t * t)
    s = t * c
    if not complex_:
        return c, s, None
    w = _q.where(zero, 1, _q.conj(g) / safe)  # e^{-i phi}
    return c, s, w


def _mix(xp: Any, xq: Any, c: Any, s: Any, w: Any) -> tuple[Any, Any]:
    """(c xp - s w xq, s xp + c w xq): the p and q columns (rows) after a rotation."""
    if w is None:
        return c * xp - s * xq, s * xp + c * xq
    return c * xp - (s * w) * xq, s * xp + (c * w) * xq


def _halves(c: Any, s: Any, w: Any, shape: tuple[int, int]) -> tuple[Any, Any, Any]:
    batch = c.shape[:-1]
    c, s = _q.reshape(c, batch + shape), _q.reshape(s, batch + shape)
    return c, s, (None if w is None else _q.reshape(w, batch + shape))


def _rotate_columns(both: Any, inv: Any, c: Any, s: Any, w: Any) -> Any:
    """The array whose columns pq were gathered into both (..., r, 2h), with the rotated pairs
    in place (c, s, w: (..., h))."""
    h = c.shape[-1]
    c, s, w = _halves(c, s, w, (1, h))
    new_p, new_q = _mix(both[..., :, :h], both[..., :, h:], c, s, w)
    return _q.concat([new_p, new_q], axis=-1)[..., :, inv]


def _rotate_rows(m: Any, rnd: _Round, c: Any, s: Any, w: Any) -> Any:
    """m with U^H applied to its rows p, q (the rows beyond 2h kept: rnd.ext covers them); w is
    the columns' e^{-i phi}, so the rows take its conjugate."""
    h = c.shape[-1]
    c, s, w = _halves(c, s, w, (h, 1))
    if w is not None:
        w = _q.conj(w)
    both = m[..., rnd.pq, :]
    new_p, new_q = _mix(both[..., :h, :], both[..., h:, :], c, s, w)
    parts = [new_p, new_q]
    if m.shape[-2] > 2 * h:
        parts.append(m[..., 2 * h:, :])
    return _q.concat(parts, axis=-2)[..., rnd.ext, :]


def _host_max(r: Any) -> float:
    """The largest value of a batch of measures, the NaNs (non-finite matrices) left out."""
    r = _q.where(_q.isnan(r), 0, r)
    return float(_q.max(r))


class _Sweeps:
    """The convergence rule: go on while the measure is above tol (and not NaN), the progress
    measure (one that falls monotonically in exact arithmetic) made a new minimum within the
    last _STALL sweeps, and fewer than _MAX_SWEEPS sweeps ran."""

    def __init__(self, tol: float) -> None:
        self.tol, self.best, self.stall, self.count = tol, math.inf, 0, 0

    def more(self, measure: float, progress: float) -> bool:
        if not measure > self.tol or self.count >= _MAX_SWEEPS:
            return False
        if progress < self.best:
            self.best, self.stall = progress, 0
        else:
            self.stall += 1
        self.count += 1
        return self.stall < _STALL


def _balance(m: Any) -> tuple[Any, Any]:
    """(m / f, f) with f (..., 1, 1) per matrix the power of two that brings its largest |entry|
    into [1, 2) (1 for a zero or non-finite matrix), so that the squares the rotations and the
    measures take neither overflow nor underflow."""
    top = _q.max(_q.abs(m), axis=(-2, -1), keepdims=True)
    ok = _q.isfinite(top) & (top > 0)
    f = _q.exp2(_q.floor(_q.log2(_q.where(ok, top, 1))))
    return m / f.astype(str(m.dtype)), f


def _bad(m: Any) -> Any:
    """True for the matrices (..., m, n) with a NaN or an infinity."""
    return _q.any(~_q.isfinite(m), axis=(-2, -1))


def _nan_where(bad: Any, r: Any, lead: int) -> Any:
    """r with NaN in the matrices flagged bad (bad: the batch; r: batch + lead more axes)."""
    nan = _scalar_like(math.nan, r)
    return _q.where(_q.reshape(bad, bad.shape + (1,) * lead), nan, r)


def _hermitian(x: Any) -> Any:
    """The Hermitian matrices of x's lower triangles and real diagonals (as LAPACK reads x)."""
    n = x.shape[-1]
    with _on(x):
        i = _q.reshape(_q.arange(n, dtype="int64"), (n, 1))
        j = _q.reshape(_q.arange(n, dtype="int64"), (1, n))
    if _is_complex(x):
        diag = _q.real(x).astype(str(x.dtype))
        upper = _q.conj(x.mT)
    else:
        diag, upper = x, x.mT
    return _q.where(i > j, x, _q.where(i == j, diag, upper))


def _pad(m: Any, rows: int, cols: int) -> Any:
    """m with rows zero rows and cols zero columns appended."""
    if cols:
        m = _q.concat([m, _q.zeros_like(m[..., :, :cols])], axis=-1)
    if rows:
        m = _q.concat([m, _q.zeros_like(m[..., :rows, :])], axis=-2)
    return m


def _eye_like(n: int, m: Any) -> Any:
    with _on(m):
        return _q.broadcast_to(_q.eye(n, dtype=str(m.dtype)), m.shape[:-2] + (n, n))


def eigh(x: Any, vectors: bool = True) -> tuple[Any, Any]:
    """(eigenvalues ascending, eigenvectors or None) of the Hermitian matrices read from the
    lower triangles of x (..., n, n), by two-sided cyclic Jacobi."""
    n = x.shape[-1]
    batch = x.shape[:-2]
    real = _real_of(x)
    if n == 0 or 0 in batch:
        with _on(x):
            return (_q.zeros(batch + (n,), dtype=real),
                    _q.zeros(batch + (n, n), dtype=str(x.dtype)) if vectors else None)
    complex_ = _is_complex(x)
    a = _hermitian(x)
    bad = _bad(a)
    a, f = _balance(a)
    big = n + (n & 1)
    a = _pad(a, big - n, big - n)
    with _on(x):
        offdiag = ~_q.eye(big, dtype="bool")
    work = _q.concat([a, _eye_like(big, a)], axis=-2) if vectors else a
    rounds = _rounds(big, x, big if vectors else 0)
    h = big // 2

    def measure(m: Any) -> tuple[float, float]:
        sq = _q.abs(m[..., :big, :])
        sq = sq * sq
        off = _q.sum(_q.where(offdiag, sq, 0), axis=(-2, -1))
        total = _q.sum(sq, axis=(-2, -1))
        r = _host_max(_q.sqrt(off / _q.where(total == 0, 1, total)))
        return r, r  # falls monotonically: the 2x2 steps take |g|^2 off it twice each

    sweeps = _Sweeps(n * float(np.finfo(real).eps))
    while sweeps.more(*measure(work)):
        for rnd in rounds:
            ent = work[..., rnd.rows, rnd.cols]  # a, b, g of every pair
            diag = _q.real(ent[..., :2 * h]) if complex_ else ent[..., :2 * h]
            c, s, w = _rotation(diag[..., :h], diag[..., h:], ent[..., 2 * h:], complex_)
            work = _rotate_columns(work[..., :, rnd.pq], rnd.inv, c, s, w)
            work = _rotate_rows(work, rnd, c, s, w)
    d = _diagonal(work[..., :big, :])[..., :n]
    if complex_:
        d = _q.real(d)
    d = d * _q.reshape(f, batch + (1,))
    order = _q.argsort(d, axis=-1)
    vals = _nan_where(bad, _q.take_along_axis(d, order, axis=-1), 1)
    if not vectors:
        return vals, None
    v = work[..., big:big + n, :n]
    v = _q.take_along_axis(v, _q.broadcast_to(_q.reshape(order, batch + (1, n)),
                                              batch + (n, n)), axis=-1)
    return vals, _nan_where(bad, v, 2)


def _one_sided(a: Any, vectors: bool) -> tuple[Any, Any, Any, Any]:
    """(A, V, bad, f) for each a (..., m, n), m >= n: A = (a / f) V with orthogonal columns
    (their norms times f are the singular values, unsorted), V (..., n, n) unitary (None unless
    vectors), bad the matrices with a NaN or an infinity, f (..., 1) the power of two that
    _balance scaled a by. One-sided Jacobi (Hestenes)."""
    m, n = a.shape[-2], a.shape[-1]
    complex_ = _is_complex(a)
    real = _real_of(a)
    bad = _bad(a)
    a, f = _balance(a)
    big = n + (n & 1)
    eps = _scalar_like(float(np.finfo(real).eps), a, real)
    a = _pad(a, 0, big - n)
    work = _q.concat([a, _eye_like(big, a)], axis=-2) if vectors else a
    rounds = _rounds(big, a)
    h = big // 2
    with _on(a):
        offdiag = ~_q.eye(big, dtype="bool")

    def measure(w: Any) -> tuple[float, float]:
        top = w[..., :m, :]
        gram = _q.matmul(_q.conj(top.mT) if complex_ else top.mT, top)
        d = _q.real(_diagonal(gram)) if complex_ else _diagonal(gram)
        nrm = _q.sqrt(d)
        floor = _q.reshape(_q.sum(d, axis=-1) * eps, d.shape[:-1] + (1, 1))
        den = _q.maximum(_q.expand_dims(nrm, axis=-1) * _q.expand_dims(nrm, axis=-2), floor)
        mag = _q.abs(gram)
        r = _host_max(_q.where(offdiag, mag / _q.where(den == 0, 1, den), 0))
        sq = mag * mag
        total = _q.sum(sq, axis=(-2, -1))
        off = _q.sum(_q.where(offdiag, sq, 0), axis=(-2, -1))
        return r, _host_max(_q.sqrt(off / _q.where(total == 0, 1, total)))

    sweeps = _Sweeps(math.sqrt(m) * float(np.finfo(real).eps))
    while sweeps.more(*measure(work)):
        for rnd in rounds:
            both = work[..., :, rnd.pq]
            xp, xq = both[..., :m, :h], both[..., :m, h:]
            if complex_:
                na = _q.sum(_q.real(xp * _q.conj(xp)), axis=-2)
                nb = _q.sum(_q.real(xq * _q.conj(xq)), axis=-2)
                g = _q.sum(_q.conj(xp) * xq, axis=-2)
            else:
                na, nb, g = _q.sum(xp * xp, axis=-2), _q.sum(xq * xq, axis=-2), \
                    _q.sum(xp * xq, axis=-2)
            c, s, w = _rotation(na, nb, g, complex_)
            work = _rotate_columns(both, rnd.inv, c, s, w)
    cols = work[..., :m, :n]
    v = work[..., m:m + n, :n] if vectors else None
    return cols, v, bad, _q.reshape(f, f.shape[:-1])


def _norms(cols: Any) -> Any:
    """The Euclidean norms of the columns of cols (..., m, n), in its real dtype."""
    mag = _q.abs(cols)
    return _q.sqrt(_q.sum(mag * mag, axis=-2))


def _tall(x: Any) -> tuple[Any, bool]:
    """x, or its conjugate transpose when x is wide (and whether it was)."""
    if x.shape[-2] >= x.shape[-1]:
        return x, False
    return (_q.conj(x.mT) if _is_complex(x) else x.mT), True


def svdvals(x: Any) -> Any:
    """The singular values (descending) of each x (..., m, n), by one-sided Jacobi."""
    m, n = x.shape[-2], x.shape[-1]
    batch = x.shape[:-2]
    k = min(m, n)
    if k == 0 or 0 in batch:
        with _on(x):
            return _q.zeros(batch + (k,), dtype=_real_of(x))
    a, _ = _tall(x)
    cols, _, bad, f = _one_sided(a, False)
    s = _q.sort(_norms(cols) * f, axis=-1, descending=True)
    return _nan_where(bad, s, 1)


def _orthonormal(u: Any, mode: str) -> Any:
    """u (..., m, k), orthonormal where its columns are nonzero and not rounding noise, as an
    orthonormal basis: Householder QR's Q ("reduced": m x k, "complete": m x m) with its first
    k columns multiplied by the phases of R's diagonal, so that u's good columns stay."""
    k = u.shape[-1]
    qm, r = _elimination.qr(u, mode)
    rd = _diagonal(r[..., :k, :k])
    mag = _q.abs(rd)
    zero = mag == 0
    phase = _q.where(zero, 1, rd / _q.where(zero, 1, mag).astype(str(rd.dtype)))
    first = qm[..., :, :k] * _q.expand_dims(phase, axis=-2)
    if qm.shape[-1] == k:
        return first
    return _q.concat([first, qm[..., :, k:]], axis=-1)


def svd(x: Any, full_matrices: bool) -> tuple[Any, Any, Any]:
    """(U, S, Vh) of each x (..., m, n) with NumPy's shapes: U (..., m, m) or (..., m, k),
    S (..., k) descending, Vh (..., n, n) or (..., k, n), k = min(m, n). One-sided Jacobi."""
    m, n = x.shape[-2], x.shape[-1]
    batch = x.shape[:-2]
    k = min(m, n)
    dt = str(x.dtype)
    if k == 0 or 0 in batch:
        with _on(x):
            if full_matrices:
                u = _q.copy(_q.broadcast_to(_q.eye(m, dtype=dt), batch + (m, m)))
                vh = _q.copy(_q.broadcast_to(_q.eye(n, dtype=dt), batch + (n, n)))
            else:
                u, vh = _q.zeros(batch + (m, k), dtype=dt), _q.zeros(batch + (k, n), dtype=dt)
            return u, _q.zeros(batch + (k,), dtype=_real_of(x)), vh
    a, wide = _tall(x)
    cols, v, bad, f = _one_sided(a, True)
    s = _norms(cols)  # of a / f
    order = _q.argsort(s, axis=-1, descending=True)
    s = _q.take_along_axis(s, order, axis=-1)
    rows = a.shape[-2]  # the tall side: max(m, n)
    cols = _q.take_along_axis(cols, _q.broadcast_to(_q.reshape(order, batch + (1, k)),
                                                    batch + (rows, k)), axis=-1)
    v = _q.take_along_axis(v, _q.broadcast_to(_q.reshape(order, batch + (1, k)),
                                              batch + (k, k)), axis=-1)
    zero = s == 0
    u = cols / _q.expand_dims(_q.where(zero, 1, s), axis=-2).astype(dt)
    u = _q.where(_q.expand_dims(zero, axis=-2), 0, u)
    u = _orthonormal(u, "complete" if full_matrices else "reduced")
    if wide:  # x = a^H = V S U^H
        u, v = v, u
    vh = _q.conj(v.mT) if _is_complex(x) else v.mT
    return _nan_where(bad, u, 2), _nan_where(bad, s * f, 1), _nan_where(bad, vh, 2)


def _cutoff(s_max: Any, rtol: Any, m: int, n: int, like: Any) -> Any:
    """rtol * the largest singular value per matrix (rtol: None for max(m, n) eps, a Python
    number or an array broadcasting against the batch)."""
    real = str(s_max.dtype)
    if rtol is None:
        rtol = max(m, n) * float(np.finfo(real).eps)
    if isinstance(rtol, _q.qvalue):
        r = rtol.astype(real)
        if r.device != like.device:
            r = _q.to(r, like.device, copy=True)
    else:
        try:
            r = _scalar_like(float(rtol), like, real)
        except (TypeError, ValueError):
            raise TypeError(f"rtol must be None, a real number or an array, got {rtol!r}") from None
    return r * s_max


def pinv(x: Any, rtol: Any = None) -> Any:
    """The Moore-Penrose pseudo-inverse of each x (..., m, n): V diag(1/s) U^H over the singular
    values s > rtol * max(s) (rtol None: max(m, n) eps), by one-sided Jacobi."""
    m, n = x.shape[-2], x.shape[-1]
    batch = x.shape[:-2]
    if min(m, n) == 0 or 0 in batch:
        with _on(x):
            return _q.zeros(batch + (n, m), dtype=str(x.dtype))
    a, wide = _tall(x)
    cols, v, bad, f = _one_sided(a, True)
    s = _norms(cols)  # of a / f: pinv(a) = pinv(a / f) / f
    cut = _cutoff(_q.max(s, axis=-1), rtol, m, n, x)
    large = s > _q.expand_dims(cut, axis=-1)
    inv_s = _q.where(large, 1 / _q.where(large, s, 1), 0)
    inv_s = _q.expand_dims(inv_s, axis=-2).astype(str(x.dtype))
    scaled = cols * inv_s  # U's columns, 0 for the dropped ones
    uh = _q.conj(scaled.mT) if _is_complex(x) else scaled.mT
    r = _q.matmul(v * inv_s, uh) / _q.expand_dims(f, axis=-1).astype(str(x.dtype))
    if wide:  # pinv(x) = pinv(a)^H
        r = _q.conj(r.mT) if _is_complex(x) else r.mT
    return _nan_where(bad, r, 2)


def matrix_rank(x: Any, rtol: Any = None) -> Any:
    """The number of singular values above rtol * the largest of each x (..., m, n), int64."""
    m, n = x.shape[-2], x.shape[-1]
    batch = x.shape[:-2]
    if min(m, n) == 0 or 0 in batch:
        with _on(x):
            return _q.zeros(batch, dtype="int64")
    s = svdvals(x)
    cut = _cutoff(s[..., 0], rtol, m, n, x)
    return _q.sum((s > _q.expand_dims(cut, axis=-1)).astype("int64"), axis=-1)
