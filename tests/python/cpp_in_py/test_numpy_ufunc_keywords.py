# NumPy's ufunc keywords on qvalues (out, where, dtype, casting) and reduce/accumulate.

import numpy as np
import pytest

import isthmus as q
from isthmus import numpy_protocols as npp
from numpy_protocols_helpers import check, ufunc_id

# The references are NumPy 2's results (NEP 50 promotion, NumPy 2's sign and floor); the
# protocols themselves work with NumPy 1.24+ too (test_numpy.py and test_operators.py run there).
pytestmark = pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.0.0",
                                reason="the references are NumPy 2's results")

# ---- ufunc keywords ----


def test_out_qvalue_and_numpy_array():
    x = np.linspace(-1, 1, 12).reshape(3, 4)
    X = q.value(x)
    out = q.zeros(3, 4, dtype="float64")
    r = np.exp(X, out=out)
    assert r is out
    check(out, np.exp(x))
    o = np.zeros((3, 4))
    r = np.add(X, 1, out=o)
    assert r is o
    np.testing.assert_allclose(o, x + 1)
    r = np.add(X, 1, out=(o,))  # NumPy's tuple form
    assert r is o
    o32 = np.zeros((3, 4), dtype=np.float32)
    np.multiply(X, 2, out=o32)  # same_kind: float64 into float32
    np.testing.assert_allclose(o32, (x * 2).astype(np.float32))
    big = q.zeros(2, 3, 4, dtype="float64")  # the result broadcasts into a larger out
    np.add(X, 1, out=big)
    check(big, np.broadcast_to(x + 1, (2, 3, 4)))


def test_out_aliasing_an_input():
    x = np.arange(12.0).reshape(3, 4)
    X = q.value(x)
    r = np.add(X, X.T.T * 2, out=X)
    assert r is X
    check(X, x * 3)
    np.subtract(X, X[::-1], out=X)  # the reversed view reads the old values
    check(X, x * 3 - (x * 3)[::-1])
    Y = q.value(np.arange(4.0))
    np.negative(Y, out=Y)
    check(Y, -np.arange(4.0))


def test_out_numpy_array_that_cannot_be_shared():
    x = np.arange(4.0)
    o = np.zeros(4, dtype=">f8")  # byte-swapped: written through NumPy instead
    assert np.add(q.value(x), 1, out=o) is o
    np.testing.assert_array_equal(o, x + 1)
    o = np.full(4, -1.0, dtype=">f8")
    np.add(q.value(x), 1, out=o, where=np.array([True, False, True, False]))
    np.testing.assert_array_equal(o, [1.0, -1.0, 3.0, -1.0])


def test_out_noncontiguous_view():
    base = q.zeros(4, 6, dtype="float64")
    view = base[:, ::2]
    x = np.arange(12.0).reshape(4, 3)
    np.sqrt(x, out=view)
    want = np.zeros((4, 6))
    want[:, ::2] = np.sqrt(x)
    check(base, want)


def test_where_with_and_without_out():
    x = np.arange(6.0).reshape(2, 3)
    mask = np.array([True, False, True])
    out = q.full((2, 3), -1.0, dtype="float64")
    r = np.multiply(q.value(x), 10, out=out, where=mask)
    assert r is out
    want = np.full((2, 3), -1.0)
    np.multiply(x, 10, out=want, where=mask)
    check(out, want)
    r = np.add(q.value(x), 1, where=q.value(mask))  # no out: zeros where the mask is false
    check(r, np.where(mask, x + 1, 0))
    o = np.full((2, 3), 7, dtype=np.int64)
    np.add(q.value(np.ones((2, 3), np.int64)), 1, out=o, where=mask)
    np.testing.assert_array_equal(o, np.broadcast_to(np.where(mask, 2, 7), (2, 3)))
    with pytest.raises(TypeError):
        np.add(q.value(x), 1, where=np.array([1, 0, 1]))  # not a bool mask


