# The array API namespace (isthmus.array_api) against array-api-strict, the standard's reference.
import math

import numpy as np
import pytest

import isthmus as q

xps = pytest.importorskip("array_api_strict")
import isthmus.array_api as xp  # noqa: E402  (starts a CPU session if none runs)

RNG = np.random.default_rng(16)
FLOATS = ["float32", "float64"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
COMPLEX = ["complex64", "complex128"]


def sample(shape, dtype, special=True):
    """Random values of dtype and shape, with NaN, inf and -0.0 among the floats."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return RNG.random(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = max(info.min, -100), min(info.max, 100)
        return RNG.integers(lo, hi, size=shape, endpoint=True).astype(dt)
    a = RNG.standard_normal(shape) * 3
    if dt.kind == "c":
        a = a + 1j * RNG.standard_normal(shape) * 3
    a = a.astype(dt)
    if special and a.size >= 5:
        flat = a.reshape(-1)
        flat[:4] = [np.nan, np.inf, -np.inf, -0.0]
    return a


def layouts(shape, dtype, special=True):
    """The same kind of data contiguous, strided, broadcast, empty and 0-d."""
    big = sample((shape[0] * 2,) + tuple(shape[1:]), dtype, special)
    yield sample(shape, dtype, special)
    yield big[::2]
    yield np.broadcast_to(sample(shape[-1:], dtype, special), shape)
    yield sample((0,) + tuple(shape[1:]), dtype, special)
    yield sample((), dtype, special)


def both(a):
    """The array in both namespaces (the isthmus one shares a's memory where it can)."""
    return xp.asarray(a), xps.asarray(np.array(a))


def check(got, ref, rtol=1e-6, atol=1e-12, exact=False):
    """got (isthmus) equals ref (array-api-strict): dtype, shape and values (NaN == NaN)."""
    assert isinstance(got, q.qvalue) and got.kind == "tensor", got
    r = np.asarray(ref)
    g = np.asarray(got)
    assert g.dtype == r.dtype, (g.dtype, r.dtype)
    assert g.shape == r.shape, (g.shape, r.shape)
    if exact or r.dtype.kind in "biu":
        np.testing.assert_array_equal(g, r)
    else:
        tol = 1e-5 if r.dtype in (np.float32, np.complex64) else rtol
        np.testing.assert_allclose(g, r, rtol=tol, atol=atol, equal_nan=True)


# ---- elementwise ----

UNARY_FLOAT = ["abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh",
               "exp", "expm1", "floor", "isfinite", "isinf", "isnan", "log", "log1p", "log2",
               "log10", "negative", "positive", "round", "sign", "signbit", "sin", "sinh",
               "square", "sqrt", "tan", "tanh", "trunc", "reciprocal"]
UNARY_INT = ["abs", "negative", "positive", "sign", "square", "bitwise_invert", "ceil", "floor",
             "round", "trunc", "isnan", "isfinite"]
UNARY_COMPLEX = ["abs", "exp", "log", "sqrt", "negative", "conj", "real", "imag", "isnan",
                 "isinf", "isfinite", "square", "sin", "cosh", "tanh", "sign"]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", sorted(set(UNARY_FLOAT + UNARY_INT + UNARY_COMPLEX)))
def test_unary(name):
    dtypes = (FLOATS if name in UNARY_FLOAT else []) + (["int8", "int64", "uint16"]
              if name in UNARY_INT else []) + (COMPLEX if name in UNARY_COMPLEX else [])
    for dt in dtypes:
        for a in layouts((3, 5), dt):
            x, s = both(a)
            with np.errstate(all="ignore"):
                ref = getattr(xps, name)(s)
            check(getattr(xp, name)(x), ref, rtol=1e-5)


BINARY_FLOAT = ["add", "atan2", "copysign", "divide", "equal", "floor_divide", "greater",
                "greater_equal", "hypot", "less", "less_equal", "logaddexp", "maximum", "minimum",
                "multiply", "not_equal", "pow", "remainder", "subtract", "nextafter"]
BINARY_INT = ["add", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
              "bitwise_right_shift", "equal", "floor_divide", "greater", "less", "maximum",
              "minimum", "multiply", "remainder", "subtract"]
BINARY_BOOL = ["logical_and", "logical_or", "logical_xor", "equal", "not_equal", "bitwise_and"]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", sorted(set(BINARY_FLOAT + BINARY_INT + BINARY_BOOL)))
def test_binary(name):
    dtypes = (FLOATS if name in BINARY_FLOAT else []) + (["int16", "int64", "uint8"]
              if name in BINARY_INT else []) + (["bool"] if name in BINARY_BOOL else [])
    for dt in dtypes:
        for a in layouts((4, 3), dt):
            b = sample(a.shape[-1:], dt)  # broadcast against a
            if name in ("bitwise_left_shift", "bitwise_right_shift"):
                b = np.abs(b) % 6
            if name in ("floor_divide", "remainder") and dt not in FLOATS:
                b[b == 0] = 1
            if name == "pow" and dt in FLOATS:
                a = np.abs(a)
            x, s = both(a)
            y, t = both(b)
            with np.errstate(all="ignore"):
                ref = getattr(xps, name)(s, t)
                if name == "floor_divide" and dt in FLOATS:
                    # the standard's special cases: inf // finite is inf (NumPy: NaN)
                    ref = np.where(np.isinf(a) | np.isinf(b), np.floor(a / b), np.asarray(ref))
            check(getattr(xp, name)(x, y), ref, rtol=1e-5)


@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "uint8"])
def test_python_scalars_are_weak_and_exact(dt):
    a = sample((6,), dt, special=False)
    x, s = both(a)
    for v in (3, 0.1) if dt in FLOATS else (3,):
        check(xp.add(x, v), xps.add(s, v), exact=True)
        check(xp.multiply(v, x), xps.multiply(v, s), exact=True)
        check(xp.where(x > 0, x, v), xps.where(s > 0, s, v), exact=True)
    with pytest.raises(TypeError, match="at least one"):
        xp.add(1, 2)


