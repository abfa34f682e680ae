"""isthmus: native tensors, plugins and C++ code from Python (see docs/python.md).

    import isthmus as q
    q.init("cpu")                      # required first
    a = q.value([5, 4, 3, 2, 1])
    A = q.zeros(20, 20, 3)
    B = q.from_py(np_array)            # shares the array's memory
    np.asarray(A)                      # shares the tensor's memory
    C = q.from_dlpack(torch_tensor)    # shares the tensor's memory (any DLPack producer)
    t = q.torch.to_tensor(A)           # a torch.Tensor sharing A's memory
"""

from . import _isthmus
from ._isthmus import (  # noqa: F401
    LOCK_READ,
    LOCK_READWRITE,
    LOCK_WRITE,
    MEMRESOURCE_CPU,
    MEMRESOURCE_DEVICE0,
    MEMRESOURCE_DEVICE1,
    MEMRESOURCE_DEVICE2,
    MEMRESOURCE_DEVICE3,
    MEMRESOURCE_DEVICE4,
    MEMRESOURCE_SINGLE_CUDA,
    MEMRESOURCE_SINGLE_OPENCL,
    __version__,
    asvalue,
    destroy,
    from_dlpack,
    from_py,
    init,
    is_initialized,
    not_,
    ones,
    print,
    qtype,
    qvalue,
    size,
    type,
    typename,
    uninit,
    value,
    zeros,
)
from . import torch  # noqa: E402  (PyTorch itself is imported on first use)

__all__ = [
    "LOCK_READ",
    "LOCK_READWRITE",
    "LOCK_WRITE",
    "MEMRESOURCE_CPU",
    "MEMRESOURCE_DEVICE0",
    "MEMRESOURCE_DEVICE1",
    "MEMRESOURCE_DEVICE2",
    "MEMRESOURCE_DEVICE3",
    "MEMRESOURCE_DEVICE4",
    "MEMRESOURCE_SINGLE_CUDA",
    "MEMRESOURCE_SINGLE_OPENCL",
    "asvalue",
    "destroy",
    "from_dlpack",
    "from_py",
    "init",
    "is_initialized",
    "not_",
    "ones",
    "print",
    "qtype",
    "qvalue",
    "size",
    "torch",
    "type",
    "typename",
    "uninit",
    "value",
    "zeros",
]
