# linalg by elimination (Note [linalg by elimination]): det, slogdet, inv, solve and cholesky
# composed from isthmus ops, the code CUDA arrays run, checked here on CPU arrays against NumPy
# (LAPACK); and the array API's routing (LAPACK for CPU arrays, elimination on a GPU).
import numpy as np
import pytest

import isthmus as q
import isthmus.array_api as xp
from isthmus.array_api import _elimination as elim
from cuda_helpers import HAVE_CUDA, NO_CUDA_REASON, cuda_session
from linalg_helpers import DTYPES, cpu_session, matrix_source  # noqa: F401 (an autouse fixture)

rand = matrix_source(20261127)


def tol(dtype):
    return 2e-3 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-9


def spd(shape, dtype):
    a = rand(shape, dtype)
    n = shape[-1]
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (5, 5), (3, 4, 4), (2, 1, 6, 6), (0, 3, 3),
                                   (2, 0, 0)])
def test_det_slogdet_inv_match_lapack(dtype, shape):
    a = rand(shape, dtype)
    A = q.value(a)
    t = tol(dtype)
    d = np.asarray(elim.det(A))
    assert d.dtype == np.dtype(dtype) and d.shape == shape[:-2]
    np.testing.assert_allclose(d, np.linalg.det(a), rtol=t, atol=t)
    sign, logabs = elim.slogdet(A)
    ref_sign, ref_log = np.linalg.slogdet(a)
    np.testing.assert_allclose(np.asarray(sign), ref_sign, rtol=t, atol=t)
    np.testing.assert_allclose(np.asarray(logabs), ref_log, rtol=t, atol=t)
    assert np.asarray(logabs).dtype == np.finfo(np.dtype(dtype)).dtype
    inv = np.asarray(elim.inv(A))
    np.testing.assert_allclose(inv, np.linalg.inv(a), rtol=50 * t, atol=50 * t)


@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_matches_lapack_with_broadcast_batches(dtype):
    t = 50 * tol(dtype)
    a = rand((3, 1, 4, 4), dtype)
    b = rand((2, 4, 3), dtype)  # batches (3, 1) and (2,) broadcast to (3, 2)
    got = np.asarray(elim.solve(q.value(a), q.value(b)))
    np.testing.assert_allclose(got, np.linalg.solve(a, b), rtol=t, atol=t)
    # the array API's 1-d right-hand side, through the namespace's solve on a CPU array
    v = rand((4,), dtype)
    np.testing.assert_allclose(np.asarray(xp.linalg.solve(xp.asarray(a[0, 0]), xp.asarray(v))),
                               np.linalg.solve(a[0, 0], v), rtol=t, atol=t)


def test_pivoting_follows_lapack():
    # a zero on the diagonal needs a row swap; the swaps' parity is det's sign
    a = np.array([[0.0, 2.0, 1.0], [1.0, 0.0, 0.0], [3.0, 1.0, 4.0]])
    m, perm, sign = elim.lu_factor(q.value(a))
    perm = np.asarray(perm)
    lu = np.asarray(m)
    low = np.tril(lu, -1) + np.eye(3)
    up = np.triu(lu)
    np.testing.assert_allclose(low @ up, a[perm], atol=1e-12)
    assert np.abs(np.tril(lu, -1)).max() <= 1.0  # partial pivoting: multipliers at most 1
    assert float(np.asarray(elim.det(q.value(a)))) == pytest.approx(np.linalg.det(a))
    assert float(np.asarray(sign)) in (-1.0, 1.0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (2, 3, 5, 5), (0, 2, 2), (3, 0, 0)])
def test_cholesky_matches_lapack(dtype, shape):
    a = spd(shape, dtype)
    t = 10 * tol(dtype)
    got = np.asarray(elim.cholesky(q.value(a)))
    np.testing.assert_allclose(got, np.linalg.cholesky(a), rtol=t, atol=t)
    assert np.all(np.triu(got, 1) == 0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (6, 3), (3, 6), (2, 5, 4), (3, 1), (1, 3),
                                   (0, 3, 3), (0, 2), (2, 0)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_matches_lapack_conventions(dtype, shape, mode):
    a = rand(shape, dtype)
    t = 50 * tol(dtype)
    qm, r = elim.qr(q.value(a), mode)
    ref_q, ref_r = np.linalg.qr(a, mode=mode)
    assert qm.shape == ref_q.shape and r.shape == ref_r.shape
    np.testing.assert_allclose(np.asarray(qm), ref_q, rtol=t, atol=t)
    np.testing.assert_allclose(np.asarray(r), ref_r, rtol=t, atol=t)


def test_qr_of_rank_deficient_matrices():
    # Where a trailing column is rounding noise, its reflector (and Q's column) is decided by
    # the noise, which differs from LAPACK's: the factorisation's properties are what holds.
    for a in (np.zeros((3, 3)), np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]]),
              np.array([[0.0, 1.0], [0.0, 1.0]]), np.array([[2.0, 0.0], [0.0, -3.0]])):
        qm, r = (np.asarray(v) for v in elim.qr(q.value(a), "reduced"))
        ref_r = np.linalg.qr(a)[1]
        np.testing.assert_allclose(qm.T @ qm, np.eye(qm.shape[1]), atol=1e-12)
        np.testing.assert_allclose(qm @ r, a, atol=1e-12)
        assert np.all(np.tril(r, -1) == 0)
        np.testing.assert_allclose(np.abs(np.diag(r)), np.abs(np.diag(ref_r)), atol=1e-12)