def test_clip():
    for dt in FLOATS + ["int16"]:
        a = sample((5, 4), dt)
        x, s = both(a)
        check(xp.clip(x, -1, 2), xps.clip(s, -1, 2))
        check(xp.clip(x, max=1), xps.clip(s, max=1))
        lo = sample((4,), dt, special=False)
        check(xp.clip(x, xp.asarray(lo)), xps.clip(s, xps.asarray(lo)))
        check(xp.clip(x), xps.clip(s))


# ---- creation ----

def test_creation():
    check(xp.arange(10), xps.arange(10))
    check(xp.arange(1, 2, 0.1), xps.arange(1, 2, 0.1), exact=True)
    check(xp.arange(5, 0, -2, dtype=xp.int8), xps.arange(5, 0, -2, dtype=xps.int8))
    check(xp.arange(3, 3), xps.arange(3, 3))
    check(xp.linspace(0, 1, 7), xps.linspace(0, 1, 7), exact=True)
    check(xp.linspace(0, 1, 7, endpoint=False, dtype=xp.float32),
          xps.linspace(0, 1, 7, endpoint=False, dtype=xps.float32))
    check(xp.linspace(0j, 1 + 2j, 4), xps.linspace(0j, 1 + 2j, 4))
    for f in ("zeros", "ones", "empty"):
        r = getattr(xp, f)((2, 3), dtype=xp.int16)
        assert r.shape == (2, 3) and r.dtype == xp.int16
        assert getattr(xp, f)(4).dtype == xp.float64
    check(xp.full((2, 2), 7), xps.full((2, 2), 7))
    check(xp.full(3, 1.5), xps.full(3, 1.5))
    check(xp.full((), True), xps.full((), True))
    check(xp.full((2,), 2j), xps.full((2,), 2j))
    check(xp.eye(3, 4, k=1, dtype=xp.int32), xps.eye(3, 4, k=1, dtype=xps.int32))
    a = sample((3, 4), "float32")
    x, s = both(a)
    for f in ("zeros_like", "ones_like"):
        check(getattr(xp, f)(x), getattr(xps, f)(s))
        check(getattr(xp, f)(x, dtype=xp.int8), getattr(xps, f)(s, dtype=xps.int8))
    check(xp.full_like(x, 3), xps.full_like(s, 3))
    assert xp.empty_like(x).shape == (3, 4)
    for k in (-1, 0, 2):
        check(xp.tril(x, k=k), xps.tril(s, k=k))
        check(xp.triu(x, k=k), xps.triu(s, k=k))
    for ind in ("xy", "ij"):
        got = xp.meshgrid(xp.arange(3), xp.arange(4), xp.arange(2), indexing=ind)
        ref = xps.meshgrid(xps.arange(3), xps.arange(4), xps.arange(2), indexing=ind)
        for g, r in zip(got, ref):
            check(g, r)
    with pytest.raises(ValueError):
        xp.meshgrid(xp.arange(3), indexing="yx")
    with pytest.raises(ValueError):
        xp.arange(0, 3, 0)
    with pytest.raises(TypeError):
        xp.zeros(3, dtype="float16")
    with pytest.raises(ValueError):
        xp.zeros(-1)


