# The CUDA backend from Python: init("cuda") errors, and GPU results against NumPy per device.
import numpy as np
import pytest

import isthmus as q
from cuda_helpers import HAVE_CUDA, NO_CUDA_REASON, cuda_session, on_gpu


@pytest.fixture
def device_session(device):
    """The test runs in a session on `device` (the test's parameter), then on the CPU again."""
    with cuda_session(device):
        yield


def _devices():
    if not HAVE_CUDA:
        return [pytest.param("cuda", marks=pytest.mark.skip(reason=NO_CUDA_REASON))]
    return ["cuda"]


@pytest.mark.skipif(HAVE_CUDA, reason="this machine has a GPU; the error path needs none")
@pytest.mark.parametrize("device", ["cuda", "cuda:0", "CUDA:1"])
def test_init_cuda_without_gpu_raises_clear_error(device):
    q.destroy()
    try:
        with pytest.raises(RuntimeError, match="CUDA is not available") as e:
            q.init(device)
        # the cause is named: the module's load error, or the driver/device check
        assert q.cuda_unavailable_reason() in str(e.value)
        assert not q.is_initialized()
    finally:
        q.init("cpu")
    a = q.value(np.arange(6.0))  # the CPU still works after the failed init
    np.testing.assert_array_equal(np.asarray(a + a), np.arange(6.0) * 2)


@pytest.mark.skipif(HAVE_CUDA, reason="this machine has a GPU")
def test_cuda_calls_without_gpu_raise():
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        q.cuda_synchronize()
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        q.cuda_memory_info(0)


@pytest.mark.parametrize("device", ["cuda:x", "gpu", "cuda:"])
def test_init_bad_device_names(device):
    q.destroy()
    try:
        with pytest.raises(ValueError, match="unknown device"):
            q.init(device)
    finally:
        q.init("cpu")


# ---- on a GPU (skipped with the reason above elsewhere) ----

rng = np.random.default_rng(7)


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "maximum", "minimum", "lt", "eq"])
def test_binary_matches_numpy(device_session, device, dtype, op):
    a = (rng.standard_normal((33, 65)) * 10).astype(dtype)
    b = (rng.standard_normal((65,)) * 10).astype(dtype)  # broadcast against a's rows
    np_name = {"sub": "subtract", "mul": "multiply", "lt": "less", "eq": "equal"}.get(op, op)
    fn = getattr(q, np_name)
    ref = getattr(np, np_name)(a, b)
    np.testing.assert_allclose(np.asarray(fn(on_gpu(a), on_gpu(b))), ref, rtol=1e-6)
    # a non-contiguous (transposed) view and a scalar operand
    a_t = on_gpu(np.ascontiguousarray(a.T)).T
    np.testing.assert_allclose(np.asarray(fn(a_t, on_gpu(b))), ref, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(fn(on_gpu(a), 3)),
                               getattr(np, np_name)(a, dtype(3)), rtol=1e-6)


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("op", ["exp", "sqrt", "sin", "tanh", "abs", "floor"])
def test_unary_matches_numpy(device_session, device, op):
    x = rng.random((1000, 7)).astype(np.float32) + 0.1
    got = np.asarray(getattr(q, op)(on_gpu(x)[:, 1:5]))
    np.testing.assert_allclose(got, getattr(np, op)(x[:, 1:5]), rtol=2e-6)


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("red", ["sum", "mean", "min", "max"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2)])
def test_reductions_match_numpy(device_session, device, red, axis):
    x = rng.standard_normal((17, 300, 5)).astype(np.float32)
    got = np.asarray(getattr(q, red)(on_gpu(x), axis=axis))
    ref = getattr(np, red)(x.astype(np.float64), axis=axis)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    big = rng.random(3_000_001).astype(np.float32)  # many chunks, float32 summed in double
    np.testing.assert_allclose(float(np.asarray(getattr(q, red)(on_gpu(big)))),
                               getattr(np, red)(big.astype(np.float64)), rtol=1e-6)


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_matches_numpy(device_session, device, dtype):
    a = rng.standard_normal((3, 70, 50)).astype(dtype)
    b = rng.standard_normal((50, 40)).astype(dtype)
    got = np.asarray(on_gpu(a) @ on_gpu(b))
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=tol, atol=tol)


