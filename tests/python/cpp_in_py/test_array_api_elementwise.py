# The array API namespace: elementwise functions and operators against array-api-strict.
import math

import numpy as np
import pytest

import isthmus as q

from array_api_helpers import COMPLEX, FLOATS, RNG, both, check, layouts, sample, xp, xps

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
    # signed zeros: +-0 + 0j gives +0 + 0j, and the imaginary part keeps b's sign
    zeros = np.array([complex(-0.0, 0.0), complex(0.0, -0.0), complex(-0.0, -0.0)], dtype=dt)
    got = np.asarray(xp.expm1(xp.asarray(zeros)))
    np.testing.assert_array_equal(got, np.zeros(3, dtype=dt))
    assert not np.signbit(got.real).any()
    np.testing.assert_array_equal(np.signbit(got.imag), [False, True, True])
