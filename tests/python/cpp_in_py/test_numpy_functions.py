# NumPy's functions on qvalues (__array_function__): the functions table against NumPy.
import warnings

import numpy as np
import pytest

import isthmus as q
from isthmus import numpy_protocols as npp
from numpy_protocols_helpers import check, same

# The references are NumPy 2's results (NEP 50 promotion, NumPy 2's sign and floor); the
# protocols themselves work with NumPy 1.24+ too (test_numpy.py and test_operators.py run there).
pytestmark = pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.0.0",
                                reason="the references are NumPy 2's results")

# ---- the functions table ----

RNG = np.random.default_rng(11)
F = RNG.uniform(-2, 2, (4, 6))
FT = F.T  # non-contiguous
C = F[:, :3] + 1j * F[:, 3:]
I = RNG.integers(0, 5, (4, 6)).astype(np.int32)
B = F > 0
V = RNG.uniform(-2, 2, 6)
M = RNG.uniform(size=(4, 6)) > 0.4
E = np.zeros((0, 3))

# name -> calls; each call gets `a`, which turns a NumPy array into the argument (the array
# itself for the reference, a qvalue sharing it for isthmus), and returns (args, kwargs).
FUNCTION_CASES = {
    "sum": [lambda a: ((a(F),), {}), lambda a: ((a(FT),), dict(axis=1, keepdims=True)),
            lambda a: ((a(I),), dict(dtype=np.int16)), lambda a: ((a(F),), dict(initial=3.0)),
            lambda a: ((a(F),), dict(axis=0, where=M)), lambda a: ((a(E),), dict(axis=0))],
    "prod": [lambda a: ((a(F),), dict(axis=0)), lambda a: ((a(I),), dict(axis=(0, 1))),
             lambda a: ((a(F),), dict(axis=1, where=M, initial=2.0))],
    "mean": [lambda a: ((a(F),), {}), lambda a: ((a(I),), dict(axis=1)),
             lambda a: ((a(FT),), dict(axis=0, keepdims=True)),
             lambda a: ((a(F),), dict(axis=1, where=M)), lambda a: ((a(C),), dict(axis=0)),
             lambda a: ((a(F),), dict(dtype=np.float32))],
    "max": [lambda a: ((a(F),), {}), lambda a: ((a(FT),), dict(axis=1)),
            lambda a: ((a(F),), dict(axis=0, where=M, initial=-5.0)),
            lambda a: ((a(E),), dict(axis=0, initial=1.0))],
    "min": [lambda a: ((a(I),), dict(axis=1, keepdims=True)),
            lambda a: ((a(F),), dict(initial=-1.0))],
    "amax": [lambda a: ((a(F),), dict(axis=1))],
    "amin": [lambda a: ((a(F),), dict(axis=0))],
    "any": [lambda a: ((a(B),), dict(axis=1)), lambda a: ((a(F),), {}),
            lambda a: ((a(B),), dict(axis=0, where=M))],
    "all": [lambda a: ((a(B),), dict(axis=0, keepdims=True)), lambda a: ((a(I),), {}),
            lambda a: ((a(B),), dict(where=M))],
    "var": [lambda a: ((a(F),), {}), lambda a: ((a(F),), dict(axis=1, ddof=1)),
            lambda a: ((a(C),), dict(axis=0)), lambda a: ((a(I),), dict(axis=0)),
            lambda a: ((a(F),), dict(axis=1, where=M)),
            lambda a: ((a(F),), dict(axis=0, correction=1))],
    "std": [lambda a: ((a(FT),), dict(axis=0)), lambda a: ((a(F),), dict(keepdims=True)),
            lambda a: ((a(C),), dict(axis=1, where=M[:, :3], ddof=1))],
    "argmin": [lambda a: ((a(F),), {}), lambda a: ((a(FT),), dict(axis=1))],
    "argmax": [lambda a: ((a(F),), dict(axis=0, keepdims=True)), lambda a: ((a(I),), {})],
    "cumsum": [lambda a: ((a(F),), {}), lambda a: ((a(I),), dict(axis=1)),
               lambda a: ((a(I),), dict(axis=0, dtype=np.float32))],
    "cumprod": [lambda a: ((a(F),), dict(axis=0)), lambda a: ((a(I),), dict(axis=1))],
    "sort": [lambda a: ((a(F),), {}), lambda a: ((a(I),), dict(axis=0, kind="stable")),
             lambda a: ((a(FT),), dict(axis=None))],
    "argsort": [lambda a: ((a(I),), dict(kind="stable")), lambda a: ((a(F),), dict(axis=0)),
                lambda a: ((a(V),), dict(stable=True))],
    "unique": [lambda a: ((a(I),), {}), lambda a: ((a(I),), dict(return_counts=True)),
               lambda a: ((a(F),), dict(return_index=True, return_inverse=True))],
    "searchsorted": [lambda a: ((a(np.arange(8.0)), a(F)), {}),
                     lambda a: ((a(np.arange(8.0)), a(V)), dict(side="right")),
                     lambda a: ((a(np.arange(8.0)[::-1]), 2.5), dict(sorter=np.arange(8)[::-1]))],
    "concatenate": [lambda a: (([a(F), a(I)],), {}), lambda a: (([a(F), a(F)],), dict(axis=1)),
                    lambda a: (([a(F), a(V)],), dict(axis=None)),
                    lambda a: (([a(I), a(I)],), dict(dtype=np.float32))],
    "concat": [lambda a: (([a(F), a(F)],), dict(axis=-1))],
    "stack": [lambda a: (([a(F), a(FT.T)],), {}), lambda a: (([a(V), a(V)],), dict(axis=1))],
    "split": [lambda a: ((a(F), 2), {}), lambda a: ((a(F), [1, 4]), dict(axis=1))],
    "array_split": [lambda a: ((a(F), 4), dict(axis=1)), lambda a: ((a(V), 4), {})],
    "flip": [lambda a: ((a(F),), {}), lambda a: ((a(F),), dict(axis=1))],
    "fliplr": [lambda a: ((a(F),), {})],
    "flipud": [lambda a: ((a(FT),), {})],
    "tile": [lambda a: ((a(V), (2, 2)), {}), lambda a: ((a(F), 2), {})],
    "repeat": [lambda a: ((a(F), 2), {}), lambda a: ((a(F), 3), dict(axis=0)),
               lambda a: ((a(V), a(np.arange(6))), {})],
    "pad": [lambda a: ((a(F), 1), {}), lambda a: ((a(F), ((1, 2), (0, 1))), dict(mode="edge")),
            lambda a: ((a(F), 2), dict(mode="reflect")),
            lambda a: ((a(F), 2), dict(mode="symmetric")),
            lambda a: ((a(F), 1), dict(mode="wrap")),
            lambda a: ((a(F), 1), dict(constant_values=9.5))],
    "reshape": [lambda a: ((a(F), (3, 8)), {}), lambda a: ((a(FT), -1), {}),
                lambda a: ((a(F),), dict(shape=(2, -1), copy=True))],
    "transpose": [lambda a: ((a(F),), {}), lambda a: ((a(F[None]), (2, 0, 1)), {})],
    "permute_dims": [lambda a: ((a(F[None]),), dict(axes=(1, 2, 0)))],
    "moveaxis": [lambda a: ((a(F[None]), 0, -1), {}),
                 lambda a: ((a(F[None]), [0, 1], [2, 0]), {})],
    "swapaxes": [lambda a: ((a(F[None]), 0, 2), {})],
    "squeeze": [lambda a: ((a(F[None, :, None]),), {}),
                lambda a: ((a(F[None, :, None]),), dict(axis=0))],
    "expand_dims": [lambda a: ((a(F), 1), {}), lambda a: ((a(F), (0, -1)), {})],
    "broadcast_to": [lambda a: ((a(V), (3, 6)), {})],
    "ravel": [lambda a: ((a(F),), {}), lambda a: ((a(FT),), {})],
    "nonzero": [lambda a: ((a(B),), {}), lambda a: ((a(I),), {})],
    "flatnonzero": [lambda a: ((a(I),), {})],
    "argwhere": [lambda a: ((a(B),), {})],
    "take": [lambda a: ((a(F), a(np.array([0, 5, 3]))), {}),
             lambda a: ((a(F), a(np.array([1, 0]))), dict(axis=0)),
             lambda a: ((a(F), a(np.array([7, -9]))), dict(axis=1, mode="wrap")),
             lambda a: ((a(F), a(np.array([7, -9]))), dict(axis=1, mode="clip"))],
    "take_along_axis": [lambda a: ((a(F), a(np.argsort(F, axis=1))), dict(axis=1)),
                        lambda a: ((a(V), a(np.argsort(V))), dict(axis=None))],
    "where": [lambda a: ((a(B), a(F), a(I)), {}), lambda a: ((a(B),), {}),
              lambda a: ((a(B), a(F), 0.5), {})],
    "clip": [lambda a: ((a(F), -1, 1), {}), lambda a: ((a(F), None, a(V)), {}),
             lambda a: ((a(I),), dict(min=1, max=3))],
    "dot": [lambda a: ((a(F), a(FT)), {}), lambda a: ((a(V), a(V)), {})],
    "vdot": [lambda a: ((a(C), a(C)), {})],
    "inner": [lambda a: ((a(F), a(F)), {})],
    "outer": [lambda a: ((a(V), a(F[0])), {})],
    "zeros_like": [lambda a: ((a(F),), {}), lambda a: ((a(I),), dict(dtype=np.float32)),
                   lambda a: ((a(F),), dict(shape=(2, 5)))],
    "ones_like": [lambda a: ((a(C),), {})],
    "full_like": [lambda a: ((a(F), 2.5), {}), lambda a: ((a(I), 7.9), {}),
                  lambda a: ((a(F), a(V)), {})],
    "copy": [lambda a: ((a(FT),), {})],
    "astype": [lambda a: ((a(F), np.int32), {}), lambda a: ((a(I), "float32"), {})],
    "round": [lambda a: ((a(F),), {}), lambda a: ((a(F), 2), {}), lambda a: ((a(F * 100), -1), {}),
              lambda a: ((a(I),), {}), lambda a: ((a(C), 1), {})],
    "around": [lambda a: ((a(F), 1), {})],
    "real": [lambda a: ((a(C),), {}), lambda a: ((a(F),), {})],
    "imag": [lambda a: ((a(C),), {})],
    "isclose": [lambda a: ((a(F), a(F + 1e-9)), {}),
                lambda a: ((a(np.array([np.nan, np.inf, 1.0])),
                            a(np.array([np.nan, np.inf, 1.1]))), dict(equal_nan=True)),
                lambda a: ((a(I), 2), dict(atol=0.5))],
    "allclose": [lambda a: ((a(F), a(F * (1 + 1e-7))), {}), lambda a: ((a(F), a(FT.T + 1)), {})],
    "array_equal": [lambda a: ((a(F), a(FT.T)), {}), lambda a: ((a(F), a(V)), {}),
                    lambda a: ((a(np.array([np.nan])), a(np.array([np.nan]))),
                               dict(equal_nan=True))],
    "shape": [lambda a: ((a(F),), {})],
    "ndim": [lambda a: ((a(F[None]),), {})],
    "size": [lambda a: ((a(F),), {}), lambda a: ((a(F),), dict(axis=1))],
}
# Functions checked by tests of their own below (in place; uninitialised values).
OWN_TESTS = {"put_along_axis", "empty_like"}


