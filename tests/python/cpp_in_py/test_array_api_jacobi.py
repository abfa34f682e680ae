# linalg by Jacobi rotations (Note [linalg by Jacobi rotations]): eigh, eigvalsh, svd, svdvals,
# pinv and matrix_rank composed from isthmus ops, the code CUDA arrays run, checked here on CPU
# arrays against NumPy (LAPACK); and the array API's routing (LAPACK for CPU arrays, Jacobi on
# a GPU).
import numpy as np
import pytest

import isthmus as q
import isthmus.array_api as xp
from isthmus.array_api import _jacobi as jac
from cuda_helpers import HAVE_CUDA, NO_CUDA_REASON, cuda_session
from linalg_helpers import DTYPES, cpu_session, matrix_source  # noqa: F401 (an autouse fixture)

rand = matrix_source(20261128)
SQUARE = [(1, 1), (2, 2), (5, 5), (6, 6), (3, 4, 4), (2, 1, 7, 7), (0, 3, 3), (2, 0, 0)]


def tol(dtype):
    """Error bound relative to the matrix norm: a few n eps."""
    return 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12


def ct(a):
    return np.conj(np.swapaxes(a, -1, -2))


def scale(a):
    return max(1.0, float(np.abs(a).max(initial=0.0)) * max(a.shape[-2:], default=1))


def assert_eye(m, t):
    np.testing.assert_allclose(m, np.broadcast_to(np.eye(m.shape[-1]), m.shape), atol=t)


def hermitian(a):
    """The matrix LAPACK's eigh reads: the lower triangle and the real diagonal."""
    low = np.tril(a, -1)
    d = np.real(np.diagonal(a, axis1=-2, axis2=-1))
    return low + ct(low) + d[..., None] * np.eye(a.shape[-1])


# ---- eigh, eigvalsh ----

def check_eigh(a, w, v, t):
    h = hermitian(a)
    real = np.finfo(a.dtype).dtype
    assert w.dtype == real and v.dtype == a.dtype
    assert w.shape == a.shape[:-1] and v.shape == a.shape
    s = scale(a)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(h), atol=t * s)
    assert np.all(np.diff(w, axis=-1) >= 0)
    np.testing.assert_allclose(h @ v, v * w[..., None, :], atol=t * s)  # A V = V diag(w)
    assert_eye(ct(v) @ v, t * 10)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SQUARE)
def test_eigh_matches_lapack(dtype, shape):
    a = rand(shape, dtype)
    w, v = (np.asarray(r) for r in jac.eigh(q.value(a)))
    check_eigh(a, w, v, tol(dtype))
    w2, none = jac.eigh(q.value(a), vectors=False)
    assert none is None
    np.testing.assert_allclose(np.asarray(w2), w, atol=tol(dtype) * scale(a))


@pytest.mark.parametrize("dtype", ["float32", "complex128"])
def test_eigh_repeated_diagonal_and_lower_triangle(dtype):
    t = tol(dtype)
    u = np.linalg.qr(rand((5, 5), dtype))[0]
    double = (u * np.array([2.0, 2.0, -1.0, 3.0, 3.0])) @ ct(u)  # two double eigenvalues
    for a in (np.eye(4), double, np.diag([3.0, -1.0, 2.0, 0.0, 2.0]), np.zeros((3, 3)),
              np.array([[0.0, 1e-30], [1e-30, 0.0]]), np.array([[1e30, 1.0], [1.0, -1e30]])):
        a = a.astype(dtype)
        w, v = (np.asarray(r) for r in jac.eigh(q.value(a)))
        check_eigh(a, w, v, t)
    # only the lower triangle is read: garbage (NaN too) above it changes nothing
    a = rand((2, 6, 6), dtype)
    g = a.copy()
    iu = np.triu_indices(6, 1)
    g[..., iu[0], iu[1]] = 99.0
    g[0, 0, 5] = np.nan
    if np.dtype(dtype).kind == "c":  # and so is only the real part of the diagonal
        g[..., range(6), range(6)] += 7j
    w, v = (np.asarray(r) for r in jac.eigh(q.value(g)))
    check_eigh(a, w, v, t)


# ---- svd, svdvals ----