def test_singular_and_not_positive_definite():
    sing = np.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 0.0], [0.0, 3.0]]])
    S = q.value(sing)
    np.testing.assert_array_equal(np.asarray(elim.det(S)), [0.0, 6.0])
    sign, logabs = elim.slogdet(S)
    np.testing.assert_array_equal(np.asarray(sign), [0.0, 1.0])
    assert np.asarray(logabs)[0] == -np.inf
    for f in (lambda: elim.inv(S), lambda: elim.solve(S, q.value(np.ones((2, 2, 1))))):
        with pytest.raises(np.linalg.LinAlgError, match="singular"):
            f()
    for bad in (-np.eye(3), np.array([[1.0, 2.0], [2.0, 1.0]]), np.full((2, 2), np.nan)):
        B = q.value(bad)
        with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
            elim.cholesky(B)
        np.testing.assert_array_equal(np.asarray(B), bad)  # the input is left as it was


def test_inputs_are_not_modified():
    a = rand((3, 4, 4), "float64")
    A = q.value(a)
    for f in (elim.det, elim.inv, lambda x: elim.slogdet(x)[0], lambda x: elim.lu_factor(x)[0]):
        f(A)
        np.testing.assert_array_equal(np.asarray(A), a)


# ---- the namespace's routing ----

def test_cpu_arrays_still_take_lapack(monkeypatch):
    called = []
    monkeypatch.setattr(elim, "det", lambda x: called.append(x))
    a = rand((3, 3), "float64")
    np.testing.assert_allclose(np.asarray(xp.linalg.det(xp.asarray(a))), np.linalg.det(a))
    assert not called


def test_the_composed_route_of_the_namespace(monkeypatch):
    # What a CUDA array takes, forced on CPU arrays: the namespace's wrappers around elimination
    from isthmus.array_api import linalg
    monkeypatch.setattr(linalg, "_off_cpu", lambda *xs: True)
    a = rand((2, 4, 4), "float64")
    A = xp.asarray(a)
    np.testing.assert_allclose(np.asarray(xp.linalg.det(A)), np.linalg.det(a), rtol=1e-9)
    np.testing.assert_allclose(np.asarray(xp.linalg.inv(A)), np.linalg.inv(a), rtol=1e-8,
                               atol=1e-9)
    sign, logabs = xp.linalg.slogdet(A)
    np.testing.assert_allclose(np.asarray(logabs), np.linalg.slogdet(a)[1], rtol=1e-9)
    v = rand((4,), "float32")  # a 1-d right-hand side, promoted to float64
    got = xp.linalg.solve(A, xp.asarray(v))
    assert got.shape == (2, 4) and str(got.dtype) == "float64"
    np.testing.assert_allclose(np.asarray(got), np.linalg.solve(a, v.astype(np.float64)[:, None])
                               [..., 0], rtol=1e-8, atol=1e-9)
    s_ = spd((4, 4), "complex128")
    up = xp.linalg.cholesky(xp.asarray(s_), upper=True)
    np.testing.assert_allclose(np.asarray(up), np.conj(np.linalg.cholesky(s_)).T, rtol=1e-9,
                               atol=1e-12)
    qm, r = xp.linalg.qr(A, mode="complete")
    np.testing.assert_allclose(np.asarray(qm), np.linalg.qr(a, mode="complete")[0], atol=1e-9)
    assert xp.linalg.matrix_power(A, -2).shape == (2, 4, 4)


@pytest.mark.skipif(not HAVE_CUDA, reason=NO_CUDA_REASON)
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_cuda_arrays_are_computed_on_the_device(dtype):
    with cuda_session():
        a = rand((2, 5, 5), dtype)
        A = xp.asarray(a, device=xp.__array_namespace_info__().devices()[-1])
        t = 50 * tol(dtype)
        for name, ref in (("det", np.linalg.det(a)), ("inv", np.linalg.inv(a))):
            got = getattr(xp.linalg, name)(A)
            assert got.device.startswith("cuda")
            np.testing.assert_allclose(np.asarray(got.to_device("cpu")), ref, rtol=t, atol=t)
        S = xp.asarray(spd((5, 5), dtype), device=A.device)
        low = xp.linalg.cholesky(S)
        assert low.device.startswith("cuda")
        np.testing.assert_allclose(np.asarray(low.to_device("cpu")),
                                   np.linalg.cholesky(spd_ := np.asarray(S.to_device("cpu"))),
                                   rtol=t, atol=t)
        assert spd_.shape == (5, 5)
