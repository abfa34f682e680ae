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

# Note [BLAS through its package]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The extension needs libscipy_openblas.so (cmake/isthmus_blas.cmake, See Note [which blas]).
# Importing scipy_openblas32 loads it through the package's own loader, wherever pip put the
# package (a virtual environment that sees the base installation's packages, a --user install,
# another site-packages folder), and the dynamic loader then satisfies the extension's need with
# the library already loaded under that soname, as NumPy- and SciPy-style packages preload theirs.
# The relative RUNPATH of a wheel ($ORIGIN/../scipy_openblas32/lib) only covers the one layout
# where both packages sit in the same folder. A build against the system OpenBLAS needs neither.
try:
    import scipy_openblas32 as _scipy_openblas32  # noqa: F401  (loads libscipy_openblas.so)
except ImportError:
    _scipy_openblas32 = None
try:
    from . import _isthmus
except ImportError as _e:
    if "libscipy_openblas" not in str(_e):
        raise
    raise ImportError(f"{_e}: isthmus was built against scipy-openblas32, which this Python cannot "
                      "import; install it with `python -m pip install scipy-openblas32`") from _e
del _scipy_openblas32
from ._isthmus import *  # noqa: F401,F403  (every public name of the native module)
from ._isthmus import __version__, _native_stats, _op_table  # noqa: F401

# The pure-Python submodules (PyTorch, Pillow and matplotlib are imported on first use).
from . import autograd, torch  # noqa: E402,F401
from . import nn, optim  # noqa: E402,F401  (docs/autograd.md)
from .autograd import enable_grad, no_grad, set_grad_enabled  # noqa: E402,F401
from . import compile_log  # noqa: E402,F401  (See Note [compile notices])
from . import images  # noqa: E402
from . import pickling  # noqa: E402  (See Note [qvalue pickle payload])
from . import signatures  # noqa: E402  (See Note [plugin signatures])
from . import _qvalue_python  # noqa: E402  (qvalue's attributes written in Python)
import atexit as _atexit  # noqa: E402
from . import _finish_builds  # noqa: E402
from .cuda_memory import cuda_memory_source  # noqa: E402,F401  (Note [torch memory bridge])
from .images import ImageFileError, imread, imshow, imwrite, run_gui  # noqa: E402,F401
from .pickling import unpickle_device  # noqa: E402,F401

# NumPy's OpenBLAS (loaded by now) runs its threaded products on isthmus's OpenMP pool, so that
# no second pool busy-waits on the cores after NumPy's matmul (Note [one BLAS pool for the
# process], docs/threads.md)
_isthmus._share_blas_pools()

# qvalue's attributes written in Python (NumPy's protocols, pickling and copying, the array API's
# __array_namespace__, to_device and mT), in one module; `import isthmus.array_api` is the
# namespace, imported on first use because it starts a CPU session if none runs.
_qvalue_python.attach(qvalue)  # noqa: F405
pickling.refuse_native_objects()  # (Note [plugin objects do not pickle])
signatures.attach(native_function, native_kernel)  # noqa: F405
# inspect.signature(q.checked) reads the class's __signature__ (a pybind11 __init__ has none).
checked.__signature__ = signatures.class_signature(("enabled", bool, True))  # noqa: F405

# The optimised builds compile_string left running in the background (Note [compile tiers] in
# plugins/src/compile_tiers.cpp) do not hold up the interpreter's exit: they stop, and a detached
# process builds them into the cache for the next run.
_atexit.register(_finish_builds.hand_over)

# NVRTC from PyPI (nvidia-cuda-nvrtc: nvidia/cu13/lib for CUDA 13, nvidia/cuda_nvrtc/lib for 12)
# for compile_string(lang="cuda") (Note [NVRTC plugins], docs/plugins.md).
def _add_nvrtc_dirs() -> None:
    import os
    import sys
    for base in sys.path:
        for sub in ("nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"):
            d = os.path.join(base or ".", sub)
            if os.path.isdir(d):
                _isthmus._add_nvrtc_search_dir(os.path.abspath(d))


_add_nvrtc_dirs()

# The public names: those of the native module (see __init__.pyi for their signatures) and the
# pure-Python submodules and their exports.
__all__ = sorted([name for name in dir(_isthmus) if not name.startswith("_")]
                 + ["autograd", "torch", "compile_log", "images", "numpy_protocols", "pickling",
                    "signatures", "unpickle_device", "nn", "optim", "no_grad", "enable_grad",
                    "set_grad_enabled"] + images.__all__)