def check_svd(a, u, s, vh, full, t):
    m, n = a.shape[-2:]
    k = min(m, n)
    ref_u, ref_s, ref_vh = np.linalg.svd(a, full_matrices=full)
    assert (u.shape, s.shape, vh.shape) == (ref_u.shape, ref_s.shape, ref_vh.shape)
    assert u.dtype == a.dtype and vh.dtype == a.dtype and s.dtype == np.finfo(a.dtype).dtype
    sc = scale(a)
    np.testing.assert_allclose(s, ref_s, atol=t * sc)
    np.testing.assert_allclose((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a,
                               atol=t * sc)
    assert_eye(ct(u) @ u, 10 * t)  # orthonormal columns, the completion too
    assert_eye(vh @ ct(vh), 10 * t)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SQUARE + [(7, 4), (4, 7), (2, 3, 5), (3, 6, 2), (1, 3),
                                            (2, 0), (0, 3)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_matches_lapack(dtype, shape, full):
    a = rand(shape, dtype)
    u, s, vh = (np.asarray(r) for r in jac.svd(q.value(a), full))
    check_svd(a, u, s, vh, full, tol(dtype))
    sv = np.asarray(jac.svdvals(q.value(a)))
    assert sv.dtype == s.dtype
    np.testing.assert_allclose(sv, s, atol=tol(dtype) * scale(a))


@pytest.mark.parametrize("dtype", DTYPES)
def test_svd_of_rank_deficient_matrices(dtype):
    # zero singular values: U still orthonormal (completed by QR), U S Vh still x
    t = tol(dtype)
    cases = [rand((6, 2), dtype) @ rand((2, 5), dtype), rand((3, 1), dtype) @ rand((1, 7), dtype),
             np.zeros((4, 3), dtype), np.ones((3, 3), dtype),
             np.array([[1, 2, 3], [1, 2, 3], [2, 4, 6], [0, 0, 1]], dtype)]
    z = rand((2, 5, 5), dtype)
    z[0, :, 2] = 0
    z[1, 3, :] = 0
    cases.append(z)
    for a in cases:
        a = a.astype(dtype)
        for full in (True, False):
            u, s, vh = (np.asarray(r) for r in jac.svd(q.value(a), full))
            check_svd(a, u, s, vh, full, t)


def test_svd_of_graded_matrices():
    # singular values over 12 orders of magnitude: each within a few eps of the largest
    u = np.linalg.qr(rand((8, 8), "float64"))[0]
    v = np.linalg.qr(rand((6, 6), "float64"))[0]
    s = np.logspace(0, -12, 6)
    a = (u[:, :6] * s) @ v.T
    got = np.asarray(jac.svdvals(q.value(a)))
    np.testing.assert_allclose(got, s, rtol=1e-6, atol=1e-15)


@pytest.mark.parametrize("dtype", ["float32", "complex128"])
def test_tiny_and_huge_entries(dtype):
    # squares of entries like these under- or overflow; each matrix is scaled first
    big = 1e15 if np.dtype(dtype) == np.float32 else 1e150
    t = tol(dtype)
    for f in (1.0 / big, big):
        a = rand((2, 5, 5), dtype)
        a[1] *= 1e-3  # another scale in the same batch
        w, v = (np.asarray(r) for r in jac.eigh(q.value((a * f).astype(dtype))))
        check_eigh(a, w / f, v, t)
        for full in (True, False):
            x = a[..., :, :3]
            u, s, vh = (np.asarray(r) for r in jac.svd(q.value((x * f).astype(dtype)), full))
            check_svd(x, u, s / f, vh, full, t)
        p = np.asarray(jac.pinv(q.value((a * f).astype(dtype))))
        np.testing.assert_allclose(p * f, np.linalg.pinv(a, rtol=None), rtol=100 * t,
                                   atol=100 * t * np.abs(np.linalg.pinv(a)).max())


# ---- pinv, matrix_rank, matrix_norm ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (5, 5), (7, 4), (4, 7), (2, 3, 6, 3), (0, 3, 3),
                                   (3, 0)])
def test_pinv_matches_lapack(dtype, shape):
    a = rand(shape, dtype)
    got = np.asarray(jac.pinv(q.value(a)))
    ref = np.linalg.pinv(a, rtol=None)  # the standard's default: max(m, n) eps
    assert got.shape == ref.shape and got.dtype == a.dtype
    t = 100 * tol(dtype)
    np.testing.assert_allclose(got, ref, atol=t * max(1.0, np.abs(ref).max(initial=0.0)))