def test_asarray():
    check(xp.asarray([1, 2]), xps.asarray([1, 2]))
    check(xp.asarray([[1.5, 2]]), xps.asarray([[1.5, 2]]))
    check(xp.asarray(True), xps.asarray(True))
    check(xp.asarray(1j), xps.asarray(1j))
    check(xp.asarray([1, 2], dtype=xp.float32), xps.asarray([1, 2], dtype=xps.float32))
    a = sample((3,), "float64")
    x = xp.asarray(a)
    a[0] = 42.0  # shared memory
    assert float(x[0]) == 42.0
    y = xp.asarray(a, copy=True)
    a[0] = 1.0
    assert float(y[0]) == 42.0
    assert xp.asarray(x) is x
    assert xp.asarray(x, copy=True) is not x
    with pytest.raises(ValueError):
        xp.asarray(x, dtype=xp.int32, copy=False)
    with pytest.raises(ValueError):
        xp.asarray([1, 2], copy=False)
    s = q.value([1.0, 2.0]).sum()  # a scalar qvalue becomes a 0-d tensor
    assert xp.asarray(s).kind == "tensor" and xp.asarray(s).shape == ()
    with pytest.raises(OverflowError):
        xp.asarray(2 ** 70)
    check(xp.from_dlpack(a), xps.asarray(a))


# ---- dtypes and the inspection API ----

def test_dtypes():
    for name in ["bool"] + INTS + FLOATS + COMPLEX:
        assert getattr(xp, name) == np.dtype(name)
        assert xp.asarray([0], dtype=getattr(xp, name)).dtype == getattr(xp, name)
    for a in ["bool"] + INTS + FLOATS + COMPLEX:
        for b in ["bool"] + INTS + FLOATS + COMPLEX:
            da, db = getattr(xp, a), getattr(xp, b)
            try:
                ref = xps.result_type(getattr(xps, a), getattr(xps, b))
            except TypeError:
                continue  # the standard defines no promotion; isthmus gives NumPy's
            assert xp.result_type(da, db).name == str(ref).rsplit(".", 1)[-1]
            assert xp.can_cast(da, db) == xps.can_cast(getattr(xps, a), getattr(xps, b))
    assert xp.result_type(xp.int8, 1) == xp.int8
    assert xp.result_type(xp.float32, 1.5) == xp.float32
    assert xp.result_type(xp.asarray([1], dtype=xp.uint16), xp.int8) == xp.int32
    for dt in FLOATS + COMPLEX:
        f, r = xp.finfo(getattr(xp, dt)), xps.finfo(getattr(xps, dt))
        assert (f.bits, f.eps, f.max, f.min, f.smallest_normal) == \
            (r.bits, r.eps, r.max, r.min, r.smallest_normal)
    for dt in INTS:
        i, r = xp.iinfo(getattr(xp, dt)), xps.iinfo(getattr(xps, dt))
        assert (i.bits, i.max, i.min) == (r.bits, r.max, r.min)
    assert xp.finfo(xp.asarray([1.0])).bits == 64
    for kind in ["bool", "signed integer", "unsigned integer", "integral", "real floating",
                 "complex floating", "numeric", ("integral", "bool"), xp.int8]:
        for dt in ["bool"] + INTS + FLOATS + COMPLEX:
            kk = getattr(xps, kind.name) if isinstance(kind, np.dtype) else kind
            assert xp.isdtype(getattr(xp, dt), kind) == xps.isdtype(getattr(xps, dt), kk)
    with pytest.raises(TypeError):
        xp.finfo(xp.int8)
    with pytest.raises(TypeError):
        xp.iinfo(xp.float32)
    with pytest.raises(ValueError):
        xp.isdtype(xp.int8, "integer")
    with pytest.raises(ValueError):
        xp.result_type()


