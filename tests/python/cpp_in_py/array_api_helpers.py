# Shared helpers of the array API tests: random samples in every layout, the reference, checks.
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

