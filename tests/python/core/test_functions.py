# Module-level ops (q.exp, q.add, q.where, q.sum, q.concatenate, q.arange, ...) against NumPy.
import ctypes

import numpy as np
import pytest

import isthmus as q


def rng(seed=0):
    return np.random.default_rng(seed)


def as_np(v):
    return v.to_py() if isinstance(v, q.qvalue) else np.asarray(v)


# (name, numpy function, input range): the inputs stay inside each function's domain.
UNARY = [
    ("negative", np.negative, (-3, 3)),
    ("abs", np.abs, (-3, 3)),
    ("absolute", np.absolute, (-3, 3)),
    ("sign", np.sign, (-3, 3)),
    ("exp", np.exp, (-3, 3)),
    ("log", np.log, (0.1, 3)),
    ("log2", np.log2, (0.1, 3)),
    ("log10", np.log10, (0.1, 3)),
    ("expm1", np.expm1, (-1, 1)),
    ("log1p", np.log1p, (-0.5, 3)),
    ("sqrt", np.sqrt, (0, 4)),
    ("rsqrt", lambda x: (1 / np.sqrt(x)).astype(np.asarray(x).dtype), (0.1, 4)),
    ("sin", np.sin, (-3, 3)),
    ("cos", np.cos, (-3, 3)),
    ("tan", np.tan, (-1, 1)),
    ("arcsin", np.arcsin, (-1, 1)),
    ("asin", np.arcsin, (-1, 1)),
    ("arccos", np.arccos, (-1, 1)),
    ("acos", np.arccos, (-1, 1)),
    ("arctan", np.arctan, (-3, 3)),
    ("atan", np.arctan, (-3, 3)),
    ("sinh", np.sinh, (-2, 2)),
    ("cosh", np.cosh, (-2, 2)),
    ("tanh", np.tanh, (-2, 2)),
    ("floor", np.floor, (-3, 3)),
    ("ceil", np.ceil, (-3, 3)),
    ("round", np.round, (-3, 3)),
    ("rint", np.rint, (-3, 3)),
    ("isnan", np.isnan, (-3, 3)),
    ("isinf", np.isinf, (-3, 3)),
    ("isfinite", np.isfinite, (-3, 3)),
    ("signbit", np.signbit, (-3, 3)),
    ("square", np.square, (-3, 3)),
    ("reciprocal", np.reciprocal, (0.5, 3)),
    ("logical_not", np.logical_not, (-1, 1)),
    ("conj", np.conj, (-3, 3)),
]