def test_info_and_array_attributes():
    info = xp.__array_namespace_info__()
    assert info.default_device() in info.devices()
    assert info.default_dtypes()["real floating"] == xp.float64
    assert info.dtypes(kind="integral") == {n: np.dtype(n) for n in INTS}
    assert info.capabilities()["boolean indexing"] is True
    assert xp.__array_api_version__ == "2024.12"
    x = xp.asarray(sample((2, 3, 4), "float32"))
    assert x.__array_namespace__(api_version="2023.12") is xp
    with pytest.raises(ValueError):
        x.__array_namespace__(api_version="2019.01")
    check(x.mT, xps.asarray(np.asarray(x)).mT)
    check(xp.matrix_transpose(x), xps.matrix_transpose(xps.asarray(np.asarray(x))))
    with pytest.raises(ValueError):
        xp.asarray([1.0]).mT
    assert x.to_device(x.device) is x
    with pytest.raises(TypeError):
        x.to_device("cpu", stream=1)
    assert math.isinf(xp.inf) and xp.pi == math.pi and xp.newaxis is None


# ---- reductions, searching, utility ----

@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's, for the empty references
@pytest.mark.parametrize("dt", ["float32", "float64", "int8", "uint32", "bool", "complex64"])
def test_reductions(dt):
    for a in layouts((3, 4), dt, special=False):
        x, s = both(a)
        axes = [None, 0, -1, (0,), ()] if a.ndim == 2 else [None, ()]
        for axis in axes:
            for keep in (False, True):
                kw = dict(axis=axis, keepdims=keep)
                if dt != "bool":
                    check(xp.sum(x, **kw), xps.sum(s, **kw), rtol=1e-5)
                    check(xp.prod(x, **kw), xps.prod(s, **kw), rtol=1e-5)
                if dt in FLOATS or dt in COMPLEX:
                    check(xp.mean(x, **kw), xps.mean(s, **kw), rtol=1e-5)
                if dt in FLOATS:
                    check(xp.var(x, correction=1, **kw), xps.var(s, correction=1, **kw), 1e-5)
                    check(xp.var(x, correction=0.5, **kw), xps.var(s, correction=0.5, **kw), 1e-5)
                    check(xp.std(x, **kw), xps.std(s, **kw), rtol=1e-5)
                if dt not in COMPLEX + ["bool"] and a.size:
                    check(xp.max(x, **kw), xps.max(s, **kw))
                    check(xp.min(x, **kw), xps.min(s, **kw))
                check(xp.all(x, **kw), xps.all(s, **kw))
                check(xp.any(x, **kw), xps.any(s, **kw))
                check(xp.count_nonzero(x, **kw), xps.count_nonzero(s, **kw))
        if dt not in ("bool", "complex64"):
            check(xp.sum(x, dtype=xp.float64), xps.sum(s, dtype=xps.float64))
        if a.ndim and dt not in COMPLEX + ["bool"] and a.size:
            for axis in (None, 0):
                for keep in (False, True):
                    check(xp.argmax(x, axis=axis, keepdims=keep),
                          xps.argmax(s, axis=axis, keepdims=keep))
                    check(xp.argmin(x, axis=axis, keepdims=keep),
                          xps.argmin(s, axis=axis, keepdims=keep))
        if a.ndim and dt != "bool":
            for init in (False, True):
                check(xp.cumulative_sum(x, axis=0, include_initial=init),
                      xps.cumulative_sum(s, axis=0, include_initial=init), rtol=1e-5)
                check(xp.cumulative_prod(x, axis=-1, include_initial=init),
                      xps.cumulative_prod(s, axis=-1, include_initial=init), rtol=1e-5)
    with pytest.raises(IndexError):
        xp.sum(xp.ones((2, 2)), axis=2)
    with pytest.raises(ValueError):
        xp.max(xp.ones((0,)))
    with pytest.raises(TypeError):
        xp.mean(xp.ones(3, dtype=xp.int32))
    with pytest.raises(ValueError):
        xp.cumulative_sum(xp.ones((2, 2)))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's, for inf - inf in the references