def function_cases():
    for fn in sorted(npp.HANDLED_FUNCTIONS, key=lambda f: f.__name__):
        for i, case in enumerate(FUNCTION_CASES.get(fn.__name__, [])):
            yield pytest.param(fn, case, id=f"{fn.__name__}-{i}")


def test_every_handled_function_has_cases():
    names = {fn.__name__ for fn in npp.HANDLED_FUNCTIONS} - OWN_TESTS
    missing = sorted(n for n in names if not FUNCTION_CASES.get(n))
    assert not missing, f"HANDLED_FUNCTIONS entries without a test case: {missing}"


@pytest.mark.parametrize("fn,case", list(function_cases()))
def test_every_handled_function_matches_numpy(fn, case):
    args, kwargs = case(lambda x: x)
    qargs, qkwargs = case(q.asvalue)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = fn(*args, **kwargs)
    before = [np.array(x) for x in (F, I, B, V, C)]
    same(fn(*qargs, **qkwargs), want)
    for x, b in zip((F, I, B, V, C), before):
        np.testing.assert_array_equal(x, b)  # inputs unchanged


def test_put_along_axis_writes_in_place():
    x = np.arange(12.0).reshape(3, 4)
    idx = np.array([[0], [2], [1]])
    X = q.value(x)
    np.put_along_axis(X, idx, q.value(-1.0), axis=1)
    np.put_along_axis(x, idx, -1.0, axis=1)
    check(X, x)
    T = q.value(np.arange(12.0).reshape(4, 3)).T  # a transposed view, axis=None (flattened)
    t = np.arange(12.0).reshape(4, 3).T.copy()
    np.put_along_axis(T, q.value([0, 5]), q.value([9.0, 8.0]), axis=None)
    np.put_along_axis(t, np.array([0, 5]), np.array([9.0, 8.0]), axis=None)
    check(T, t)


