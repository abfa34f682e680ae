# nextafter (q.nextafter, np.nextafter on qvalues, the array API's) against np.nextafter.
import numpy as np
import pytest

import isthmus as q
import isthmus.array_api as xp

rng = np.random.default_rng(11)
SPECIAL = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-30, -2.5, 65504.0, 6e-8, 3.4e38]


@pytest.fixture(autouse=True)
def cpu():
    q.init("cpu")


def reference(x, y):
    """np.nextafter with C's and the array API's rule where x == y: the result is y (so
    nextafter(-0.0, 0.0) is +0.0); NumPy's float16 loop returns x there instead."""
    x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y, dtype=np.asarray(x).dtype))
    with np.errstate(over="ignore"):  # stepping past the largest finite value is the point
        return np.where(x == y, y, np.nextafter(x, y))


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    u = f"u{a.itemsize}"
    # NaNs may differ in payload: compare them as NaN
    nan = np.isnan(a)
    return (nan == np.isnan(b)).all() and (a.view(u)[~nan] == b.view(u)[~nan]).all()


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_every_pair_of_special_values_and_random_ones(dtype):
    with np.errstate(over="ignore"):
        s = np.array(SPECIAL, dtype)
    x, y = np.meshgrid(s, s)
    assert same_bits(q.nextafter(x, y).to_py(), reference(x, y))
    with np.errstate(over="ignore"):
        r = (rng.standard_normal(1000) * 10.0 ** rng.integers(-8, 8, 1000)).astype(dtype)
    t = np.where(rng.random(1000) < 0.5, np.inf, -np.inf).astype(dtype)
    assert same_bits(q.nextafter(r, t).to_py(), reference(r, t))
    # strided, broadcast, reversed
    m = r.reshape(20, 50)
    assert same_bits(q.nextafter(m[::2, 1::3], m[1, :17]).to_py(),
                     reference(m[::2, 1::3], m[1, :17]))
    assert same_bits(q.nextafter(m[:, ::-1], 0.0).to_py(), reference(m[:, ::-1], 0.0))


def test_dtypes_scalars_and_empty():
    # integers and bool compute as floats (NumPy's rule), numbers beside arrays are weak
    for dt, out, to in (("int8", np.float16, 2), ("int16", np.float32, 2),
                        ("int64", np.float64, 2), ("bool", np.float16, True)):
        a = np.array([0, 1, 3], dt)
        r = q.nextafter(a, to).to_py()
        assert r.dtype == out and same_bits(r, np.nextafter(a, np.array(to, dt)))
    f = np.array([1.0, 2.0], np.float32)
    assert q.nextafter(f, 3.0).to_py().dtype == np.float32
    assert q.nextafter(1.0, 2.0).to_py() == np.nextafter(1.0, 2.0)
    assert q.nextafter(np.zeros((0, 3), np.float32), 1.0).shape == (0, 3)
    z = q.nextafter(q.full((), 1.0, dtype="float32"), q.full((), 0.0, dtype="float32"))
    assert z.shape == () and z.to_py() == np.nextafter(np.float32(1), np.float32(0))


def test_bfloat16_steps_in_its_own_format():
    x = q.value(np.array([1.0, -1.0, 0.0, 3.0e38, 1e-40, -0.0], np.float32)).astype("bfloat16")
    up = q.nextafter(x, q.full(x.shape, np.inf, dtype="bfloat16")).astype("float32").to_py()
    xs = x.astype("float32").to_py()
    np.testing.assert_array_equal(up[:2], [1.0 + 2.0 ** -7, -1.0 + 2.0 ** -8])
    assert up[2] == 2.0 ** -133 and up[5] == 2.0 ** -133  # the smallest subnormal
    assert up[3] > xs[3]
    down = q.nextafter(x, q.full(x.shape, -np.inf, dtype="bfloat16")).astype("float32").to_py()
    np.testing.assert_array_equal(down[:2], [1.0 - 2.0 ** -8, -1.0 - 2.0 ** -7])


def test_errors_and_protocols():
    c = np.array([1 + 1j])
    with pytest.raises(TypeError, match="real numbers"):
        q.nextafter(c, c)
    with pytest.raises(TypeError, match="x2"):
        q.nextafter(np.ones(2), "a")
    with pytest.raises(ValueError, match="broadcast"):
        q.nextafter(np.ones(2), np.ones(3))
    A = q.value(np.array([1.0, 2.0]))
    r = np.nextafter(A, 0.0)  # through __array_ufunc__: computed by isthmus
    assert isinstance(r, q.qvalue)
    assert same_bits(r.to_py(), np.nextafter(np.array([1.0, 2.0]), 0.0))
    np.testing.assert_array_equal(A.to_py(), [1.0, 2.0])
    X = xp.asarray(np.array([1.0, 0.0], np.float32))
    assert same_bits(np.asarray(xp.nextafter(X, 2.0)),
                     np.nextafter(np.array([1.0, 0.0], np.float32), np.float32(2)))
    with pytest.raises(TypeError, match="one dtype"):
        xp.nextafter(X, xp.asarray(np.ones(2)))
