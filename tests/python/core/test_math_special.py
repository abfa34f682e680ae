"""Math functions beside NumPy on special values and in ulp (the SLEEF loops, docs/ops.md)."""
import numpy as np
import pytest

import isthmus as q

UNARY = ["exp", "log", "log2", "log10", "expm1", "log1p", "sqrt", "sin", "cos", "tan",
         "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh"]


def as_np(v):
    return np.asarray(v.to_py() if isinstance(v, q.qvalue) else v)


def specials(dt):
    f = np.finfo(dt)
    v = [0.0, -0.0, np.inf, -np.inf, np.nan, f.smallest_subnormal, -f.smallest_subnormal,
         f.tiny, -f.tiny, f.max, -f.max, 1.0, -1.0, 0.5, -0.5, 2.0, 100.0, -100.0, 1e-30, 1e30]
    return np.array(v, dtype=dt)


def ulp_distance(a, b):
    """Distance in representable values between a and b (same dtype, both finite)."""
    it = np.int32 if a.dtype == np.float32 else np.int64
    ia, ib = a.view(it).astype(np.int64), b.view(it).astype(np.int64)
    # map the sign-magnitude order onto a monotonic integer line
    ia = np.where(ia < 0, np.iinfo(it).min - ia, ia)
    ib = np.where(ib < 0, np.iinfo(it).min - ib, ib)
    return np.abs(ia - ib)


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_special_values_as_numpy(name, dt):
    x = specials(dt)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x)
    got = as_np(getattr(q, name)(x))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{name}: NaN places")
    inf = np.isinf(want)
    np.testing.assert_array_equal(got[inf], want[inf], err_msg=f"{name}: infinities")
    zero = want == 0
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]),
                                  err_msg=f"{name}: signed zeros")
    finite = np.isfinite(want) & np.isfinite(got)
    assert ulp_distance(got[finite], want[finite]).max(initial=0) <= 8, name


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_random_inputs_within_a_few_ulp_of_numpy(name, dt):
    r = np.random.default_rng(11)
    lo, hi = {"log": (1e-3, 1e3), "log2": (1e-3, 1e3), "log10": (1e-3, 1e3), "sqrt": (0, 1e6),
              "log1p": (-0.9, 10), "arcsin": (-1, 1), "arccos": (-1, 1),
              "exp": (-80, 80), "expm1": (-20, 20), "sinh": (-80, 80),
              "cosh": (-80, 80)}.get(name, (-50, 50))
    # 2-d, strided, with a tail that does not fill a vector
    x = r.uniform(lo, hi, (37, 53)).astype(dt)[:, ::3]
    got = as_np(getattr(q, name)(x))
    want = getattr(np, name)(x)
    # NumPy's own loops err by up to 4 ulp (float32) and ours by up to 3.5: 8 between the two
    assert ulp_distance(got, want).max() <= 8, name


def test_maximum_minimum_nan_and_signed_zero_as_numpy():
    a = np.array([0.0, -0.0, np.nan, 1.0, np.nan, -np.inf], np.float64)
    b = np.array([-0.0, 0.0, 1.0, np.nan, np.nan, np.inf], np.float64)
    for name in ("maximum", "minimum"):
        got, want = as_np(getattr(q, name)(a, b)), getattr(np, name)(a, b)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    got = as_np(q.clip(np.array([np.nan, -0.0, 5.0]), 0.0, 1.0))
    want = np.clip(np.array([np.nan, -0.0, 5.0]), 0.0, 1.0)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_atan2_and_pow_special_cases_as_numpy(dt):
    v = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.0, 0.5], dt)
    a, b = np.meshgrid(v, v)
    with np.errstate(all="ignore"):
        for name, ref in (("arctan2", np.arctan2), ("power", np.power)):
            want = ref(a, b)
            got = as_np(getattr(q, name)(a, b))
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=name)
            exact = ~np.isnan(want)
            assert ulp_distance(got[exact], want[exact]).max() <= 4, name
            np.testing.assert_array_equal(np.signbit(got[exact]), np.signbit(want[exact]))