def test_empty_like_has_the_shape_and_dtype():
    for kw in ({}, {"dtype": np.int16}, {"shape": (2, 5)}):
        got, want = np.empty_like(q.value(F), **kw), np.empty_like(F, **kw)
        assert isinstance(got, q.qvalue)
        assert got.shape == want.shape and got.dtype == want.dtype


def test_function_out_keywords():
    X = q.value(F)
    out = q.zeros(6, dtype="float64")
    assert np.sum(X, axis=0, out=out) is out
    check(out, F.sum(axis=0))
    o = np.zeros(4, dtype=np.int32)
    assert np.max(X, axis=1, out=o) is o  # reductions cast unsafely, as NumPy's
    np.testing.assert_array_equal(o, F.max(axis=1).astype(np.int32))
    co = q.zeros(8, 6, dtype="float64")
    assert np.concatenate([X, X], out=co) is co
    check(co, np.concatenate([F, F]))
    with pytest.raises(TypeError, match="Cannot cast"):
        np.concatenate([X, X], out=q.zeros(8, 6, dtype="int32"))
    with pytest.raises(TypeError, match="both"):
        np.concatenate([X, X], out=co, dtype=np.float64)
    d = q.zeros(4, 4, dtype="float64")
    assert np.dot(X, X.T, out=d) is d
    check(d, F @ F.T)
    with pytest.raises(ValueError, match="not acceptable"):
        np.dot(X, X.T, out=q.zeros(4, 4, dtype="float32"))
    r = q.zeros(4, 6, dtype="float64")
    assert np.clip(X, -1, 1, out=r) is r
    check(r, np.clip(F, -1, 1))
    with pytest.raises(TypeError, match="Cannot cast"):
        np.round(X, out=q.zeros(4, 6, dtype="int32"))
    t = q.zeros(2, dtype="float64")
    assert np.take(X, [0, 1], out=t) is t
    check(t, F.ravel()[:2])
    am = q.zeros(6, dtype="int64")
    assert np.argmax(X, axis=0, out=am) is am
    check(am, F.argmax(axis=0))
    for name in ("mean", "var", "std", "cumsum", "prod"):
        o = q.zeros(*np.shape(getattr(np, name)(F, axis=0)), dtype="float64")
        assert getattr(np, name)(X, axis=0, out=o) is o
        check(o, getattr(np, name)(F, axis=0))


