# Shared pieces of the NumPy protocol tests: documented dtype differences, tolerances, checks.

import numpy as np

import isthmus as q


# Where isthmus's result differs from NumPy's for the same call (docs/numpy-protocols.md,
# "Dtypes"): (ufunc name, NumPy's dtype kind of the operands) -> isthmus's documented result, as
# a NumPy reference, or the exception isthmus raises where NumPy computes.
ORDERED = ("less", "less_equal", "greater", "greater_equal", "maximum", "minimum")
DOCUMENTED = {
    ("reciprocal", "i"): lambda x: np.reciprocal(x.astype(np.float64)),  # float64
    ("reciprocal", "b"): lambda x: np.reciprocal(x.astype(np.float64)),
    ("rint", "i"): lambda x: x.copy(),  # integers are unchanged and keep their dtype
    ("rint", "b"): lambda x: x.copy(),
    ("conjugate", "b"): lambda x: x.copy(),  # bool stays bool (NumPy: int8)
    ("square", "b"): lambda x: x.copy(),
    ("sign", "b"): lambda x: x.copy(),  # NumPy refuses bool
    ("positive", "b"): lambda x: x.copy(),
    **{(name, "c"): TypeError for name in ORDERED},  # complex numbers are not ordered
}


def tol(dtype):
    """rtol for comparing with NumPy (isthmus's math is within 4 ulp, docs/ops.md)."""
    dt = np.dtype(dtype)
    if dt == np.float16:
        return 2e-3
    if dt in (np.float32, np.complex64):
        return 2e-5
    return 1e-12


def check(got, want):
    """got (a qvalue) has NumPy's values and dtype."""
    assert isinstance(got, q.qvalue), type(got)
    g = np.asarray(got)
    w = np.asarray(want)
    assert g.shape == w.shape
    assert g.dtype == w.dtype
    if w.dtype.kind in "fc" or g.dtype.kind in "fc":
        rtol = tol(w.dtype if w.dtype.kind in "fc" else g.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * 1e-3, equal_nan=True)
    else:
        np.testing.assert_array_equal(g, w)


def same(got, want):
    """Recursive check of a function's result against NumPy's: qvalues where NumPy has arrays."""
    if isinstance(want, (list, tuple)):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
    elif isinstance(want, (np.ndarray, np.generic)):
        check(got, want)
    else:
        assert type(got) is type(want) and got == want


def ufunc_id(u):
    return u.__name__
