"""Shared by the tests that run on a GPU where there is one: whether there is (and why not), a
mark that skips a test without one, a value moved to the GPU, a CUDA session for a test, and the
CUDA plugin tests' checks of their vignette and gather kernels."""
import contextlib

import re

import numpy as np
import pytest

import isthmus as q

HAVE_CUDA = q.cuda_available()
NO_CUDA_REASON = "no CUDA: " + (q.cuda_unavailable_reason() or "?")
needs_gpu = pytest.mark.skipif(not HAVE_CUDA, reason=NO_CUDA_REASON)


def vignette_ref(x, strength):
    """What the tests' vignette kernel computes: darkens an HxWx3 image towards its corners."""
    h, w, _ = x.shape
    dy = (np.arange(h, dtype=np.float32) + np.float32(0.5)) / np.float32(h) - np.float32(0.5)
    dx = (np.arange(w, dtype=np.float32) + np.float32(0.5)) / np.float32(w) - np.float32(0.5)
    g = np.float32(1) - np.float32(strength) * (dx[None, :] ** 2 + dy[:, None] ** 2)
    return x * g[:, :, None]


def on_gpu(x):
    """A qvalue of `x` whose data is valid on the GPU (needs q.init("cuda"))."""
    v = q.value(x)
    v.lock(q.LOCK_READ, q.MEMRESOURCE_SINGLE_CUDA)
    v.unlock(q.LOCK_READ, q.MEMRESOURCE_SINGLE_CUDA)
    return v


@contextlib.contextmanager
def cuda_session(device="cuda"):
    """Runs the block in a q.init(device) session ("cuda" unless told, e.g. "cuda:0"), then
    returns to the CPU session."""
    q.destroy()
    q.init(device)
    try:
        yield
    finally:
        q.destroy()
        q.init("cpu")


def check_vignette(kernel, rng, shape, strength, gpu=False):
    """Runs a vignette kernel (x, y, strength) over a random image of `shape` against
    vignette_ref: in C order and in a transposed layout on the CPU, or moved to the GPU with
    gpu=True (where the result must be too)."""
    img = rng.random(shape, dtype=np.float32) * 255
    if gpu:
        inputs = [on_gpu(img)]
    else:
        inputs = [img, np.ascontiguousarray(img.transpose(1, 0, 2)).transpose(1, 0, 2)]
    for x in inputs:
        y = q.zeros(*shape)
        q.parallel_do(shape[:2], x, y, strength, kernel)
        assert y.device.startswith("cuda") == gpu
        np.testing.assert_allclose(np.asarray(y), vignette_ref(img, strength), rtol=1e-5,
                                   atol=1e-3)


def check_gather_on_gpu(kernel, name, rng):
    """Runs a gather kernel (x, idx, y: y(i) = x(idx(i))) on the GPU against NumPy, then checks
    that an index out of bounds is an IndexError naming the kernel `name`. Returns the float32
    x (1000 values), the index array idx (5000, one entry now out of bounds) and y."""
    x = rng.standard_normal(1000).astype(np.float32)
    idx = rng.integers(0, 1000, 5000)
    y = q.zeros(5000)
    q.parallel_do(5000, on_gpu(x), on_gpu(idx), y, kernel)
    np.testing.assert_array_equal(np.asarray(y), x[idx])
    idx[4321] = 1000
    with pytest.raises(IndexError, match=re.escape(name) + r": index 1000 is out of bounds for "
                                         r"dimension 0 with size 1000"):
        q.parallel_do(5000, on_gpu(x), on_gpu(idx), y, kernel)
    return x, idx, y
