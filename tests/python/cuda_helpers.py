"""Shared by the CUDA plugin tests (test_compile_cuda.py, test_compile_nvrtc.py): the vignette
kernel's NumPy reference, a value moved to the GPU, a CUDA session for a test."""
import contextlib

import numpy as np

import isthmus as q


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
def cuda_session():
    """Runs the block in a q.init("cuda") session, then returns to the CPU session."""
    q.destroy()
    q.init("cuda")
    try:
        yield
    finally:
        q.destroy()
        q.init("cpu")