def test_dtype_keyword():
    i = np.arange(1, 7, dtype=np.int32)
    I = q.value(i)
    check(np.add(I, I, dtype=np.float64), np.add(i, i, dtype=np.float64))
    check(np.multiply(I, 3, dtype="int64"), np.multiply(i, 3, dtype="int64"))
    f = np.linspace(0.1, 2, 6)
    check(np.exp(q.value(f), dtype=np.float32), np.exp(f, dtype=np.float32))
    check(np.less(q.value(f), 1, dtype=bool), np.less(f, 1, dtype=bool))
    with pytest.raises(TypeError):
        np.divide(I, I, dtype=np.int32)  # NumPy has no such loop
    with pytest.raises(TypeError):
        np.less(q.value(f), 1, dtype=np.float64)
    with pytest.raises(TypeError):
        np.add(I, I, dtype="bfloat16")  # not a NumPy dtype
    with pytest.raises(TypeError):
        np.add(I, I, dtype="nonsense")


@pytest.mark.parametrize("casting", ["no", "equiv", "safe", "same_kind", "unsafe"])
def test_casting_rules_match_numpy(casting):
    f64 = np.linspace(-2, 2, 6)
    f32 = f64.astype(np.float32)
    i32 = np.arange(6, dtype=np.int32)
    cases = [
        (np.add, (f64, f64), np.float64),
        (np.add, (f32, f64), np.float64),
        (np.add, (f64, f64), np.float32),
        (np.add, (f64, f64), np.int32),
        (np.add, (i32, i32), np.float64),
        (np.exp, (i32,), np.float64),
        (np.exp, (f64,), np.float32),
        (np.negative, (i32,), np.int64),
    ]
    for ufunc, ops, out_dtype in cases:
        want_out = np.zeros(6, out_dtype)
        try:
            ufunc(*ops, out=want_out, casting=casting)
            error = None
        except TypeError as e:
            error = e
        out = q.full(6, 3, dtype=np.dtype(out_dtype).name)
        Q = [q.value(o) for o in ops]
        if error is None:
            ufunc(*Q, out=out, casting=casting)
            check(out, want_out)
        else:
            with pytest.raises(TypeError, match="Cannot cast ufunc"):
                ufunc(*Q, out=out, casting=casting)
            check(out, np.full(6, 3, out_dtype))  # unchanged


def test_casting_with_dtype_checks_the_inputs():
    f64 = np.linspace(0, 1, 4)
    with pytest.raises(TypeError, match="input"):
        np.add(q.value(f64), q.value(f64), dtype=np.float32, casting="safe")
    check(np.add(q.value(f64), 1, dtype=np.float32, casting="same_kind"),
          np.add(f64, 1, dtype=np.float32))


def test_bad_ufunc_keywords():
    X = q.value(np.arange(4.0))
    before = X.to_py().copy()
    with pytest.raises(ValueError, match="casting must be one of"):
        np.add(X, 1, casting="bogus")
    with pytest.raises(TypeError, match="order"):
        np.add(X, 1, order="F")
    with pytest.raises(TypeError, match="signature"):
        np.add(X, 1, signature=(None, None, np.float64))
    with pytest.raises(TypeError, match="axes"):
        np.matmul(q.ones(2, 2), q.ones(2, 2), axes=[(0, 1), (0, 1), (0, 1)])
    check(np.add(X, 1, order="C", subok=False), before + 1)
    ro = np.zeros(4)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        np.add(X, 1, out=ro)
    out = q.zeros(3, dtype="float64")
    with pytest.raises(ValueError, match="non-broadcastable"):
        np.add(X, 1, out=out)
    check(out, np.zeros(3))
    with pytest.raises(TypeError, match="kind"):
        np.add(X, 1, out=q.value(1.0))  # a scalar is not an output array
    with pytest.raises(TypeError):
        np.add(X, "a")
    with pytest.raises(TypeError):
        np.exp(q.value("text"))
    np.testing.assert_array_equal(X.to_py(), before)