@pytest.mark.parametrize("dtype", ["float32", "complex128"])
def test_pinv_and_matrix_rank_of_rank_deficient_matrices(dtype):
    t = 100 * tol(dtype)
    a = np.stack([rand((6, 2), dtype) @ rand((2, 5), dtype), rand((6, 5), dtype),
                  np.zeros((6, 5), dtype), rand((6, 1), dtype) @ rand((1, 5), dtype)])
    a = a.astype(dtype)
    A = q.value(a)
    np.testing.assert_allclose(np.asarray(jac.pinv(A)), np.linalg.pinv(a, rtol=None), atol=t)
    rank = np.asarray(jac.matrix_rank(A))
    assert rank.dtype == np.int64
    np.testing.assert_array_equal(rank, [2, 5, 0, 1])
    np.testing.assert_array_equal(rank, np.linalg.matrix_rank(a))
    # rtol as a float and as an array broadcasting against the batch
    d = np.diag([1.0, 0.1, 1e-3, 1e-6]).astype(dtype)
    D = q.value(d)
    for rtol in (0.5, 0.05, 1e-4, 1e-8):
        np.testing.assert_allclose(np.asarray(jac.pinv(D, rtol)), np.linalg.pinv(d, rtol=rtol),
                                   rtol=1e-5)
    rt = np.array([0.5, 0.05, 1e-4, 1e-8])
    stack = np.broadcast_to(d, (4, 4, 4))
    np.testing.assert_allclose(np.asarray(jac.pinv(q.value(stack), q.value(rt))),
                               np.linalg.pinv(stack, rtol=rt), rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(jac.matrix_rank(q.value(stack), q.value(rt))),
                                  [1, 2, 3, 4])
    np.testing.assert_array_equal(np.asarray(jac.matrix_rank(q.value(stack), 0.01)),
                                  [2, 2, 2, 2])
    for shape in ((0, 4, 4), (3, 0, 2)):
        r = np.asarray(jac.matrix_rank(q.value(np.zeros(shape, dtype))))
        assert r.shape == shape[:-2] and r.dtype == np.int64


def test_inputs_are_not_modified():
    a = rand((3, 5, 4), "complex128")
    A = q.value(a)
    for f in (lambda x: jac.svd(x, True)[0], jac.svdvals, jac.pinv, jac.matrix_rank,
              lambda x: jac.eigh(x[..., :4, :])[1]):
        f(A)
        np.testing.assert_array_equal(np.asarray(A), a)


def test_bad_input_on_the_composed_route(monkeypatch):
    # What a CUDA array takes, forced on CPU arrays: typed errors, inputs unchanged
    from isthmus.array_api import linalg
    monkeypatch.setattr(linalg, "_off_cpu", lambda *xs: True)
    a = rand((3, 4), "float64")
    A = xp.asarray(a)
    with pytest.raises(ValueError, match="square"):
        xp.linalg.eigh(A)
    with pytest.raises(ValueError, match="2 dimensions"):
        xp.linalg.svd(xp.asarray([1.0, 2.0]))
    with pytest.raises(TypeError, match="floating-point"):
        xp.linalg.svdvals(xp.asarray([[1, 2], [3, 4]]))
    for f in (xp.linalg.pinv, xp.linalg.matrix_rank):
        with pytest.raises(TypeError, match="rtol must be"):
            f(A, rtol="tiny")
    np.testing.assert_array_equal(np.asarray(A), a)
    assert np.asarray(xp.linalg.matrix_rank(A)) == 3  # the session goes on


def test_nan_gives_nan_without_hanging():
    # A matrix with a NaN or an infinity gives NaNs (the others of the batch are unaffected)
    a = rand((3, 4, 4), "float64")
    a[1, 2, 1] = np.nan
    a[2, 3, 0] = np.inf
    A = q.value(a)
    w, v = (np.asarray(r) for r in jac.eigh(A))
    assert np.isnan(w[1:]).all() and np.isnan(v[1:]).all()
    check_eigh(a[0], w[0], v[0], tol("float64"))
    u, s, vh = (np.asarray(r) for r in jac.svd(A, True))
    assert np.isnan(u[1:]).all() and np.isnan(s[1:]).all() and np.isnan(vh[1:]).all()
    check_svd(a[0], u[0], s[0], vh[0], True, tol("float64"))
    assert np.isnan(np.asarray(jac.svdvals(A))[1:]).all()
    assert np.isnan(np.asarray(jac.pinv(A))[1:]).all()
    rank = np.asarray(jac.matrix_rank(A))  # NaN is above no cutoff: rank 0
    np.testing.assert_array_equal(rank, [4, 0, 0])


# ---- the pieces ----

