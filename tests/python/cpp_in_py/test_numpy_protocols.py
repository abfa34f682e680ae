# NumPy's protocols on qvalues: the host fallback, other array types and __format__.

import numpy as np
import pytest

import isthmus as q
from numpy_protocols_helpers import check, same

# The references are NumPy 2's results (NEP 50 promotion, NumPy 2's sign and floor); the
# protocols themselves work with NumPy 1.24+ too (test_numpy.py and test_operators.py run there).
pytestmark = pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.0.0",
                                reason="the references are NumPy 2's results")

RNG = np.random.default_rng(11)

# ---- the fallback ----


def test_fallback_runs_numpy_and_returns_qvalues():
    x = RNG.uniform(-1, 1, (5, 4))
    X = q.value(x)
    for fn, args in [(np.median, ()), (np.sort, ()), (np.percentile, (30,)), (np.diff, ()),
                     (np.linalg.inv, ())]:
        for kw in ({}, {"axis": 0}) if fn not in (np.linalg.inv, np.percentile) else ({},):
            a = x[:4] if fn is np.linalg.inv else x
            A = X[:4] if fn is np.linalg.inv else X
            want = fn(a, *args, **kw)
            got = fn(A, *args, **kw)
            same(got, want)
    assert np.median(X).kind == "scalar"  # NumPy's scalar result as a scalar qvalue
    assert np.count_nonzero(X > 0) == np.count_nonzero(x > 0)  # Python results stay Python


def test_fallback_for_other_ufuncs_and_methods():
    x = np.arange(1.0, 7.0)
    X = q.value(x)
    same(np.fmax(X, 3.0), np.fmax(x, 3.0))  # a ufunc isthmus lacks
    same(np.divmod(X, 4), np.divmod(x, 4))  # two outputs
    same(np.add.outer(X, X[:2]), np.add.outer(x, x[:2]))
    same(np.add.reduceat(X, [0, 3]), np.add.reduceat(x, [0, 3]))
    same(np.power.reduce(X[:3]), np.power.reduce(x[:3]))  # a reduce isthmus does not map
    np.add.at(X, [0, 0, 5], 1.0)  # writes through the shared memory
    want = x.copy()
    np.add.at(want, [0, 0, 5], 1.0)
    check(X, want)
    out = q.zeros(6, dtype="float64")
    assert np.fmax(X, 4.0, out=out) is out  # a qvalue out comes back as itself
    check(out, np.fmax(want, 4.0))
    np.testing.assert_array_equal(x, np.arange(1.0, 7.0))  # q.value copied x


def test_fallback_refuses_what_numpy_cannot_read():
    with pytest.raises(TypeError):
        np.median(q.value(np.arange(3.0)).astype("bfloat16"))
    with pytest.raises(TypeError, match="kind"):
        np.median(q.typename("vec[mat]")(2))  # a cell


@pytest.mark.skipif(not q.cuda_available(), reason="needs a CUDA device")
def test_fallback_refuses_device_values():
    # copy=True: valid on the GPU only (a plain .to("cuda") keeps the host copy valid, and
    # NumPy may read that one: no transfer is hidden)
    A = q.value(np.arange(6.0)).to("cuda", copy=True)
    assert A.device == "cuda:0"
    with pytest.raises(TypeError, match="cuda"):
        np.median(A)
    with pytest.raises(TypeError, match="cuda"):
        np.fmax(A, 1.0)
    check(np.exp(A).to("cpu"), np.exp(np.arange(6.0)))  # a mapped op runs on the device


# ---- other array types ----


class Foreign:
    """An array type that overrides NumPy itself."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return "foreign ufunc"

    def __array_function__(self, func, types, args, kwargs):
        return "foreign function"


def test_foreign_overrides_win():
    X = q.value(np.arange(3.0))
    assert np.add(X, Foreign()) == "foreign ufunc"
    assert np.concatenate([X, Foreign()]) == "foreign function"


def test_masked_arrays_are_not_unmasked():
    X = q.value(np.arange(4.0))
    m = np.ma.masked_array(np.arange(4.0), mask=[0, 1, 0, 0])
    with pytest.raises(TypeError):
        np.add(m, X)  # isthmus would drop the mask: NumPy's TypeError instead
    with pytest.raises(TypeError):
        np.concatenate([m, X])
    r = m + X  # MaskedArray's own operator keeps its mask
    assert isinstance(r, np.ma.MaskedArray) and r.mask.tolist() == [False, True, False, False]


class OptsOut:
    __array_ufunc__ = None


def test_types_that_opt_out_get_numpys_type_error():
    with pytest.raises(TypeError):
        np.add(q.value(np.arange(3.0)), OptsOut())



# ---- __format__ ----


def test_format_scalars_and_one_element_tensors():
    assert f"{q.value(1.5):.2f}" == "1.50"
    assert f"{q.value(np.float64(2.0) / 3):.3e}" == f"{2.0 / 3:.3e}"
    assert f"{q.value(7):04d}" == "0007"
    assert f"{q.value(np.array(2.25)):.1f}" == "2.2"  # 0-d tensor (half to even, as float)
    assert f"{q.value([3.0]):g}" == "3"  # one element
    assert f"{q.value([[4]], dtype='int16'):>3}" == "  4"
    assert format(q.value(1 + 2j), ".1f") == "1.0+2.0j"
    assert f"{q.value('ab'):>4}" == "  ab"
    assert f"{q.value(True)}" == str(q.value(True))


def test_format_empty_spec_is_str():
    for v in (q.value([1.0, 2.0]), q.value(1.5), q.zeros(2, 2), q.value("s"), q.value(None)):
        assert f"{v}" == str(v) and format(v, "") == str(v)


def test_format_refuses_arrays():
    A = q.value([1.0, 2.0])
    with pytest.raises(TypeError, match="unsupported format string"):
        f"{A:.2f}"
    with pytest.raises(TypeError, match="unsupported format string"):
        format(q.zeros(0), ".1f")
    with pytest.raises(TypeError, match="unsupported format string"):
        format(q.value(None), "d")
    with pytest.raises(ValueError):
        format(q.value(1.5), "d")  # the Python number's own error
    assert A.to_py().tolist() == [1.0, 2.0]