@pytest.mark.parametrize("name,ref,domain", UNARY, ids=[u[0] for u in UNARY])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_functions_match_numpy(name, ref, domain, dtype):
    x = rng(1).uniform(*domain, (5, 6)).astype(dtype)
    fn = getattr(q, name)
    rtol = 2e-6 if dtype == np.float32 else 1e-13
    for arr in (x, x[::2, ::-3], x.T, np.zeros((0, 3), dtype), np.asarray(x[1, 2])):
        got = fn(arr)  # a NumPy argument
        want = ref(arr)
        np.testing.assert_allclose(as_np(got), want, rtol=rtol, atol=1e-6)
        assert as_np(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(as_np(fn(q.value(arr))), want, rtol=rtol, atol=1e-6)


def test_signbit_reads_the_sign_bit_like_numpy():
    nan = float("nan")
    x = np.array([1.5, -1.5, 0.0, -0.0, np.inf, -np.inf, nan, np.copysign(nan, -1), -5e-324])
    for dt in (np.float64, np.float32, np.float16):
        a = x.astype(dt)
        np.testing.assert_array_equal(q.signbit(a).to_py(), np.signbit(a))
        got = np.signbit(q.value(a))  # NumPy's ufunc on a qvalue computes in isthmus
        assert isinstance(got, q.qvalue) and got.dtype == np.bool_
        np.testing.assert_array_equal(np.asarray(got), np.signbit(a))
    for ints in (np.array([-128, -1, 0, 127], np.int8), np.array([0, 255], np.uint8),
                 np.array([-2**63, 2**63 - 1], np.int64), np.array([True, False])):
        np.testing.assert_array_equal(q.signbit(ints).to_py(), np.signbit(ints))
    assert bool(q.signbit(-0.0)) and not bool(q.signbit(0.0))
    z = q.value(np.array([-1 + 0j]))
    with pytest.raises(TypeError, match="complex numbers have no sign bit"):
        q.signbit(z)
    np.testing.assert_array_equal(np.asarray(z), [-1 + 0j])  # unchanged, process alive


def test_unary_function_on_python_numbers_and_lists():
    s = q.exp(1.0)
    assert isinstance(s, q.qvalue) and s.kind == "scalar"
    assert float(s) == pytest.approx(np.e, rel=1e-6)
    np.testing.assert_allclose(q.sqrt([1.0, 4.0, 9.0]).to_py(), [1, 2, 3])
    np.testing.assert_array_equal(q.bitwise_not(np.array([1, 2], np.int8)).to_py(),
                                  ~np.array([1, 2], np.int8))
    np.testing.assert_array_equal(q.invert([True, False]).to_py(), [False, True])


BINARY = [
    ("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
    ("divide", np.divide), ("true_divide", np.true_divide), ("floor_divide", np.floor_divide),
    ("mod", np.mod), ("remainder", np.remainder), ("power", np.power), ("pow", np.power),
    ("maximum", np.maximum), ("minimum", np.minimum), ("arctan2", np.arctan2),
    ("atan2", np.arctan2), ("equal", np.equal), ("not_equal", np.not_equal),
    ("less", np.less), ("less_equal", np.less_equal), ("greater", np.greater),
    ("greater_equal", np.greater_equal), ("logical_and", np.logical_and),
    ("logical_or", np.logical_or), ("logical_xor", np.logical_xor),
]


@pytest.mark.parametrize("name,ref", BINARY, ids=[b[0] for b in BINARY])
def test_binary_functions_match_numpy(name, ref):
    r = rng(2)
    x = r.uniform(0.5, 3, (4, 5)).round(1).astype(np.float32)
    y = r.uniform(0.5, 3, (5,)).round(1).astype(np.float32)
    fn = getattr(q, name)
    np.testing.assert_allclose(fn(x, y).to_py(), ref(x, y), rtol=2e-6)  # broadcast
    np.testing.assert_allclose(fn(q.value(x.T), y[:4]).to_py(), ref(x.T, y[:4]), rtol=2e-6)
    np.testing.assert_allclose(fn(x, 2).to_py(), ref(x, 2), rtol=2e-6)  # weak scalar
    assert fn(x, 2).dtype == ref(x, 2).dtype
    empty = np.zeros((0, 5), np.float32)
    assert fn(empty, y).shape == ref(empty, y).shape


@pytest.mark.parametrize("name,ref", [("bitwise_and", np.bitwise_and),
                                      ("bitwise_or", np.bitwise_or),
                                      ("bitwise_xor", np.bitwise_xor),
                                      ("left_shift", np.left_shift),
                                      ("right_shift", np.right_shift)])
def test_integer_binary_functions(name, ref):
    x = rng(3).integers(-50, 50, (3, 4)).astype(np.int32)
    y = rng(4).integers(0, 5, (4,)).astype(np.int32)
    np.testing.assert_array_equal(getattr(q, name)(x, y).to_py(), ref(x, y))


def test_binary_function_scalars_give_scalars():
    s = q.add(2, 3)
    assert isinstance(s, q.qvalue) and s.kind == "scalar" and int(s) == 5


def test_where_clip_fma():
    r = rng(5)
    c = r.uniform(size=(3, 4)) > 0.5
    a = r.normal(size=(3, 4)).astype(np.float32)
    b = r.normal(size=(4,)).astype(np.float64)
    np.testing.assert_array_equal(q.where(c, a, b).to_py(), np.where(c, a, b))
    np.testing.assert_array_equal(q.where(c, a, 0).to_py(), np.where(c, a, np.float32(0)))
    assert q.where(c, a, 0).dtype == np.float32
    np.testing.assert_array_equal(q.where(c, 1.5, b).to_py(), np.where(c, 1.5, b))
    for got, want in zip(q.where(c), np.where(c)):
        np.testing.assert_array_equal(got.to_py(), want)
    np.testing.assert_array_equal(q.clip(a, -0.5, 0.5).to_py(), np.clip(a, -0.5, 0.5))
    np.testing.assert_array_equal(q.clip(a, None, 0.5).to_py(), np.clip(a, None, 0.5))
    np.testing.assert_array_equal(q.clip(a, -0.5, None).to_py(), np.clip(a, -0.5, None))
    lo = np.full((4,), -0.2, np.float32)
    np.testing.assert_array_equal(q.clamp(a, lo, 0.3).to_py(), np.clip(a, lo, 0.3))
    np.testing.assert_array_equal(q.value(a).clip(max=0.1).to_py(), np.clip(a, None, 0.1))
    x, y, z = (r.normal(size=(50,)) for _ in range(3))
    np.testing.assert_allclose(q.fma(x, y, z).to_py(), x * y + z, rtol=1e-14)


def test_real_imag_views():
    z = (rng(6).normal(size=4) + 1j * rng(7).normal(size=4)).astype(np.complex64)
    Z = q.value(z)
    np.testing.assert_array_equal(q.real(Z).to_py(), z.real)
    np.testing.assert_array_equal(Z.imag.to_py(), z.imag)
    Z.real.fill(2.0)  # a view: writes go through
    np.testing.assert_array_equal(Z.to_py().real, np.full(4, 2.0, np.float32))
    np.testing.assert_array_equal(q.imag(np.arange(3.0)).to_py(), np.zeros(3))


def test_linalg_functions():
    r = rng(8)
    a = r.normal(size=(3, 4))
    b = r.normal(size=(4, 2))
    v = r.normal(size=4)
    np.testing.assert_allclose(q.matmul(a, b).to_py(), a @ b, rtol=1e-12)
    np.testing.assert_allclose(q.dot(a, b).to_py(), np.dot(a, b), rtol=1e-12)
    np.testing.assert_allclose(float(q.dot(v, v)), np.dot(v, v), rtol=1e-12)
    np.testing.assert_allclose(float(q.vdot(v, v)), np.vdot(v, v), rtol=1e-12)
    np.testing.assert_allclose(q.inner(a, v).to_py(), np.inner(a, v), rtol=1e-12)
    np.testing.assert_allclose(q.value(a).dot(b).to_py(), a @ b, rtol=1e-12)


REDUCTIONS = ["sum", "prod", "mean", "min", "max", "amin", "amax", "any", "all", "var", "std"]


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction_functions(name):
    x = rng(9).uniform(0.5, 1.5, (3, 4, 5))
    ref = getattr(np, name)
    fn = getattr(q, name)
    for arr in (x, x[:, ::2, ::-1], x.transpose(2, 0, 1)):
        for axis in (None, 0, -1, (0, 2)):
            for keepdims in (False, True):
                np.testing.assert_allclose(as_np(fn(arr, axis=axis, keepdims=keepdims)),
                                           ref(arr, axis=axis, keepdims=keepdims), rtol=1e-12)
    s = fn(x)
    assert isinstance(s, q.qvalue) and s.kind == "scalar"  # a 0-d result is a scalar


def test_var_std_ddof_and_arg_reductions():
    x = rng(10).normal(size=(6, 7))
    np.testing.assert_allclose(q.var(x, axis=0, ddof=1).to_py(), x.var(axis=0, ddof=1))
    np.testing.assert_allclose(float(q.std(x, ddof=1)), x.std(ddof=1))
    assert int(q.argmax(x)) == x.argmax()
    np.testing.assert_array_equal(q.argmin(x, axis=1).to_py(), x.argmin(axis=1))
    np.testing.assert_array_equal(q.argmax(x, axis=0, keepdims=True).to_py(),
                                  x.argmax(axis=0, keepdims=True))


def test_scans():
    x = rng(11).integers(1, 4, (3, 4)).astype(np.int64)
    np.testing.assert_array_equal(q.cumsum(x).to_py(), np.cumsum(x))
    np.testing.assert_array_equal(q.cumprod(x, axis=1).to_py(), np.cumprod(x, axis=1))
    np.testing.assert_array_equal(q.value(x).cumsum(0).to_py(), x.cumsum(0))
    np.testing.assert_array_equal(q.value(x).cumprod().to_py(), x.cumprod())


def test_shape_functions():
    r = rng(12)
    a = r.normal(size=(2, 3)).astype(np.float32)
    b = r.normal(size=(2, 3))
    np.testing.assert_array_equal(q.concatenate([a, b]).to_py(), np.concatenate([a, b]))
    np.testing.assert_array_equal(q.concat((a, b), axis=1).to_py(), np.concatenate((a, b), 1))
    np.testing.assert_array_equal(q.stack([a, a], axis=2).to_py(), np.stack([a, a], axis=2))
    x = np.arange(12.0).reshape(3, 4)
    for got, want in zip(q.split(x, 2, axis=1), np.split(x, 2, axis=1)):
        np.testing.assert_array_equal(got.to_py(), want)
    for got, want in zip(q.split(x, [1, 3], axis=1), np.split(x, [1, 3], axis=1)):
        np.testing.assert_array_equal(got.to_py(), want)
    for got, want in zip(q.array_split(x, 3, axis=1), np.array_split(x, 3, axis=1)):
        np.testing.assert_array_equal(got.to_py(), want)
    np.testing.assert_array_equal(q.flip(x).to_py(), np.flip(x))
    np.testing.assert_array_equal(q.flip(x, 1).to_py(), np.flip(x, 1))
    np.testing.assert_array_equal(q.tile(x, (2, 1)).to_py(), np.tile(x, (2, 1)))
    np.testing.assert_array_equal(q.repeat(x, 2, axis=0).to_py(), np.repeat(x, 2, axis=0))
    np.testing.assert_array_equal(q.repeat(x, [1, 0, 2], axis=0).to_py(),
                                  np.repeat(x, [1, 0, 2], axis=0))
    np.testing.assert_array_equal(q.repeat(x, 2).to_py(), np.repeat(x, 2))
    for mode in ("constant", "edge", "reflect", "symmetric", "wrap"):
        np.testing.assert_array_equal(q.pad(x, ((1, 2), (0, 1)), mode=mode).to_py(),
                                      np.pad(x, ((1, 2), (0, 1)), mode=mode))
    np.testing.assert_array_equal(q.pad(x, 1, constant_values=7).to_py(),
                                  np.pad(x, 1, constant_values=7))
    np.testing.assert_array_equal(q.reshape(x, (2, -1)).to_py(), x.reshape(2, -1))
    np.testing.assert_array_equal(q.transpose(x).to_py(), x.T)
    y = r.normal(size=(2, 1, 3, 1))
    np.testing.assert_array_equal(q.transpose(y, (2, 0, 3, 1)).to_py(), y.transpose(2, 0, 3, 1))
    np.testing.assert_array_equal(q.squeeze(y).to_py(), np.squeeze(y))
    np.testing.assert_array_equal(q.squeeze(y, axis=(1, 3)).to_py(), np.squeeze(y, (1, 3)))
    np.testing.assert_array_equal(q.expand_dims(x, 1).to_py(), np.expand_dims(x, 1))
    np.testing.assert_array_equal(q.broadcast_to([1, 2, 3], (2, 3)).to_py(),
                                  np.broadcast_to([1, 2, 3], (2, 3)))
    np.testing.assert_array_equal(q.ravel(x.T).to_py(), np.ravel(x.T))


def test_indexing_functions():
    r = rng(13)
    x = r.normal(size=(4, 5))
    m = x > 0
    for got, want in zip(q.nonzero(m), np.nonzero(m)):
        np.testing.assert_array_equal(got.to_py(), want)
    np.testing.assert_array_equal(q.argwhere(m).to_py(), np.argwhere(m))
    idx = np.array([0, 3, 3, 1])
    np.testing.assert_array_equal(q.take(x, idx).to_py(), np.take(x, idx))
    np.testing.assert_array_equal(q.take(x, idx, axis=1).to_py(), np.take(x, idx, axis=1))
    order = np.argsort(x, axis=1)
    np.testing.assert_array_equal(q.take_along_axis(x, order, 1).to_py(),
                                  np.take_along_axis(x, order, 1))
    X = q.value(x)
    y = x.copy()
    q.put_along_axis(X, order[:, :1], -1.0, 1)
    np.put_along_axis(y, order[:, :1], -1.0, 1)
    np.testing.assert_array_equal(X.to_py(), y)


def test_creation_functions():
    np.testing.assert_array_equal(q.arange(5).to_py(), np.arange(5))
    assert q.arange(5).dtype == np.int64
    np.testing.assert_array_equal(q.arange(2, 11, 3).to_py(), np.arange(2, 11, 3))
    np.testing.assert_allclose(q.arange(0.0, 1.0, 0.25).to_py(), [0, 0.25, 0.5, 0.75])
    assert q.arange(0.0, 1.0, 0.25).dtype == np.float32  # the `scalar` dtype
    assert q.arange(3, dtype="float64").dtype == np.float64
    np.testing.assert_allclose(q.linspace(0, 1, 5).to_py(), np.linspace(0, 1, 5), rtol=1e-7)
    np.testing.assert_allclose(q.linspace(0, 1, 4, endpoint=False, dtype=np.float64).to_py(),
                               np.linspace(0, 1, 4, endpoint=False))
    np.testing.assert_array_equal(q.eye(3, 4, k=1).to_py(), np.eye(3, 4, k=1, dtype=np.float32))
    f = q.full((2, 3), 7)
    assert f.dtype == np.int64 and (f.to_py() == 7).all()
    assert q.full((2,), 1.5, dtype=np.float64).dtype == np.float64
    x = np.ones((2, 3), np.int16)
    assert q.zeros_like(x).dtype == np.int16 and not q.zeros_like(x).to_py().any()
    assert q.ones_like(x, dtype=np.float64).dtype == np.float64
    np.testing.assert_array_equal(q.full_like(x, 4).to_py(), np.full_like(x, 4))
    assert q.uninit_like(x).shape == (2, 3)
    c = q.copy(x[:, ::2])
    assert c.is_contiguous() and c.shape == (2, 2)


def test_random_functions_are_seeded_and_in_range():
    q.manual_seed(42)
    a = q.rand(1000)
    q.manual_seed(42)
    b = q.rand((1000,))
    np.testing.assert_array_equal(a.to_py(), b.to_py())
    assert 0 <= float(a.min()) and float(a.max()) < 1
    n = q.randn(size=(200, 100), dtype="float64").to_py()
    assert n.dtype == np.float64 and abs(n.mean()) < 0.05 and abs(n.std() - 1) < 0.05
    i = q.randint(3, 9, size=500).to_py()
    assert i.dtype == np.int64 and i.min() >= 3 and i.max() < 9 and len(set(i)) == 6
    assert q.randint(4, size=(2, 2)).shape == (2, 2)
    u = q.uniform(-2, -1, size=300).to_py()
    assert u.min() >= -2 and u.max() < -1
    g = q.normal(10.0, 0.5, size=5000).to_py()
    assert abs(g.mean() - 10) < 0.05 and abs(g.std() - 0.5) < 0.05


def test_memcpy_between_locked_tensors():
    src = q.value(np.arange(10, dtype=np.float64))
    dst = q.zeros(10, dtype="float64")
    ps = src.lock(q.LOCK_READ)
    pd = dst.lock(q.LOCK_WRITE)
    try:
        q.memcpy(pd, ps, 8 * 5)
    finally:
        src.unlock(q.LOCK_READ)
        dst.unlock(q.LOCK_WRITE)
    np.testing.assert_array_equal(dst.to_py(), [0, 1, 2, 3, 4, 0, 0, 0, 0, 0])
    # ctypes buffers and pointers work too; overlapping ranges behave like memmove.
    buf = (ctypes.c_char * 8)(*b"abcdefgh")
    q.memcpy(ctypes.addressof(buf) + 2, ctypes.cast(buf, ctypes.c_void_p), 4)
    assert bytes(buf) == b"ababcdgh"
    q.memcpy(0, 0, 0)  # nothing to copy: fine


def test_memcpy_bad_input():
    buf = ctypes.create_string_buffer(4)
    with pytest.raises(ValueError, match="nbytes must be >= 0"):
        q.memcpy(ctypes.addressof(buf), ctypes.addressof(buf), -1)
    with pytest.raises(ValueError, match="null dst_ptr"):
        q.memcpy(0, ctypes.addressof(buf), 4)
    with pytest.raises(TypeError, match="src_ptr must be an address"):
        q.memcpy(ctypes.addressof(buf), "abc", 1)
    with pytest.raises(TypeError, match="nbytes must be an int"):
        q.memcpy(ctypes.addressof(buf), ctypes.addressof(buf), 1.5)


def test_function_bad_input_is_typed_and_harmless():
    x = q.value([1.0, 2.0])
    with pytest.raises(TypeError, match="add: unsupported operand types"):
        q.add(x, "a")
    with pytest.raises(TypeError, match="exp: expected"):
        q.exp("a")
    with pytest.raises(ValueError):
        q.add(np.ones(3), np.ones(4))  # shapes do not broadcast
    with pytest.raises(TypeError, match="where: give both"):
        q.where([True, False], x)
    with pytest.raises(ValueError, match="clip: give at least one"):
        q.clip(x, None, None)
    with pytest.raises(TypeError, match="concatenate: expected a sequence"):
        q.concatenate(x)
    with pytest.raises(ValueError):
        q.split(np.arange(5), 2)  # 2 does not divide 5
    with pytest.raises(ValueError):
        q.pad(np.arange(3), 1, mode="bogus")
    with pytest.raises(TypeError, match="rand\\(\\) got an unexpected keyword argument 'bogus'"):
        q.rand(2, bogus=3)
    with pytest.raises(ValueError, match="negative size"):
        q.randint(5, size=-1)
    with pytest.raises(IndexError):
        q.sum(np.ones((2, 2)), axis=5)
    np.testing.assert_array_equal(x.to_py(), [1.0, 2.0])  # unchanged


def test_functions_need_init(run_python):
    res = run_python(
        """
        import isthmus as q
        try:
            q.exp(1.0)
        except RuntimeError as e:
            print("raised:", e)
        """
    )
    assert "raised: exp: isthmus is not initialised" in res.stdout