@pytest.mark.parametrize("device", _devices())
def test_lock_transitions_and_eviction(device_session, device):
    try:
        x = rng.standard_normal(1 << 20).astype(np.float32)  # 4 MiB
        v = on_gpu(x)
        y = v * 2  # runs on the GPU (valid there only)
        np.testing.assert_array_equal(np.asarray(y), x * 2)  # lock on the CPU: transfer back
        # cap the device at 16 MiB: more live tensors than fit get evicted to the CPU
        q.cuda_set_memory_limit(0, 16 << 20)
        vals = [on_gpu(x + i) for i in range(8)]
        for i, t in enumerate(vals):
            np.testing.assert_array_equal(np.asarray(t + 1), x + i + 1)
        assert q.cuda_memory_info(0)["allocated_bytes"] <= 16 << 20
    finally:
        q.cuda_set_memory_limit(0, None)


# ---- every dtype and the ops added to the GPU ----

INT_OPS = ["floor_divide", "mod", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift",
           "right_shift", "logical_xor", "maximum", "less_equal"]


def _operands(dtype, shape_a, shape_b):
    """Random operands of `dtype` with zeros and negatives (for the sign rules of // and %)."""
    if np.dtype(dtype).kind in "iu":
        lo = 0 if np.dtype(dtype).kind == "u" else -60
        return (rng.integers(lo, 60, shape_a).astype(dtype),
                rng.integers(lo, 60, shape_b).astype(dtype))
    return ((rng.standard_normal(shape_a) * 5).astype(dtype),
            (rng.standard_normal(shape_b) * 5).astype(dtype))


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.uint8, np.uint16, np.uint32, np.uint64])
@pytest.mark.parametrize("op", INT_OPS)
def test_integer_ops_match_numpy(device_session, device, dtype, op):
    a, b = _operands(dtype, (31, 17), (17,))
    if op in ("left_shift", "right_shift"):
        b = (np.abs(b.astype(np.int64)) % (8 * np.dtype(dtype).itemsize)).astype(dtype)
    with np.errstate(divide="ignore"):
        ref = getattr(np, op)(a, b)
    if op in ("floor_divide", "mod"):
        ref = np.where(b == 0, 0, ref)  # NumPy gives 0 with a warning; isthmus the same
    got = getattr(q, op)(on_gpu(a), on_gpu(b))
    np.testing.assert_array_equal(np.asarray(got), ref)
    got_t = getattr(q, op)(on_gpu(np.ascontiguousarray(a.T)).T, on_gpu(b[:, None]).T)
    np.testing.assert_array_equal(np.asarray(got_t), ref)


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("op", ["floor_divide", "mod", "power", "arctan2", "divide"])
def test_float_ops_match_numpy(device_session, device, dtype, op):
    a, b = _operands(dtype, (40, 9), (40, 1))
    if op == "power":
        a = np.abs(a)
    with np.errstate(all="ignore"):
        ref = getattr(np, op)(a.astype(np.float32 if dtype == np.float16 else dtype),
                              b.astype(np.float32 if dtype == np.float16 else dtype))
    got = np.asarray(getattr(q, op)(on_gpu(a), on_gpu(b)))
    assert got.dtype == dtype
    tol = 2e-3 if dtype == np.float16 else (2e-6 if dtype == np.float32 else 1e-13)
    np.testing.assert_allclose(got.astype(np.float64), ref.astype(dtype).astype(np.float64),
                               rtol=tol, atol=tol)


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_ops_match_numpy(device_session, device, dtype):
    a = (rng.standard_normal((20, 30)) + 1j * rng.standard_normal((20, 30))).astype(dtype)
    b = (rng.standard_normal(30) + 1j * rng.standard_normal(30)).astype(dtype)
    tol = 1e-5 if dtype == np.complex64 else 1e-12
    for fn, ref in [(lambda x, y: x + y, a + b), (lambda x, y: x * y, a * b),
                    (lambda x, y: x / y, a / b), (lambda x, y: -x, -a),
                    (lambda x, y: q.conj(x), np.conj(a)), (lambda x, y: abs(x), np.abs(a)),
                    (lambda x, y: q.equal(x, x), np.ones(a.shape, bool))]:
        np.testing.assert_allclose(np.asarray(fn(on_gpu(a), on_gpu(b))), ref, rtol=tol)


