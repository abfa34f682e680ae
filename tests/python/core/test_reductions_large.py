"""sum, mean, min, max, var and std against NumPy on inputs large enough to reach every CPU
reduction path: the SIMD lane loops, var's blocks, pieces split over threads, the column
kernel, strided and reversed views; plus empty, 0-d, NaN and inf inputs."""
import numpy as np
import pytest

import isthmus as q

RED = ["sum", "mean", "min", "max", "var", "std"]


@pytest.fixture(scope="module", autouse=True)
def _init():
    q.init("cpu")


def reference(name, x, axis, ddof=0):
    """NumPy's answer computed in float64 (complex128), the precision the kernels aim at."""
    wide = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
    f = getattr(np, name)
    return f(wide, axis=axis, ddof=ddof) if name in ("var", "std") else f(wide, axis=axis)


def check(name, x, axis, rtol, ddof=0):
    kw = {"ddof": ddof} if name in ("var", "std") else {}
    got = np.asarray(getattr(q, name)(x, axis=axis, **kw).to_py())
    want = reference(name, x, axis, ddof)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.abs(want).max(initial=0),
                               err_msg=f"{name} axis={axis} dtype={x.dtype} shape={x.shape}")
    want_dtype = getattr(np, name)(x[:1] if x.ndim else x, axis=axis if x.ndim else None, **kw)
    if name not in ("sum", "mean") or x.dtype.kind == "f":
        assert got.dtype == np.asarray(want_dtype).dtype, (name, x.dtype, got.dtype)


def layouts(x):
    """x, a stepped view, a reversed view, a transposed view (x is 2-d)."""
    return {"contiguous": x, "stepped": x[:, ::3], "reversed": x[::-1, ::-1], "transposed": x.T}


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "complex64"])
@pytest.mark.parametrize("name", RED)
def test_large_inputs_every_layout(name, dtype):
    if dtype == "complex64" and name in ("min", "max"):
        pytest.skip("NumPy orders complex lexicographically too, covered in test_reduce.cpp")
    rng = np.random.default_rng(21)
    x = rng.uniform(-1.0, 3.0, (301, 1003))
    if dtype == "complex64":
        x = x + 1j * rng.uniform(-2.0, 1.0, x.shape)
    x = x.astype(dtype)
    rtol = 1e-5 if dtype in ("float32", "complex64") else 1e-10
    for label, v in layouts(x).items():
        for axis in (None, 0, 1):
            check(name, v, axis, rtol)


@pytest.mark.parametrize("name", RED)
def test_long_runs_and_column_pieces(name):
    rng = np.random.default_rng(22)
    # One long run: many lane blocks, var blocks and parallel pieces.
    x = rng.uniform(0.0, 1.0, 2_000_003).astype(np.float32)
    check(name, x, None, 1e-5)
    # Few columns, many rows: the column kernel with rows split into pieces.
    check(name, x[:1_999_998].reshape(-1, 3), 0, 1e-5)
    check(name, x[:2_000_000].reshape(-1, 1000), 0, 1e-5)


def test_float32_sum_accuracy_beats_float32_pairwise():
    x = np.full(10_000_000, 0.1, dtype=np.float32)
    want = 10_000_000 * float(np.float32(0.1))
    assert abs(float(q.sum(x)) - want) / want < 1e-6
    y = np.random.default_rng(23).uniform(0, 1, 10_000_000).astype(np.float32)
    want = y.astype(np.float64).sum()
    assert abs(float(q.sum(y)) - want) / want < 1e-6
    assert abs(float(q.mean(y)) - want / y.size) / (want / y.size) < 1e-6


def test_var_of_data_with_a_large_mean():
    x = (10000.0 + np.random.default_rng(24).uniform(0, 1, 1_000_000)).astype(np.float32)
    want = x.astype(np.float64).var()
    assert abs(float(q.var(x)) - want) / want < 1e-5
    np.testing.assert_allclose(np.asarray(q.var(x.reshape(1000, 1000), axis=0).to_py()),
                               x.astype(np.float64).reshape(1000, 1000).var(axis=0), rtol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nan_and_inf(dtype):
    n = 100_003
    for pos in (1, 777, n - 2):
        x = np.linspace(-1, 1, n).astype(dtype)
        x[pos] = np.inf
        assert float(q.max(x)) == np.inf
        assert float(q.min(x)) == -1.0
        assert np.isnan(float(q.var(x)))
        x[pos] = -np.inf
        assert float(q.min(x)) == -np.inf
        x[pos] = np.nan
        for name in ("sum", "mean", "min", "max", "var", "std"):
            assert np.isnan(float(getattr(q, name)(x))), (name, pos)
        rows = x[: n - 3].reshape(-1, 100)
        for name in ("min", "max", "var"):
            got = np.asarray(getattr(q, name)(rows, axis=1).to_py())
            np.testing.assert_array_equal(np.isnan(got), np.isnan(getattr(np, name)(rows, axis=1)))
            got = np.asarray(getattr(q, name)(rows, axis=0).to_py())
            np.testing.assert_array_equal(np.isnan(got), np.isnan(getattr(np, name)(rows, axis=0)))


def test_empty_and_0d():
    e = np.zeros((0, 3), dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(q.sum(e, axis=0).to_py()), [0, 0, 0])
    for name in ("mean", "var", "std"):
        assert np.isnan(np.asarray(getattr(q, name)(e, axis=0).to_py())).all()
        assert np.asarray(getattr(q, name)(e, axis=1).to_py()).shape == (0,)
    with pytest.raises(ValueError):
        q.max(e)
    s = np.float64(2.5)
    for name in RED:
        got = float(getattr(q, name)(q.value(np.array(s))))
        assert got == getattr(np, name)(s), name
    assert float(q.var(np.array([1.0, 2.0]), ddof=2)) == np.inf