def test_unsupported_function_keywords_raise():
    X = q.value(F)
    before = F.copy()
    for call, word in [
        (lambda: np.reshape(X, (3, 8), order="F"), "order"),
        (lambda: np.ravel(X.T, order="F"), "order"),
        (lambda: np.copy(X, order="F"), "order"),
        (lambda: np.zeros_like(X, order="F"), "order"),
        (lambda: np.pad(X, 1, mode="median"), "mode"),
        (lambda: np.pad(X, 1, mode="reflect", reflect_type="odd"), "reflect_type"),
        (lambda: np.pad(X, 1, constant_values=((1, 2), (3, 4))), "constant_values"),
        (lambda: np.var(X, mean=np.zeros(1)), "mean"),
        (lambda: np.clip(X, 0, 1, dtype=np.float32), "dtype"),
        (lambda: np.round(q.value(I), -1), "decimals"),
        (lambda: np.stack([X, X], axis=None), "axis"),
        (lambda: np.zeros_like(X, device="cuda:0"), "device"),
        (lambda: np.logical_and.reduce(X, dtype=np.float64), "dtype"),
    ]:
        with pytest.raises(TypeError, match=word):
            call()
    np.testing.assert_array_equal(X.to_py(), before)
    with pytest.raises(ValueError, match="both or neither"):
        np.where(X > 0, X)
    with pytest.raises(ValueError):
        np.reshape(X.T, (24,), copy=False)  # needs a copy
    with pytest.raises(ValueError):
        np.split(X, 5)
    with pytest.raises(IndexError):
        np.sum(X, axis=3)
    with pytest.raises(ValueError, match="correction"):
        np.var(X, ddof=1, correction=1)
    with pytest.raises(ValueError, match="clipmode"):
        np.take(X, [0], mode="bogus")
    np.testing.assert_array_equal(X.to_py(), before)