@pytest.mark.parametrize("n", [2, 4, 8, 10])
def test_the_round_robin_schedule(n):
    p, qq, inv = jac._schedule(n)
    assert p.shape == qq.shape == (n - 1, n // 2) and inv.shape == (n - 1, n)
    assert np.all(p < qq)
    for r in range(n - 1):  # each round: disjoint pairs covering every index
        both = np.concatenate([p[r], qq[r]])
        assert sorted(both) == list(range(n))
        np.testing.assert_array_equal(both[inv[r]], np.arange(n))
    pairs = {(int(a), int(b)) for a, b in zip(p.ravel(), qq.ravel())}
    assert len(pairs) == n * (n - 1) // 2  # every pair once per sweep


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_the_2x2_step_diagonalises(dtype):
    for a_, b_, g_ in ((1.0, 3.0, 2.0), (2.0, -1.0, -0.5), (1.0, 1.0, 1e-9), (0.0, 5.0, 0.0),
                       (1.0, 1.0, 1.0 - 2.0j), (4.0, 0.0, 1j)):
        if dtype == "float64":
            g_ = g_.real if isinstance(g_, complex) else g_
        m = np.array([[a_, g_], [np.conj(g_), b_]], dtype=dtype)
        c, s, w = jac._rotation(q.value(np.array(a_)), q.value(np.array(b_)),
                                q.value(np.array(g_, dtype=dtype)), dtype != "float64")
        c, s = float(np.asarray(c)), float(np.asarray(s))
        e = 1.0 if w is None else complex(np.asarray(w))
        u = np.array([[c, s], [-s * e, c * e]])
        assert_eye(ct(u) @ u, 1e-15)
        d = ct(u) @ m @ u
        assert abs(d[0, 1]) < 1e-14 * max(1.0, np.abs(m).max())


# ---- the namespace's routing ----

def test_cpu_arrays_still_take_lapack(monkeypatch):
    called = []
    for name in ("eigh", "svd", "svdvals", "pinv", "matrix_rank"):
        monkeypatch.setattr(jac, name, lambda *a, **k: called.append(a))
    a = rand((3, 3), "float64")
    A = xp.asarray(a)
    np.testing.assert_allclose(np.asarray(xp.linalg.svdvals(A)), np.linalg.svdvals(a))
    xp.linalg.eigh(A), xp.linalg.eigvalsh(A), xp.linalg.svd(A), xp.linalg.pinv(A)
    xp.linalg.matrix_rank(A), xp.linalg.matrix_norm(A, ord=2)
    assert not called


def test_the_composed_route_of_the_namespace(monkeypatch):
    # What a CUDA array takes, forced on CPU arrays: the namespace's wrappers around Jacobi
    from isthmus.array_api import linalg
    monkeypatch.setattr(linalg, "_off_cpu", lambda *xs: True)
    a = rand((2, 5, 4), "complex128")
    A = xp.asarray(a)
    t = 1e-10
    w, v = xp.linalg.eigh(A[..., :4, :])
    check_eigh(a[..., :4, :], np.asarray(w), np.asarray(v), t)
    np.testing.assert_allclose(np.asarray(xp.linalg.eigvalsh(A[..., :4, :])), np.asarray(w),
                               atol=t)
    for full in (True, False):
        u, s, vh = xp.linalg.svd(A, full_matrices=full)
        check_svd(a, np.asarray(u), np.asarray(s), np.asarray(vh), full, t)
    np.testing.assert_allclose(np.asarray(xp.linalg.svdvals(A)), np.linalg.svdvals(a), atol=t)
    np.testing.assert_allclose(np.asarray(xp.linalg.pinv(A)), np.linalg.pinv(a, rtol=None),
                               atol=t)
    np.testing.assert_allclose(np.asarray(xp.linalg.pinv(A, rtol=xp.asarray([0.5, 1e-9]))),
                               np.linalg.pinv(a, rtol=np.array([0.5, 1e-9])), atol=t)
    np.testing.assert_array_equal(np.asarray(xp.linalg.matrix_rank(A)), [4, 4])
    np.testing.assert_array_equal(np.asarray(xp.linalg.matrix_rank(A, rtol=0.9)), [1, 1])
    for ord_ in (2, -2, "nuc"):
        for keep in (False, True):
            got = xp.linalg.matrix_norm(A, ord=ord_, keepdims=keep)
            ref = np.linalg.norm(a, ord=ord_, axis=(-2, -1), keepdims=keep)
            assert got.shape == ref.shape
            np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-12)


@pytest.mark.skipif(not HAVE_CUDA, reason=NO_CUDA_REASON)
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_cuda_arrays_are_computed_on_the_device(dtype):
    with cuda_session():
        a = rand((2, 5, 5), dtype)
        A = xp.asarray(a, device=xp.__array_namespace_info__().devices()[-1])
        t = tol(dtype)

        def host(r):
            assert r.device.startswith("cuda")
            return np.asarray(r.to_device("cpu"))
        w, v = xp.linalg.eigh(A)
        check_eigh(a, host(w), host(v), t)
        u, s, vh = xp.linalg.svd(A[..., :, :3], full_matrices=True)
        check_svd(a[..., :, :3], host(u), host(s), host(vh), True, t)
        np.testing.assert_allclose(host(xp.linalg.svdvals(A)), np.linalg.svdvals(a),
                                   atol=t * scale(a))
        np.testing.assert_allclose(host(xp.linalg.pinv(A)), np.linalg.pinv(a, rtol=None),
                                   atol=100 * t * max(1.0, np.abs(np.linalg.pinv(a)).max()))
        np.testing.assert_array_equal(host(xp.linalg.matrix_rank(A)), [5, 5])