COMPLEX_MATH = ["exp", "log", "log2", "log10", "expm1", "log1p", "sqrt", "sin", "cos", "tan",
                "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "sign", "rint", "square",
                "reciprocal", "isnan", "isinf", "isfinite"]


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("op", COMPLEX_MATH)
def test_complex_math_matches_numpy(device_session, device, dtype, op):
    a = (rng.standard_normal((20, 30)) + 1j * rng.standard_normal((20, 30))).astype(dtype)
    with np.errstate(all="ignore"):
        ref = getattr(np, op)(a.astype(np.complex128))
    expected = np.dtype(dtype) if ref.dtype.kind == "c" else ref.dtype
    tol = 1e-5 if dtype == np.complex64 else 1e-12
    for x, r in [(on_gpu(a), ref), (on_gpu(np.ascontiguousarray(a.T)).T, ref),
                 (on_gpu(a[::2, 1::3]), ref[::2, 1::3])]:
        got = getattr(q, op)(x)
        assert got.device == "cuda:0"  # ran on the GPU, no CPU fallback
        got = np.asarray(got)
        assert got.dtype == expected
        np.testing.assert_allclose(got, r, rtol=tol, atol=tol)
    # special values against the CPU path (a NumPy array stays on the CPU): the same
    # Annex G infinities, NaNs and signed zeros
    parts = [0.0, -0.0, 1.0, -2.0, np.inf, -np.inf, np.nan]
    sp = np.array([complex(r, i) for r in parts for i in parts], dtype)
    with np.errstate(all="ignore"):
        cpu = np.asarray(getattr(q, op)(sp))
        gpu = np.asarray(getattr(q, op)(on_gpu(sp)))
    np.testing.assert_allclose(gpu, cpu, rtol=tol, atol=tol)
    assert np.asarray(getattr(q, op)(on_gpu(a[:0]))).shape == (0, 30)


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_branch_cuts_and_pow_match_numpy(device_session, device, dtype):
    # just above and below the negative real axis (the cut of sqrt and log)
    z = np.array([-2 + 0j, complex(-2, -0.0), -0.5 + 0j, complex(-0.5, -0.0)], dtype)
    tol = 1e-5 if dtype == np.complex64 else 1e-12
    for op in ("sqrt", "log"):
        np.testing.assert_allclose(np.asarray(getattr(q, op)(on_gpu(z))),
                                   getattr(np, op)(z.astype(np.complex128)), rtol=tol)
    a = (rng.standard_normal((9, 11)) + 1j * rng.standard_normal((9, 11))).astype(dtype)
    b = (rng.standard_normal(11) + 1j * rng.standard_normal(11)).astype(dtype)
    b[:4] = [2, -3, 0.5, 0]  # integral exponents multiply; others go through exp(b log a)
    got = q.power(on_gpu(a), on_gpu(b))
    assert got.device == "cuda:0"
    np.testing.assert_allclose(np.asarray(got), a.astype(np.complex128) ** b, rtol=tol * 10)
    np.testing.assert_allclose(np.asarray(on_gpu(a) ** 2), a.astype(np.complex128) ** 2,
                               rtol=tol)
    z0 = on_gpu(np.array(1.5 - 2j, dtype))  # 0-d
    np.testing.assert_allclose(np.asarray(q.exp(z0)), np.exp(np.complex128(1.5 - 2j)),
                               rtol=tol)


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("red", ["sum", "mean", "prod", "any", "all", "var", "std"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2)])
def test_complex_reductions_match_numpy(device_session, device, dtype, red, axis):
    x = (rng.standard_normal((6, 70, 5)) + 1j * rng.standard_normal((6, 70, 5)))
    if red == "prod":
        x = 1 + x / 100
    if red == "all":
        x[2, 3] = 0
    x = x.astype(dtype)
    got = getattr(q, red)(on_gpu(x), axis=axis)
    if red in ("sum", "mean", "prod", "any", "all"):
        assert got.device == "cuda:0"
    got = np.asarray(got)
    ref = getattr(np, red)(x.astype(np.complex128), axis=axis)
    if red in ("any", "all"):
        np.testing.assert_array_equal(got, ref)
    else:  # accumulated in complex128 on both sides, rounded once
        assert got.dtype == (np.dtype(dtype) if red not in ("var", "std")
                             else np.empty(0, dtype).real.dtype)
        np.testing.assert_allclose(got, ref, rtol=2e-6 if dtype == np.complex64 else 1e-12)
    assert np.asarray(getattr(q, red)(on_gpu(x[:, :0]), axis=0)).shape == (0, 5)


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("red", ["argmin", "argmax", "min", "max"])
def test_complex_order_reductions_match_cpu(device_session, device, red):
    # parts in {-2 .. 2}: ties in the real and the imaginary parts
    x = (rng.integers(-2, 3, (13, 57)) + 1j * rng.integers(-2, 3, (13, 57))).astype(np.complex64)
    x[4, 7] = complex(np.nan, 1)
    ref = np.asarray(getattr(q, red)(x, axis=1))  # the CPU's lexicographic order
    got = getattr(q, red)(on_gpu(x), axis=1)
    assert got.device == "cuda:0"
    np.testing.assert_array_equal(np.asarray(got), ref)
    np.testing.assert_array_equal(np.asarray(getattr(q, red)(on_gpu(x))),
                                  np.asarray(getattr(q, red)(x)))


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.int64,
                                   np.uint64])