def test_searching_and_utility():
    a = sample((4, 5), "float64")
    x, s = both(a)
    for g, r in zip(xp.nonzero(x), xps.nonzero(s)):
        check(g, r)
    c, cs = both(sample((4, 5), "bool"))
    check(xp.where(c, x, 0.5), xps.where(cs, s, 0.5))
    check(xp.where(c, x, xp.asarray([1.0] * 5)), xps.where(cs, s, xps.asarray([1.0] * 5)))
    sorted_ = np.sort(sample((20,), "float64"))
    v = sample((3, 4), "float64")
    for side in ("left", "right"):
        check(xp.searchsorted(xp.asarray(sorted_), xp.asarray(v), side=side),
              xps.searchsorted(xps.asarray(sorted_), xps.asarray(v), side=side))
    perm = RNG.permutation(20)
    shuffled = sorted_[perm]
    sorter = np.argsort(shuffled, kind="stable")
    check(xp.searchsorted(xp.asarray(shuffled), xp.asarray(v), sorter=xp.asarray(sorter)),
          xps.searchsorted(xps.asarray(shuffled), xps.asarray(v), sorter=xps.asarray(sorter)))
    for n in (0, 1, 2):
        for axis in (0, -1):
            check(xp.diff(x, n=n, axis=axis), xps.diff(s, n=n, axis=axis))
    check(xp.diff(x, prepend=x[:1], append=x[-1:], axis=0),
          xps.diff(s, prepend=s[:1, ...], append=s[-1:, ...], axis=0))
    np.testing.assert_array_equal(np.asarray(xp.diff(c)), np.diff(np.asarray(c)))
    with pytest.raises(ValueError):
        xp.nonzero(xp.asarray(1.0))
    with pytest.raises(ValueError):
        xp.searchsorted(x, x)
    with pytest.raises(ValueError):
        xp.searchsorted(xp.asarray(sorted_), 1.0, side="middle")


# ---- manipulation, indexing, linear algebra ----

def test_manipulation():
    a = sample((2, 3, 4), "int32")
    x, s = both(a)
    check(xp.reshape(x, (4, -1)), xps.reshape(s, (4, -1)))
    check(xp.reshape(x, (24,), copy=True), xps.reshape(s, (24,), copy=True))
    with pytest.raises(ValueError):
        xp.reshape(x.mT, (24,), copy=False)
    check(xp.permute_dims(x, (2, 0, 1)), xps.permute_dims(s, (2, 0, 1)))
    check(xp.moveaxis(x, 0, -1), xps.moveaxis(s, 0, -1))
    check(xp.moveaxis(x, (0, 1), (2, 0)), xps.moveaxis(s, (0, 1), (2, 0)))
    check(xp.expand_dims(x, axis=-1), xps.expand_dims(s, axis=-1))
    check(xp.squeeze(xp.expand_dims(x, axis=1), axis=1), s)
    with pytest.raises(ValueError):
        xp.squeeze(x, axis=0)
    for axis in (None, 0, (1, 2)):
        check(xp.flip(x, axis=axis), xps.flip(s, axis=axis))
    for shift, axis in ((1, None), (-2, 1), ((1, 3), (0, 2)), (7, -1)):
        check(xp.roll(x, shift, axis=axis), xps.roll(s, shift=shift, axis=axis))
    y, t = both(sample((2, 3, 4), "float32"))
    check(xp.concat([x, x[:, :1]], axis=1), xps.concat([s, s[:, :1, ...]], axis=1))
    check(xp.concat([y, y], axis=0), xps.concat([t, t], axis=0))
    check(xp.concat([x, x], axis=None), xps.concat([s, s], axis=None))
    check(xp.stack([x, x], axis=-1), xps.stack([s, s], axis=-1))
    for g, r in zip(xp.unstack(x, axis=1), xps.unstack(s, axis=1)):
        check(g, r)
    check(xp.tile(x, (2, 1, 1)), xps.tile(s, (2, 1, 1)))
    check(xp.repeat(x, 2, axis=1), xps.repeat(s, 2, axis=1))
    check(xp.repeat(x, xp.asarray([1, 0, 2]), axis=1),
          xps.repeat(s, xps.asarray([1, 0, 2]), axis=1))
    check(xp.repeat(x, 2), xps.repeat(s, 2))
    b1, b2 = both(sample((3, 1), "int32"))
    for g, r in zip(xp.broadcast_arrays(b1, x[0]), xps.broadcast_arrays(b2, s[0, ...])):
        check(g, r)
    check(xp.broadcast_to(b1, (2, 3, 5)), xps.broadcast_to(b2, (2, 3, 5)))
    with pytest.raises(ValueError):
        xp.broadcast_arrays(x, xp.ones(5))


