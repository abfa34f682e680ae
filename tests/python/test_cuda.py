# The CUDA backend from Python: init("cuda") errors, and GPU results against NumPy per device.
import numpy as np
import pytest

import isthmus as q

HAVE_CUDA = q.cuda_available()
NO_CUDA_REASON = "no CUDA: " + (q.cuda_unavailable_reason() or "?")


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


def on_gpu(x):
    """A qvalue whose only valid copy is on the GPU (copied there by a device op)."""
    v = q.value(x)
    v.lock(q.LOCK_READ, q.MEMRESOURCE_SINGLE_CUDA)
    v.unlock(q.LOCK_READ, q.MEMRESOURCE_SINGLE_CUDA)
    return v


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "maximum", "minimum", "lt", "eq"])
def test_binary_matches_numpy(device, dtype, op):
    q.destroy()
    q.init(device)
    try:
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
    finally:
        q.destroy()
        q.init("cpu")


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("op", ["exp", "sqrt", "sin", "tanh", "abs", "floor"])
def test_unary_matches_numpy(device, op):
    q.destroy()
    q.init(device)
    try:
        x = rng.random((1000, 7)).astype(np.float32) + 0.1
        got = np.asarray(getattr(q, op)(on_gpu(x)[:, 1:5]))
        np.testing.assert_allclose(got, getattr(np, op)(x[:, 1:5]), rtol=2e-6)
    finally:
        q.destroy()
        q.init("cpu")


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("red", ["sum", "mean", "min", "max"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2)])
def test_reductions_match_numpy(device, red, axis):
    q.destroy()
    q.init(device)
    try:
        x = rng.standard_normal((17, 300, 5)).astype(np.float32)
        got = np.asarray(getattr(q, red)(on_gpu(x), axis=axis))
        ref = getattr(np, red)(x.astype(np.float64), axis=axis)
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
        big = rng.random(3_000_001).astype(np.float32)  # many chunks, float32 summed in double
        np.testing.assert_allclose(float(np.asarray(getattr(q, red)(on_gpu(big)))),
                                   getattr(np, red)(big.astype(np.float64)), rtol=1e-6)
    finally:
        q.destroy()
        q.init("cpu")


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_matches_numpy(device, dtype):
    q.destroy()
    q.init(device)
    try:
        a = rng.standard_normal((3, 70, 50)).astype(dtype)
        b = rng.standard_normal((50, 40)).astype(dtype)
        got = np.asarray(on_gpu(a) @ on_gpu(b))
        tol = 1e-4 if dtype == np.float32 else 1e-10
        np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=tol, atol=tol)
    finally:
        q.destroy()
        q.init("cpu")


@pytest.mark.parametrize("device", _devices())
def test_lock_transitions_and_eviction(device):
    q.destroy()
    q.init(device)
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
        q.destroy()
        q.init("cpu")
