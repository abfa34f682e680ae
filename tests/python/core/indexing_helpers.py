"""Shared helpers of the indexing tests: distinct-valued arrays and a NumPy-exact comparison."""

import numpy as np

import isthmus as q

BIG = [2**63 - 1, -(2**63), 2**63, -(2**63) - 1, 2**64, 2**70, -(2**70)]


def base(shape, dtype="int64"):
    """Distinct values (as far as the dtype allows) in C order."""
    n = int(np.prod(shape, dtype=np.int64))
    return (np.arange(n, dtype=np.int64) % 251 + 1).astype(dtype).reshape(shape)


def same(got, exp):
    """isthmus's result `got` matches NumPy's `exp`: kind (scalar or array), shape, dtype, values."""
    if isinstance(exp, np.generic):
        assert isinstance(got, q.qvalue) and got.kind == "scalar", (got, exp)
    else:
        assert isinstance(got, q.qvalue) and got.kind == "tensor", (got, exp)
    arr = np.asarray(got)
    exp = np.asarray(exp)
    assert arr.shape == exp.shape, (arr.shape, exp.shape)
    assert arr.dtype == exp.dtype, (arr.dtype, exp.dtype)
    assert np.array_equal(arr, exp), (arr, exp)