def test_indexing_and_linalg():
    a = sample((4, 5), "float64", special=False)
    x, s = both(a)
    i, t = both(np.array([3, 0, 0, 2]))
    check(xp.take(x, i, axis=0), xps.take(s, t, axis=0))
    check(xp.take(x, i, axis=1), xps.take(s, t, axis=1))
    check(xp.take(x[0], i), xps.take(s[0, ...], t))
    with pytest.raises(ValueError):
        xp.take(x, i)
    j, u = both(RNG.integers(0, 5, size=(4, 3)))
    check(xp.take_along_axis(x, j, axis=1), xps.take_along_axis(s, u, axis=1))
    b, bs = both(sample((5, 3), "float64", special=False))
    check(xp.matmul(x, b), xps.matmul(s, bs), rtol=1e-12)
    check(xp.matmul(x[0], b), xps.matmul(s[0, ...], bs), rtol=1e-12)
    check(xp.tensordot(x, b, axes=1), xps.tensordot(s, bs, axes=1), rtol=1e-12)
    c, cs = both(sample((4, 5, 2), "float64", special=False))
    check(xp.tensordot(x, c, axes=([0, 1], [0, 1])), xps.tensordot(s, cs, axes=([0, 1], [0, 1])))
    check(xp.tensordot(x, c, axes=0), xps.tensordot(s, cs, axes=0))
    check(xp.vecdot(x, x), xps.vecdot(s, s), rtol=1e-12)
    z, zs = both(sample((3, 4), "complex128", special=False))
    check(xp.vecdot(z, z, axis=-2), xps.vecdot(zs, zs, axis=-2), rtol=1e-12)
    with pytest.raises(ValueError):
        xp.matmul(x, x)
    with pytest.raises(ValueError):
        xp.vecdot(x, b)
    with pytest.raises(ValueError):
        xp.tensordot(x, b, axes=([0], [0]))


# ---- sorting and sets (CPU stopgaps), isin ----

@pytest.mark.parametrize("dt", ["float64", "int16", "uint8", "bool"])
def test_sorting_and_sets(dt):
    a = sample((6, 7), dt)
    if dt in INTS:
        a = a % 4  # ties, for stability
    x, s = both(a)
    # array-api-strict sorts numbers only; bools are checked against their int8 order
    sk = xps.astype(s, xps.int8) if dt == "bool" else s
    for axis in (0, -1):
        for desc in (False, True):
            ref = xps.sort(sk, axis=axis, descending=desc)
            check(xp.sort(x, axis=axis, descending=desc),
                  xps.astype(ref, xps.bool) if dt == "bool" else ref)
            check(xp.argsort(x, axis=axis, descending=desc),
                  xps.argsort(sk, axis=axis, descending=desc))
    check(xp.unique_values(x), xps.unique_values(s))
    for g, r in zip(xp.unique_counts(x), xps.unique_counts(s)):
        check(g, r)
    for g, r in zip(xp.unique_inverse(x), xps.unique_inverse(s)):
        check(g, r)
    for g, r in zip(xp.unique_all(x), xps.unique_all(s)):
        check(g, r)
    y = x[:2, :3]
    ref = np.isin(np.asarray(x), np.asarray(y))
    np.testing.assert_array_equal(np.asarray(xp.isin(x, y)), ref)
    np.testing.assert_array_equal(np.asarray(xp.isin(x, y, invert=True)), ~ref)


def test_stopgaps_refuse_other_devices(monkeypatch):
    """A CUDA array reaching a CPU stopgap raises TypeError (no silent copy to the host)."""
    from isthmus.array_api import _helpers

    class Remote:
        device = "cuda:0"
    monkeypatch.setattr(_helpers, "tensor", lambda x: Remote())
    for f in (lambda: xp.sort(xp.ones(3)), lambda: xp.argsort(xp.ones(3)),
              lambda: xp.unique_values(xp.ones(3)), lambda: xp.unique_all(xp.ones(3))):
        with pytest.raises(TypeError, match="cuda:0.*behind your back"):
            f()


def test_bad_inputs():
    x = xp.asarray([1.0, 2.0])
    before = np.asarray(x).copy()
    with pytest.raises(TypeError):
        xp.exp([1.0, 2.0])
    with pytest.raises(TypeError):
        xp.add(x, "a")
    with pytest.raises(TypeError):
        xp.sum(q.value("text"))
    with pytest.raises(IndexError):
        xp.flip(x, axis=3)
    with pytest.raises(ValueError):
        xp.sum(xp.ones((2, 2)), axis=(0, 0))
    np.testing.assert_array_equal(np.asarray(x), before)