def test_integer_matmul_wraps_as_numpy(device_session, device, dtype):
    if dtype == np.bool_:
        a, b = rng.integers(0, 2, (3, 37, 41)).astype(bool), rng.integers(0, 2, (41, 23)).astype(bool)
    else:  # large enough that 8-, 16- and 32-bit sums overflow and wrap
        info = np.iinfo(dtype)
        lo, hi = max(info.min, -(2 ** 40)), min(info.max, 2 ** 40)
        a = rng.integers(lo, hi, (3, 37, 41), dtype=dtype, endpoint=True)
        b = rng.integers(lo, hi, (41, 23), dtype=dtype, endpoint=True)
    got = on_gpu(a) @ on_gpu(b)
    assert got.device == "cuda:0"
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(np.asarray(got), a @ b)
        np.testing.assert_array_equal(np.asarray(on_gpu(a)[1].T @ on_gpu(a)[2]), a[1].T @ a[2])
        np.testing.assert_array_equal(np.asarray(on_gpu(b).T @ on_gpu(a[0, 0])), b.T @ a[0, 0])
    assert np.asarray(on_gpu(a[:, :, :0]) @ on_gpu(b[:0])).shape == (3, 37, 23)


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("src", [np.float64, np.float32, np.float16, np.int64, np.uint8,
                                 np.bool_, np.complex64])
@pytest.mark.parametrize("dst", [np.int8, np.uint16, np.int64, np.float16, np.float32,
                                 np.complex128, np.bool_])
