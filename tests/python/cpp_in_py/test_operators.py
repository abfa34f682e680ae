# qvalue operators and ops: arithmetic, comparisons, in-place forms, reductions, advanced indexing.
import operator

import numpy as np
import pytest

import isthmus as q


def test_seed_example_1():
    a = q.value([5, 4, 3, 2, 1]) + q.value(2.0)
    out = a.to_py()
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out, [7.0, 6.0, 5.0, 4.0, 3.0])


BINARY = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
          operator.mod, operator.pow]


@pytest.mark.parametrize("op", BINARY)
def test_binary_matches_numpy(op):
    rng = np.random.default_rng(1)
    x = rng.uniform(1, 3, (3, 4)).astype(np.float32)
    y = rng.uniform(1, 3, (4,)).astype(np.float32)
    X, Y = q.value(x), q.value(y)
    np.testing.assert_allclose(op(X, Y).to_py(), op(x, y), rtol=1e-5)
    np.testing.assert_allclose(op(X, 2).to_py(), op(x, 2), rtol=1e-5)  # Python number
    np.testing.assert_allclose(op(2.5, X).to_py(), op(2.5, x), rtol=1e-5)  # reflected
    np.testing.assert_allclose(op(X, y).to_py(), op(x, y), rtol=1e-5)  # NumPy operand
    r = op(x, Y)  # NumPy on the left defers to qvalue
    assert isinstance(r, q.qvalue)
    np.testing.assert_allclose(r.to_py(), op(x, y), rtol=1e-5)
    assert op(X, Y).dtype == op(x, y).dtype


def test_integer_ops_and_bitwise():
    x = np.array([5, -3, 8, 0], dtype=np.int32)
    X = q.value(x)
    for op in (operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift):
        np.testing.assert_array_equal(op(X, 1).to_py(), op(x, 1))
    np.testing.assert_array_equal((~X).to_py(), ~x)
    np.testing.assert_array_equal((X // 2).to_py(), x // 2)
    np.testing.assert_array_equal((X % 3).to_py(), x % 3)
    assert (X + 1).dtype == np.int32  # weak Python scalar
    assert (X + np.int64(1)).dtype == np.int64  # strong NumPy scalar


def test_unary_and_not():
    X = q.value([1.0, -2.0, 0.0])
    np.testing.assert_array_equal((-X).to_py(), [-1.0, 2.0, -0.0])
    np.testing.assert_array_equal(abs(X).to_py(), [1.0, 2.0, 0.0])
    np.testing.assert_array_equal((+X).to_py(), X.to_py())
    B = q.value([True, False])
    np.testing.assert_array_equal((~B).to_py(), [False, True])
    np.testing.assert_array_equal(q.not_(X).to_py(), [False, False, True])
    with pytest.raises(TypeError):
        ~X  # bitwise not of floats
    s = -q.value(2.0)
    assert s.kind == "scalar" and float(s) == -2.0


def test_comparisons():
    x = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    X = q.value(x)
    for op in (operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge):
        r = op(X, 2)
        assert r.dtype == np.bool_
        np.testing.assert_array_equal(r.to_py(), op(x, 2))
        np.testing.assert_array_equal(op(2, X).to_py(), op(2, x))
    assert (q.value("ab") == "ab") and (q.value("ab") != "cd")
    assert (X == None) is False  # noqa: E711
    assert q.value(2.0) == 2.0
    with pytest.raises(TypeError):
        hash(X)


def test_matmul():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4, 2)).astype(np.float32)
    A, B = q.value(a), q.value(b)
    np.testing.assert_allclose((A @ B).to_py(), a @ b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose((a @ B).to_py(), a @ b, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError):
        A @ A


def test_inplace_ops_write_into_the_same_memory():
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    A = q.from_py(x)
    before = id(A)
    A += 1
    A *= q.value([1.0, 2.0, 3.0])
    A -= np.ones(3)
    A /= 2
    assert id(A) == before
    want = ((np.arange(6.0).reshape(2, 3) + 1) * [1, 2, 3] - 1) / 2
    np.testing.assert_allclose(x, want)  # shared with the NumPy source
    I = q.value([1, 2, 3], dtype="int32")
    with pytest.raises(TypeError):
        I /= 2  # same_kind: a float result does not go into an int tensor
    assert I.to_py().tolist() == [1, 2, 3]
    with pytest.raises(ValueError):
        A += q.zeros(4)  # does not broadcast
    np.testing.assert_allclose(x, want)
    s = q.value(1.0)
    s += 1  # scalars fall back to s = s + 1
    assert float(s) == 2.0


def test_bad_operands():
    X = q.zeros(3)
    with pytest.raises(TypeError):
        X + "a"
    with pytest.raises(TypeError):
        X + object()
    with pytest.raises(ValueError):
        X + q.zeros(4)
    with pytest.raises(TypeError):
        q.value([True]) - q.value([False])
    assert X.to_py().tolist() == [0, 0, 0]


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "min", "max", "any", "all", "var",
                                  "std", "argmin", "argmax"])