def test_import_starts_a_cpu_session(run_python):
    """Importing the namespace starts the runtime on the CPU (Note [the namespace starts the
    runtime]); `import isthmus` alone does not, and an existing session is kept."""
    res = run_python("""
        import isthmus as q
        assert not q.is_initialized()
        import isthmus.array_api as xp
        assert q.is_initialized()
        x = xp.asarray([1.0, 2.0])
        assert x.__array_namespace__() is xp and x.device == "cpu"
        q.destroy()
        try:
            xp.ones(2)
        except RuntimeError as e:
            print("after destroy:", e)
    """)
    assert "after destroy:" in res.stdout and "init" in res.stdout
    res = run_python("""
        import isthmus as q
        q.init("cpu", precision="float64")
        import isthmus.array_api as xp
        print(xp.asarray([1.5]).dtype, q.value(1.5).dtype)
    """)
    assert res.stdout.split() == ["float64", "float64"]


# ---- the linalg and fft extensions ----

def spd(n, dt):
    """A batch of symmetric positive-definite matrices."""
    a = RNG.standard_normal((2, n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dt)


@pytest.mark.parametrize("dt", FLOATS)
def test_linalg(dt):
    la, las = xp.linalg, xps.linalg
    a = sample((2, 4, 4), dt, special=False)
    x, s = both(a)
    p, ps = both(spd(4, dt))
    v, vs = both(sample((2, 4), dt, special=False))
    rtol = 1e-4 if dt == "float32" else 1e-9
    for off in (-1, 0, 2, 5):
        check(la.diagonal(x, offset=off), las.diagonal(s, offset=off))
        check(la.trace(x, offset=off), las.trace(s, offset=off), rtol=rtol)
    check(la.outer(v[0], v[1]), las.outer(vs[0, ...], vs[1, ...]))
    c, cs = both(sample((5, 3), dt, special=False))
    check(la.cross(c, c[::-1]), las.cross(cs, cs[::-1, ...]), rtol=rtol)
    for n in (0, 1, 3, -2):
        check(la.matrix_power(p, n), las.matrix_power(ps, n), rtol=1e-3 if n < 0 else rtol,
              atol=1e-6)
    for ord_ in (2, 1, math.inf, -math.inf, 0, 3):
        check(la.vector_norm(x, axis=-1, ord=ord_), las.vector_norm(s, axis=-1, ord=ord_), rtol)
    check(la.vector_norm(x, keepdims=True), las.vector_norm(s, keepdims=True), rtol=rtol)
    for ord_ in ("fro", 1, -1, math.inf, -math.inf, 2, -2, "nuc"):
        check(la.matrix_norm(x, ord=ord_), las.matrix_norm(s, ord=ord_), rtol=rtol)
    check(la.cholesky(p), las.cholesky(ps), rtol=rtol)
    check(la.cholesky(p, upper=True), las.cholesky(ps, upper=True), rtol=rtol)
    check(la.det(p), las.det(ps), rtol=rtol)
    check(la.inv(p), las.inv(ps), rtol=rtol, atol=1e-6)
    check(la.eigvalsh(p), las.eigvalsh(ps), rtol=rtol)
    check(la.eigh(p).eigenvalues, las.eigh(ps).eigenvalues, rtol=rtol)
    check(la.svdvals(x), las.svdvals(s), rtol=rtol)
    u, sv, vh = la.svd(x, full_matrices=False)
    np.testing.assert_allclose(np.asarray(u * sv[..., None, :] @ vh), a, rtol=1e-3, atol=1e-4)
    qq, rr = la.qr(x)
    np.testing.assert_allclose(np.asarray(qq @ rr), a, rtol=1e-3, atol=1e-4)
    check(la.slogdet(p).logabsdet, las.slogdet(ps).logabsdet, rtol=rtol)
    check(la.solve(p, v[0]), las.solve(ps, vs[0, ...]), rtol=1e-3, atol=1e-6)
    check(la.solve(p, x), las.solve(ps, s), rtol=1e-3, atol=1e-6)
    check(la.matrix_rank(x), las.matrix_rank(s))
    check(la.pinv(x), las.pinv(s), rtol=1e-3, atol=1e-5)
    check(la.matmul(x, x), las.matmul(s, s), rtol=rtol)
    check(la.vecdot(x, x), las.vecdot(s, s), rtol=rtol)
    with pytest.raises(ValueError):
        la.inv(xp.ones((2, 3), dtype=xp.float64))
    with pytest.raises(TypeError):
        la.det(xp.ones((2, 2), dtype=xp.int32))
    with pytest.raises(ValueError):
        la.matrix_norm(x, ord="max")


def test_fft():
    f, fs = xp.fft, xps.fft
    z, zs = both(sample((4, 6), "complex128", special=False))
    r, rs = both(sample((4, 6), "float32", special=False))
    for name in ("fft", "ifft", "hfft", "irfft"):
        for norm in ("backward", "ortho", "forward"):
            check(getattr(f, name)(z, n=5, axis=0, norm=norm),
                  getattr(fs, name)(zs, n=5, axis=0, norm=norm), rtol=1e-9)
    for name in ("rfft", "ihfft"):
        check(getattr(f, name)(r), getattr(fs, name)(rs))
    for name in ("fftn", "ifftn", "irfftn"):
        check(getattr(f, name)(z, axes=(0, 1)), getattr(fs, name)(zs, axes=(0, 1)), rtol=1e-9)
    check(f.rfftn(r), fs.rfftn(rs))
    for n in (1, 6, 7):
        check(f.fftfreq(n, d=0.5), fs.fftfreq(n, d=0.5), exact=True)
        check(f.rfftfreq(n, dtype=xp.float32), fs.rfftfreq(n, dtype=xps.float32), exact=True)
    for axes in (None, 0, (1,)):
        check(f.fftshift(r, axes=axes), fs.fftshift(rs, axes=axes))
        check(f.ifftshift(z, axes=axes), fs.ifftshift(zs, axes=axes))
    with pytest.raises(TypeError):
        f.fft(r)  # real input: the standard's fft takes complex arrays
    with pytest.raises(ValueError):
        f.fft(z, norm="none")


def test_scalar_values_index_as_0d_arrays():
    """A scalar qvalue (one element of a tensor) indexes as NumPy's scalars do."""
    for dt in ("float64", "int8", "bool"):
        a = sample((3,), dt, special=False)
        s = xp.asarray(a)[1]
        ref = a[1]  # a NumPy scalar
        assert s.kind == "scalar"
        assert s[()] is s
        for key in (..., None, np.True_, np.False_, (None, ...)):
            np.testing.assert_array_equal(np.asarray(s[key]), ref[key])
            assert s[key].shape == ref[key].shape
        with pytest.raises(IndexError):
            s[0]
    x = q.value([[1, 2], [3, 4]])
    assert x[1, 0] == 3 and x[0].shape == (2,)  # tensors index as before
    with pytest.raises(IndexError):
        x[2]


def test_scalar_values_are_strong_operands_and_beyond_range_ints():
    """The namespace's functions take a scalar qvalue as a 0-d array (strong, unlike isthmus's
    operators, where it is weak), and compare with Python ints beyond the dtype as NumPy does."""
    s = xp.asarray([1.5], dtype=xp.float64)[0]
    x = xp.asarray([1.0, 2.0], dtype=xp.float32)
    assert xp.divide(s, x).dtype == xp.float64
    assert xp.copysign(x, s).dtype == xp.float64
    u, un = both(np.array([0, 7, 255], dtype=np.uint8))
    for name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
        for v in (-1, 256, 2 ** 70):
            check(getattr(xp, name)(u, v), getattr(np, name)(np.asarray(u), v))
            check(getattr(xp, name)(v, u), getattr(np, name)(v, np.asarray(u)))
    with pytest.raises(OverflowError):
        xp.add(u, 256)


@pytest.mark.parametrize("dt", COMPLEX)
def test_complex_expm1(dt):
    """expm1 of complex values: NumPy's values for finite ones (accurate near 0), and the
    standard's special-case table for infinities, NaNs and zeros."""
    a = sample((5, 7), dt, special=False) * 1e-3 ** RNG.integers(0, 4, size=(5, 7))
    check(xp.expm1(xp.asarray(a[:, ::2])), np.expm1(a[:, ::2]))
    inf, nan = math.inf, math.nan
    table = {  # the standard's cases: input -> result
        complex(0.0, 0.0): complex(0.0, 0.0), complex(inf, 0.0): complex(inf, 0.0),
        complex(-inf, inf): complex(-1.0, 0.0), complex(-inf, nan): complex(-1.0, 0.0),
        complex(inf, inf): complex(inf, nan), complex(inf, nan): complex(inf, nan),
        complex(nan, 0.0): complex(nan, 0.0), complex(-inf, 1.0): complex(-1.0, 0.0),
    }
    got = np.asarray(xp.expm1(xp.asarray(np.array(list(table), dtype=dt))))
    np.testing.assert_array_equal(got, np.array(list(table.values()), dtype=dt))