def test_casts_match_numpy(device_session, device, src, dst):
    x = np.array([0, 1, -1, 2.5, -2.5, 100.7, -128.9, 255.2, 1000.5, 65504, 1e5],
                 dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        a = x.astype(src) if np.dtype(src).kind != "b" else x > 1
        if np.dtype(src).kind in "fc" and np.dtype(dst).kind in "iu":
            # in range for dst: NumPy's out-of-range float -> int is platform-defined
            info = np.iinfo(dst)
            a = a[(np.real(a) > info.min - 1) & (np.real(a) < info.max + 1)]
        ref = a.astype(dst) if np.dtype(src).kind != "c" or np.dtype(dst).kind == "c" \
            else np.real(a).astype(dst)
    got = np.asarray(on_gpu(a).astype(dst))
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("dtype", [np.int32, np.float16, np.float32, np.complex64])
def test_where_and_clip_match_numpy(device_session, device, dtype):
    c = rng.random((6, 1)) > 0.5
    a, b = _operands(np.float64, (6, 7), (7,))
    a, b = a.astype(dtype), b.astype(dtype)
    np.testing.assert_array_equal(np.asarray(q.where(on_gpu(c), on_gpu(a), on_gpu(b))),
                                  np.where(c, a, b))
    np.testing.assert_array_equal(np.asarray(q.where(on_gpu(c), on_gpu(a), 0)),
                                  np.where(c, a, dtype(0)))
    if np.dtype(dtype).kind != "c":
        np.testing.assert_array_equal(np.asarray(q.clip(on_gpu(a), -1, 2)),
                                      np.clip(a, dtype(-1), dtype(2)))
        lo, hi = a[0], a[1]  # tensor bounds, broadcast
        np.testing.assert_array_equal(
            np.asarray(q.clip(on_gpu(a), on_gpu(lo), on_gpu(hi))),
            np.minimum(np.maximum(a, lo), hi))


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("red", ["prod", "any", "all", "argmin", "argmax", "var", "std"])
@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("dtype", [np.int16, np.float32, np.float64])
def test_more_reductions_match_numpy(device_session, device, red, axis, dtype):
    x = rng.integers(-3, 4, (37, 211)).astype(dtype)  # ties for argmin/argmax
    if red == "prod":
        x = (1 + x / 100).astype(dtype) if np.dtype(dtype).kind == "f" else x % 3
    if red == "all":
        x[5] = 0
    got = np.asarray(getattr(q, red)(on_gpu(x), axis=axis))
    exact = red in ("argmin", "argmax", "any", "all") or (
        red == "prod" and np.dtype(dtype).kind in "iu")  # integer products wrap alike
    if exact:
        np.testing.assert_array_equal(got, getattr(np, red)(x, axis=axis))
    else:  # float64 references; float32 results accumulate in double, round once
        ref = getattr(np, red)(x.astype(np.float64), axis=axis)
        np.testing.assert_allclose(got, ref, rtol=2e-6 if dtype == np.float32 else 1e-12)
    if red in ("argmin", "argmax") and np.dtype(dtype).kind == "f":
        x[3, 7] = np.nan
        x[3, 9] = np.nan
        np.testing.assert_array_equal(np.asarray(getattr(q, red)(on_gpu(x), axis=axis)),
                                      getattr(np, red)(x, axis=axis))


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("dtype", [np.float16, np.complex64, np.complex128])
def test_matmul_half_and_complex(device_session, device, dtype):
    a = rng.standard_normal((2, 33, 48))
    b = rng.standard_normal((48, 21))
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(a.shape)
        b = b + 1j * rng.standard_normal(b.shape)
    a, b = a.astype(dtype), b.astype(dtype)
    got = np.asarray(on_gpu(a) @ on_gpu(b))
    assert got.dtype == dtype
    ref = a.astype(np.complex128) @ b.astype(np.complex128)
    tol = 1e-2 if dtype == np.float16 else (1e-4 if dtype == np.complex64 else 1e-12)
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("draw", ["rand", "uniform", "randint", "randn"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_random_on_gpu_equals_cpu(device_session, device, draw, dtype):
    def sample():
        q.manual_seed(1234)
        if draw == "rand":
            return np.asarray(q.rand(999, dtype=dtype))
        if draw == "uniform":
            return np.asarray(q.uniform(-3.0, 7.0, size=999, dtype=dtype))
        if draw == "randint":
            return np.asarray(q.randint(-50, 50, size=999, dtype=dtype))
        return np.asarray(q.randn(999, dtype=dtype))

    gpu = sample()
    cpu = sample()
    if draw == "randn":  # CUDA's log/sin/cos: within a few ulp
        tol = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-14}[dtype]
        np.testing.assert_allclose(gpu.astype(np.float64), cpu.astype(np.float64), rtol=tol,
                                   atol=tol)
    else:  # bit-identical
        np.testing.assert_array_equal(gpu, cpu)


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("fn", ["cumsum", "cumprod"])
@pytest.mark.parametrize("axis", [None, 0, 1, 2])
@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.float32, np.float64, np.complex64,
                                   np.complex128])