def test_results_keep_isthmus_forms():
    X = q.value(F)
    s = np.sum(X)
    assert isinstance(s, q.qvalue) and s.kind == "scalar"  # a full reduction is a scalar
    assert float(s) == pytest.approx(F.sum(), rel=1e-12)
    for r in (np.sum(X, initial=1.0), np.max(X, initial=9.0), np.take(X, 3),
              np.max(X, where=np.zeros(6, bool), initial=-1.0)):
        assert r.kind == "scalar"  # as NumPy's scalars
    assert float(np.max(X, where=np.zeros(6, bool), initial=-1.0)) == -1.0
    assert isinstance(np.allclose(X, F), bool) and np.allclose(X, F)
    assert np.shape(X) == (4, 6) and np.ndim(X) == 2 and np.size(X) == 24
    parts = np.split(X, 2)
    assert isinstance(parts, list) and all(isinstance(p, q.qvalue) for p in parts)
    view = np.reshape(X, (24,))
    view[0] = 100.0  # reshape of a contiguous tensor is a view, as NumPy's
    assert float(X[0, 0]) == 100.0


def test_empty_and_zero_d_functions():
    Z = q.value(np.array(2.5))
    check(np.sum(Z), np.sum(np.array(2.5)))
    check(np.expand_dims(Z, 0), np.expand_dims(np.array(2.5), 0))
    check(np.concatenate([q.zeros(0, 3, dtype="float64"), q.ones(2, 3, dtype="float64")]),
          np.concatenate([E, np.ones((2, 3))]))
    check(np.mean(q.zeros(3, 0, dtype="float64"), axis=0), np.zeros(0))
    check(np.cumsum(q.zeros(0, dtype="float64")), np.zeros(0))
    check(np.any(q.zeros(0)), np.any(np.zeros(0)))


