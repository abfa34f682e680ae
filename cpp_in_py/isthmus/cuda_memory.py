"""Where isthmus's CUDA device memory comes from: ``q.cuda_memory_source`` (docs/cuda.md).

    q.cuda_memory_source("torch")    # new device memory from PyTorch's caching allocator
    q.cuda_memory_source()           # "torch"
    q.cuda_memory_source("isthmus")  # back to isthmus's own caching allocator
"""

# Note [torch memory bridge]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~
# Two caching allocators in one process each keep freed blocks for themselves: memory isthmus
# cached is memory torch cannot have, and the reverse, so a GPU shared by both runs out early.
# With "torch", isthmus takes its device blocks from torch's pool instead (Note [device memory
# source] in core/src/cuda/module_abi.h). torch's allocator is C++ behind virtual functions
# (c10::cuda::CUDACachingAllocator::raw_alloc_with_stream, raw_delete are inline calls through
# its interface), so it is reached through a few lines of C++ compiled against the installed
# torch's own headers, once per (torch build, compiler): a bridge library kept in the cache
# directory under bridges/ and loaded with ctypes. Blocks are asked for on isthmus's stream of
# the device, so torch reuses them in that stream's order, as it does for its own tensors; a
# failed allocation returns no memory (torch has already emptied its cache and retried), and
# isthmus evicts unlocked copies to the CPU and asks again. Blocks made before a change go back
# to the allocator that made them.

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from . import _isthmus

__all__ = ["cuda_memory_source"]

logger = logging.getLogger("isthmus.compile")

_SOURCES = ("isthmus", "torch")

BRIDGE_SOURCE = r"""// isthmus's memory from torch's caching allocator (Note [torch memory bridge]).
#include <c10/cuda/CUDACachingAllocator.h>

#include <cstddef>

extern "C" __attribute__((visibility("default"))) void*
isthmus_torch_allocate(void*, std::size_t nbytes, int, void* stream) noexcept {
    try { // the device is current (isthmus set it); the block belongs to isthmus's stream
        return c10::cuda::CUDACachingAllocator::raw_alloc_with_stream(
            nbytes, static_cast<cudaStream_t>(stream));
    } catch (...) { // torch's OutOfMemoryError: isthmus evicts and asks again
        return nullptr;
    }
}

extern "C" __attribute__((visibility("default"))) void
isthmus_torch_deallocate(void*, void* ptr, std::size_t, int, void*) noexcept {
    try {
        c10::cuda::CUDACachingAllocator::raw_delete(ptr);
    } catch (...) {
    }
}
"""

_bridge: Any = None  # the loaded bridge (kept: the runtime holds its function addresses)


def cuda_memory_source(source: str | None = None) -> str:
    """Chooses where new CUDA device memory comes from; returns the source now in use.

    source: None only reports it. "torch" takes isthmus's device memory from PyTorch's caching
      allocator (one pool for both libraries; torch.cuda.memory_allocated() counts isthmus's
      blocks), building a small bridge against the installed torch the first time (cached).
      "isthmus" goes back to isthmus's own caching allocator. Blocks made before a change go
      back to the allocator that made them, so this can be called at any time; choosing
      "torch" releases isthmus's cached free blocks.
    Raises RuntimeError when CUDA cannot run here or torch has no CUDA, ImportError without
    torch, and RuntimeError naming the compiler's message if the bridge cannot be built.
    """
    if source is None:
        return _isthmus._cuda_memory_source_name()
    if not isinstance(source, str):
        raise TypeError(f"cuda_memory_source: expected a str ({', '.join(map(repr, _SOURCES))}) "
                        f"or None, got {type(source).__name__}")
    if source not in _SOURCES:
        raise ValueError(f"cuda_memory_source: unknown source {source!r}; expected one of "
                         f"{', '.join(map(repr, _SOURCES))}")
    if not _isthmus.cuda_available():
        raise RuntimeError("cuda_memory_source: CUDA is not available: "
                           + _isthmus.cuda_unavailable_reason())
    if source == "isthmus":
        _isthmus._cuda_set_memory_source(0, 0, 0, "")
    else:
        allocate, deallocate = _torch_functions()
        _isthmus._cuda_set_memory_source(allocate, deallocate, 0, "torch")
    return _isthmus._cuda_memory_source_name()