def test_reductions_match_numpy(name):
    rng = np.random.default_rng(3)
    x = rng.uniform(0.5, 1.5, (3, 4, 5))
    X = q.value(x, dtype="float64")
    full = getattr(X, name)()
    assert full.kind == "scalar"
    np.testing.assert_allclose(float(full), getattr(x, name)(), rtol=1e-10)
    np.testing.assert_allclose(getattr(X, name)(axis=1).to_py(), getattr(x, name)(axis=1),
                               rtol=1e-10)
    if name not in ("argmin", "argmax"):
        np.testing.assert_allclose(getattr(X, name)(axis=(0, 2), keepdims=True).to_py(),
                                   getattr(x, name)(axis=(0, 2), keepdims=True), rtol=1e-10)
    with pytest.raises(IndexError):
        getattr(X, name)(axis=3)


def test_advanced_indexing():
    x = np.arange(20).reshape(4, 5)
    X = q.value(x)
    np.testing.assert_array_equal(X[np.array([0, 2])].to_py(), x[[0, 2]])
    np.testing.assert_array_equal(X[[3, 1], 1:3].to_py(), x[[3, 1], 1:3])
    np.testing.assert_array_equal(X[X > 10].to_py(), x[x > 10])
    X[X > 15] = 0
    x[x > 15] = 0
    np.testing.assert_array_equal(X.to_py(), x)
    X[np.array([0, 1]), 0] = q.value([100, 200])
    x[[0, 1], 0] = [100, 200]
    np.testing.assert_array_equal(X.to_py(), x)
    with pytest.raises(IndexError):
        X[np.array([7])]
    with pytest.raises(IndexError):
        X[np.array([0.5])]
    np.testing.assert_array_equal(X.to_py(), x)


def test_numpy_float_scalars_are_strong_and_exact():
    # np.float64 / np.complex128 subclass Python's float / complex but are NumPy scalars:
    # strong operands that keep their dtype and value (Note [numpy float scalars]).
    X = q.value(np.ones(3, np.float32))
    assert (X + np.float64(1.5)).dtype == np.float64
    assert (X + 1.5).dtype == np.float32  # a Python float stays weak
    assert (X * np.complex128(1j)).dtype == np.complex128
    s = q.value(np.float64(0.1))
    assert s.dtype == np.float64 and float(s) == 0.1
    assert q.value(0.1).dtype == np.float32  # the `scalar` precision for Python floats


@pytest.mark.parametrize("op", BINARY)
def test_python_floats_keep_their_precision_beside_float64(op):
    # See Note [python numbers at full precision]: 0.1 was read at the `scalar` precision (float32)
    # before a float64 tensor saw it, so x + 0.1 added 0.100000001490116
    x = np.random.default_rng(7).uniform(1, 3, 11)
    X = q.value(x)
    for k in (0.1, 1 / 3, 2.0 ** -40 + 1.0):
        for got, want in ((op(X, k), op(x, k)), (op(k, X), op(k, x))):
            assert got.dtype == np.float64
            if op is operator.pow:  # another pow than NumPy's: within an ulp
                np.testing.assert_allclose(got.to_py(), want, rtol=4e-16)
            else:
                np.testing.assert_array_equal(got.to_py(), want)
    Z = q.value(x.astype(np.complex128))
    np.testing.assert_array_equal((Z * (0.1 + 0.2j)).to_py(),
                                  x.astype(np.complex128) * (0.1 + 0.2j))
    Y = q.value(x.copy())
    Y += 0.1
    np.testing.assert_array_equal(Y.to_py(), x + 0.1)


