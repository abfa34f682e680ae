"""Shared by the GPU exchange tests (test_dlpack_cuda.py, test_dlpack_cuda_streams.py): torch CUDA
tensors and isthmus GPU values with NumPy references, host copies, device addresses (their
fixture init_device is in conftest.py)."""
import numpy as np
import pytest

import isthmus as q
from cuda_helpers import HAVE_CUDA, NO_CUDA_REASON


try:
    import torch
    HAVE_TORCH_CUDA = torch.cuda.is_available()
except ImportError:  # the tests that need torch skip
    torch = None
    HAVE_TORCH_CUDA = False

needs_torch_gpu = pytest.mark.skipif(
    not (HAVE_CUDA and HAVE_TORCH_CUDA),
    reason=NO_CUDA_REASON if not HAVE_CUDA else "torch has no CUDA here")

rng = np.random.default_rng(20241122)

GPU_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "float16", "bfloat16",
              "float32", "float64", "complex64", "complex128"]
CUDA0 = q.MEMRESOURCE_SINGLE_CUDA


def torch_dtype(name):
    return getattr(torch, name)


def reference(dtype, shape=(5, 7)):
    """Random float64/complex128/bool NumPy data for `dtype` (exact in every dtype)."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith(("int", "uint")):
        return rng.integers(0, 100, size=shape).astype(np.float64)
    if dtype.startswith("complex"):
        return np.round(rng.standard_normal(shape) * 8) + 1j * np.round(
            rng.standard_normal(shape) * 8)
    return np.round(rng.standard_normal(shape) * 8)  # small integers: exact in float16/bfloat16


def random_torch(dtype, shape=(5, 7)):
    """A torch CUDA tensor of `dtype` and its NumPy reference."""
    ref = reference(dtype, shape)
    return torch.from_numpy(ref).to(torch_dtype(dtype)).to("cuda"), ref


def on_gpu(dtype, shape=(5, 7)):
    """A qvalue owned by isthmus whose only valid copy is on cuda:0, and its NumPy reference."""
    q.cuda_stream()  # registers the devices after init("cpu") too
    ref = reference(dtype, shape)
    A = q.value(ref).astype(dtype)
    A.lock(q.LOCK_READWRITE, CUDA0)  # valid on the GPU, stale on the CPU
    A.unlock(q.LOCK_READWRITE, CUDA0)
    assert A.device == "cuda:0" and A._pinned_to() == -1
    return A, ref


def host(x):
    """A float64/complex128/bool NumPy copy of a torch tensor or qvalue, after synchronising."""
    if isinstance(x, torch.Tensor):
        torch.cuda.synchronize()
        x = x.cpu()
        if x.dtype in (torch.float16, torch.bfloat16):
            x = x.to(torch.float64)
        return x.numpy().copy()
    q.cuda_synchronize()
    if x.dtype == "bfloat16":
        x = x.astype("float64")
    return x.to_py()


def device_address(A, res=CUDA0):
    p = A.lock(q.LOCK_READ, res)
    A.unlock(q.LOCK_READ, res)
    return p