# ---- reduce and accumulate ----


@pytest.mark.parametrize("ufunc", list(npp.HANDLED_REDUCTIONS), ids=ufunc_id)
def test_reduce_matches_numpy(ufunc):
    rng = np.random.default_rng(7)
    x = rng.uniform(0.5, 1.5, (3, 4, 5))
    if ufunc in (np.logical_and, np.logical_or):
        x = x > 0.9
    X = q.asvalue(x[:, ::-1])  # a non-contiguous view
    xv = x[:, ::-1]
    check(ufunc.reduce(X), ufunc.reduce(xv))  # NumPy's default axis is 0
    check(ufunc.reduce(X, axis=None), ufunc.reduce(xv, axis=None))
    check(ufunc.reduce(X, axis=(0, 2), keepdims=True), ufunc.reduce(xv, axis=(0, 2),
                                                                    keepdims=True))
    mask = rng.uniform(size=(4, 5)) > 0.3
    init = {np.maximum: 0.7, np.minimum: 1.1}.get(ufunc, None)
    kw = {} if init is None else {"initial": init}
    check(ufunc.reduce(X, axis=0, where=mask, **kw), ufunc.reduce(xv, axis=0, where=mask, **kw))
    if ufunc not in (np.logical_and, np.logical_or):
        check(ufunc.reduce(X, axis=2, initial=2.0), ufunc.reduce(xv, axis=2, initial=2.0))
        out = q.zeros(4, 5, dtype="float32")
        r = ufunc.reduce(X, axis=0, out=out)
        assert r is out
        check(out, ufunc.reduce(xv, axis=0).astype(np.float32))
    empty = np.zeros((0, 3), dtype=x.dtype)
    check(ufunc.reduce(q.asvalue(empty), axis=0, **kw), ufunc.reduce(empty, axis=0, **kw))


def test_reduce_dtypes_and_errors():
    i = np.arange(1, 13, dtype=np.int32).reshape(3, 4)
    I = q.value(i)
    check(np.add.reduce(I), np.add.reduce(i))  # int32 sums in int64, as NumPy
    check(np.add.reduce(I, dtype=np.int32), np.add.reduce(i, dtype=np.int32))
    check(np.multiply.reduce(I, axis=1, dtype=np.float64),
          np.multiply.reduce(i, axis=1, dtype=np.float64))
    check(np.add.reduce(I, axis=1, initial=-1.5), np.add.reduce(i, axis=1, initial=-1.5))
    with pytest.raises(ValueError, match="identity"):
        np.maximum.reduce(I, where=np.ones((3, 4), bool))
    with pytest.raises(ValueError):
        np.maximum.reduce(q.zeros(0, 3), axis=0)  # no identity, no elements
    with pytest.raises(IndexError):
        np.add.reduce(I, axis=2)
    with pytest.raises(TypeError, match="bogus"):
        np.add.reduce(I, bogus=1)
    np.testing.assert_array_equal(I.to_py(), i)


@pytest.mark.parametrize("ufunc", list(npp.HANDLED_ACCUMULATIONS), ids=ufunc_id)
def test_accumulate_matches_numpy(ufunc):
    x = np.random.default_rng(8).uniform(0.5, 1.5, (3, 4))
    X = q.asvalue(x.T)
    check(ufunc.accumulate(X), ufunc.accumulate(x.T))
    check(ufunc.accumulate(X, axis=1), ufunc.accumulate(x.T, axis=1))
    i = np.arange(1, 7, dtype=np.int16)
    check(ufunc.accumulate(q.value(i)), ufunc.accumulate(i))
    check(ufunc.accumulate(q.value(i), dtype=np.float32), ufunc.accumulate(i, dtype=np.float32))
    out = q.zeros(4, 3, dtype="float64")
    assert ufunc.accumulate(X, out=out) is out
    check(out, ufunc.accumulate(x.T))
    with pytest.raises(TypeError):
        ufunc.accumulate(q.value(1.0))