def test_cumulative_matches_numpy(device_session, device, fn, axis, dtype):
    if np.dtype(dtype).kind == "c":
        x = (1 + (rng.standard_normal((4, 500, 3)) + 1j * rng.standard_normal((4, 500, 3)))
             / 100).astype(dtype)
    elif fn == "cumprod" and np.dtype(dtype).kind == "f":
        x = (1 + rng.standard_normal((4, 500, 3)) / 100).astype(dtype)
    else:
        x = rng.integers(0 if np.dtype(dtype).kind == "u" else -2, 3, (4, 500, 3)).astype(dtype)
    got = np.asarray(getattr(q, fn)(on_gpu(x), axis=axis))
    if np.dtype(dtype).kind in "iu":  # int64 / uint64 results, wrapping alike
        np.testing.assert_array_equal(got, getattr(np, fn)(x, axis=axis))
    else:
        single = dtype in (np.float32, np.complex64)
        wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
        ref = getattr(np, fn)(x.astype(wide), axis=axis)
        np.testing.assert_allclose(got, ref, rtol=1e-6 if single else 1e-12,
                                   atol=1e-5 if single else 1e-10)


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("dtype", [np.int8, np.float32, np.complex64])
def test_advanced_indexing_matches_numpy(device_session, device, dtype):
    x = (rng.standard_normal((8, 9, 4)) * 10).astype(dtype)
    i = np.array([0, -1, 3, 3, 7])
    j = np.array([[8], [0], [-9]])
    mask = rng.random((8, 9)) > 0.5
    g = on_gpu(x)
    np.testing.assert_array_equal(np.asarray(g[i]), x[i])
    np.testing.assert_array_equal(np.asarray(g[:, j]), x[:, j])
    np.testing.assert_array_equal(np.asarray(g[i[:3], :, j[:, 0] % 4]), x[i[:3], :, j[:, 0] % 4])
    np.testing.assert_array_equal(np.asarray(g[on_gpu(mask)]), x[mask])
    y = x.copy()
    t = on_gpu(x)
    t[np.array([5, 1, -2])] = on_gpu(x[:3])
    y[np.array([5, 1, -2])] = x[:3]
    np.testing.assert_array_equal(np.asarray(t), y)
    t[on_gpu(mask)] = 0
    y[mask] = 0
    np.testing.assert_array_equal(np.asarray(t), y)
    # repeated rows: the last value wins, as in NumPy, and the result stays on the GPU
    rep = np.array([2, 6, 2, -6, 2])
    t[rep] = on_gpu(x[3:8])
    y[rep] = x[3:8]
    assert t.device == "cuda:0"
    np.testing.assert_array_equal(np.asarray(t), y)
    with pytest.raises(IndexError):
        g[np.array([8])]
    np.testing.assert_array_equal(np.asarray(g), x)  # unchanged