def test_python_numbers_stay_weak_beside_scalar_qvalues():
    s = q.value(np.float32(1.5))  # a float32 scalar qvalue
    f32 = np.float32  # the expected values spelled out: NumPy 1 (the install test's) promotes
    for got, want in ((s + 2, f32(3.5)), (2 * s, f32(3.0)),  # its scalars by value
                      (s + 0.1, f32(1.5) + f32(0.1)), (True + s, f32(2.5))):
        assert got.kind == "scalar" and got.dtype == want.dtype == np.float32
        assert float(got) == float(want)
    assert (q.value(3) + 0.5).dtype == np.float64  # int64 with a Python float: float64 (NumPy)
    u = q.value(np.uint8(200))
    with pytest.raises(OverflowError, match="300 out of bounds for uint8"):
        u + 300
    # two Python numbers (module functions): the higher kind at the `scalar` precision
    r = q.add(0.1, 2)
    assert r.dtype == np.float32 and float(r) == float(np.float32(0.1) + np.float32(2))
    assert q.add(2, 3).dtype == np.int64


def test_python_float_bounds_and_ranges_are_exact():
    c = np.array([True, False, True])
    np.testing.assert_array_equal(q.where(c, 0.1, 0.2).to_py(), np.where(c, 0.1, 0.2))
    np.testing.assert_array_equal(q.arange(0, 1, 0.1, dtype="float64").to_py(),
                                  np.arange(0, 1, 0.1))
    np.testing.assert_array_equal(q.arange(0.1, 2.3, 0.7, dtype="float64").to_py(),
                                  np.arange(0.1, 2.3, 0.7))
    a = np.random.default_rng(3).normal(size=(3, 4)).astype(np.float32)
    lo = np.full((4,), -0.2, np.float32)
    got = q.clamp(a, lo, 0.3)  # a tensor bound and a Python float: the float stays weak
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got.to_py(), np.clip(a, lo, 0.3))
    x = np.random.default_rng(4).normal(size=7)
    np.testing.assert_array_equal(q.clamp(x, -0.1, 0.3).to_py(), np.clip(x, -0.1, 0.3))


@pytest.mark.parametrize("name", ["argmin", "argmax"])
def test_flat_arg_reductions_keep_dims(name):
    x = np.random.default_rng(5).normal(size=(3, 4, 2))
    for f in (getattr(q, name), lambda a, **kw: getattr(q.value(a), name)(**kw)):
        got = f(x, axis=None, keepdims=True)
        want = getattr(np, name)(x, axis=None, keepdims=True)
        assert got.kind == "tensor" and got.shape == want.shape == (1, 1, 1)
        np.testing.assert_array_equal(got.to_py(), want)
        flat = f(x, axis=None)
        assert flat.kind == "scalar" and int(flat) == int(getattr(np, name)(x))


COMPARISONS = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]


@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.0.0",
                    reason="NumPy 1 casts the Python integer instead of comparing by value")
@pytest.mark.parametrize("dt", ["uint8", "int8", "int16", "uint32", "int64", "uint64"])
def test_comparisons_with_integers_out_of_the_dtype_range(dt):
    # See Note [comparisons with out-of-range integers]: by value, as NumPy 2 (uint8 == -1 is all
    # False), where arithmetic with such a number raises OverflowError
    x = np.array([0, 1, 100, np.iinfo(dt).max], dt)
    X = q.value(x)
    for k in (-1, 300, -129, 70000, 2**63, 2**64 - 1, -2**63):
        for op in COMPARISONS:
            for got, want in ((op(X, k), op(x, k)), (op(k, X), op(k, x))):
                assert got.dtype == np.bool_
                np.testing.assert_array_equal(got.to_py(), want)
    if dt == "uint8":
        with pytest.raises(OverflowError):
            X + 300
        assert (q.value(x[:0]) == -1).shape == (0,)