def _torch_functions() -> tuple[int, int]:
    """The bridge's two function addresses (built and loaded on first use)."""
    global _bridge
    from .torch import _torch

    torch = _torch()
    if not torch.cuda.is_available():
        raise RuntimeError(f"cuda_memory_source: this PyTorch ({torch.__version__}) has no CUDA "
                           f"here, so its caching allocator cannot serve isthmus")
    torch.cuda.init()  # torch's allocator exists once torch's CUDA is initialised
    if _bridge is None:
        _bridge = ctypes.CDLL(str(build_bridge(torch)))
    return (ctypes.cast(_bridge.isthmus_torch_allocate, ctypes.c_void_p).value,
            ctypes.cast(_bridge.isthmus_torch_deallocate, ctypes.c_void_p).value)


def _cuda_include() -> Path | None:
    """A folder with cuda_runtime_api.h: the toolkit's, or the nvidia-cuda-runtime wheel's."""
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    candidates = [Path(r) / "include" for r in roots if r]
    try:
        import nvidia.cuda_runtime as rt  # the wheel torch itself uses

        candidates += [Path(p) / "include" for p in rt.__path__]
    except ImportError:
        pass
    return next((c for c in candidates if (c / "cuda_runtime_api.h").is_file()), None)


def bridge_command(torch: Any, output: Path, *, syntax_only: bool = False) -> list[str]:
    """The compiler command that builds the bridge (or, syntax_only, only checks it) against
    `torch`'s headers; RuntimeError when no compiler or CUDA header folder is found."""
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not cxx:
        raise RuntimeError("cuda_memory_source: no C++ compiler found for the PyTorch bridge "
                           "(set CXX or install g++)")
    cuda_include = _cuda_include()
    if cuda_include is None:
        raise RuntimeError("cuda_memory_source: cuda_runtime_api.h not found for the PyTorch "
                           "bridge (set CUDA_HOME, or install nvidia-cuda-runtime)")
    root = Path(torch.__file__).parent
    abi = int(bool(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True)))
    cmd = [*cxx.split(), "-std=c++20", "-O2", "-fPIC", f"-D_GLIBCXX_USE_CXX11_ABI={abi}",
           "-I", str(root / "include"), "-I", str(cuda_include), "-x", "c++", "-"]
    if syntax_only:
        return [*cmd, "-fsyntax-only"]
    lib = str(root / "lib")
    return [*cmd, "-shared", "-o", str(output), "-L", lib, "-lc10_cuda", "-lc10",
            f"-Wl,-rpath,{lib}"]


def build_bridge(torch: Any, directory: Path | None = None) -> Path:
    """The bridge library for this torch, compiled into <cache>/bridges/ unless it is there."""
    from .cache import cache_dir

    d = Path(directory) if directory is not None else cache_dir() / "bridges"
    key = hashlib.sha256("\0".join([
        BRIDGE_SOURCE, torch.__version__, str(Path(torch.__file__).resolve()),
        os.environ.get("CXX", ""), sys.version]).encode()).hexdigest()[:16]
    out = d / f"torch_memory-{key}.so"
    if out.is_file():
        return out
    d.mkdir(parents=True, exist_ok=True)
    logger.info("isthmus: building the PyTorch memory bridge (once per torch build) into %s", out)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".torch_memory-", suffix=".so")
    os.close(fd)
    try:
        r = subprocess.run(bridge_command(torch, Path(tmp)), input=BRIDGE_SOURCE, text=True,
                           capture_output=True)
        if r.returncode != 0:
            raise RuntimeError("cuda_memory_source: the PyTorch bridge did not compile:\n"
                               + (r.stderr or r.stdout).strip())
        os.replace(tmp, out)  # atomic: a concurrent build leaves one complete file
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return out
