# q.cuda_memory_source (Note [torch memory bridge], Note [device memory source]): the checks on
# every machine, the bridge compiled against the installed torch's headers, and on a GPU with a
# CUDA torch, isthmus's blocks coming from torch's caching allocator.
import subprocess
from pathlib import Path

import numpy as np
import pytest

import isthmus as q
from cuda_helpers import HAVE_CUDA, NO_CUDA_REASON
from isthmus import _isthmus, cuda_memory


def test_reports_the_source_without_cuda_too():
    assert q.cuda_memory_source() == "isthmus"
    assert q.cuda_memory_source(None) == "isthmus"


@pytest.mark.parametrize("bad, exc, msg", [
    ("cupy", ValueError, "unknown source 'cupy'; expected one of 'isthmus', 'torch'"),
    ("", ValueError, "unknown source ''"),
    ("Torch", ValueError, "unknown source 'Torch'"),
    (1, TypeError, "expected a str"),
    (b"torch", TypeError, "expected a str"),
])
def test_bad_sources_are_refused(bad, exc, msg):
    with pytest.raises(exc, match=msg):
        q.cuda_memory_source(bad)
    assert q.cuda_memory_source() == "isthmus"


@pytest.mark.skipif(HAVE_CUDA, reason="this machine has a GPU")
@pytest.mark.parametrize("source", ["torch", "isthmus"])
def test_without_cuda_the_cause_is_named(source):
    with pytest.raises(RuntimeError, match="cuda_memory_source: CUDA is not available: "):
        q.cuda_memory_source(source)
    assert q.cuda_memory_source() == "isthmus"


@pytest.mark.skipif(HAVE_CUDA, reason="this machine has a GPU")
def test_the_native_setter_checks_its_arguments_and_names_the_cause():
    # both functions or neither (C++ checks before it needs CUDA)
    with pytest.raises(ValueError, match="give both allocate and deallocate"):
        _isthmus._cuda_set_memory_source(0x1000, 0, 0, "mine")
    with pytest.raises(ValueError, match="a source needs a name"):
        _isthmus._cuda_set_memory_source(0x1000, 0x2000, 0, "")
    with pytest.raises(ValueError, match="names the built-in caching allocator"):
        _isthmus._cuda_set_memory_source(0x1000, 0x2000, 0, "isthmus")
    with pytest.raises(RuntimeError, match="cuda::set_memory_source: CUDA is not available"):
        _isthmus._cuda_set_memory_source(0x1000, 0x2000, 0, "mine")
    assert q.cuda_memory_source() == "isthmus"


def test_torch_without_cuda_is_named(monkeypatch):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this torch has CUDA")
    monkeypatch.setattr(_isthmus, "cuda_available", lambda: True)
    with pytest.raises(RuntimeError, match=r"this PyTorch \(.*\) has no CUDA here"):
        q.cuda_memory_source("torch")
    assert q.cuda_memory_source() == "isthmus"


def test_the_bridge_compiles_against_the_installed_torch(tmp_path):
    # The bridge calls torch's allocator through its C++ interface: it must compile against the
    # headers of the torch that is installed (a CPU wheel carries c10/cuda's headers too).
    torch = pytest.importorskip("torch")
    c10_cuda = Path(torch.__file__).parent / "include" / "c10" / "cuda"
    if not (c10_cuda / "CUDACachingAllocator.h").is_file():
        pytest.skip("this torch has no c10/cuda headers")
    try:
        cmd = cuda_memory.bridge_command(torch, tmp_path / "b.so", syntax_only=True)
    except RuntimeError as e:
        pytest.skip(str(e))  # no compiler or no CUDA headers here
    if not (c10_cuda / "impl" / "cuda_cmake_macros.h").is_file():
        # A CPU wheel lacks this one generated header (a CUDA build's says its library is
        # shared): a stand-in lets the rest be checked here.
        stand_in = tmp_path / "inc" / "c10" / "cuda" / "impl"
        stand_in.mkdir(parents=True)
        (stand_in / "cuda_cmake_macros.h").write_text("#pragma once\n"
                                                      "#define C10_CUDA_BUILD_SHARED_LIBS\n")
        cmd[1:1] = ["-I", str(tmp_path / "inc")]
    r = subprocess.run(cmd, input=cuda_memory.BRIDGE_SOURCE, text=True, capture_output=True)
    assert r.returncode == 0, r.stderr
    # the real build links torch's c10_cuda, which only a CUDA torch has
    full = cuda_memory.bridge_command(torch, tmp_path / "b.so")
    assert "-shared" in full and "-lc10_cuda" in full and str(tmp_path / "b.so") in full


def test_a_bridge_that_does_not_compile_is_a_runtime_error(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(cuda_memory, "BRIDGE_SOURCE", "this is not C++;\n")
    try:
        cuda_memory.bridge_command(torch, tmp_path / "x.so")
    except RuntimeError as e:
        pytest.skip(str(e))
    with pytest.raises(RuntimeError, match="the PyTorch bridge did not compile"):
        cuda_memory.build_bridge(torch, tmp_path)
    assert not list(tmp_path.iterdir())  # no partial file left


# ---- on a GPU with a CUDA torch ----

@pytest.mark.skipif(not HAVE_CUDA, reason=NO_CUDA_REASON)
def test_isthmus_blocks_come_from_torchs_pool():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    q.destroy()
    q.init("cuda")
    try:
        assert q.cuda_memory_source("torch") == "torch"
        n = 1 << 22
        before = torch.cuda.memory_allocated(0)
        mallocs = q.cuda_memory_info(0)["device_allocations"]
        A = q.value(np.arange(n, dtype=np.float32))
        B = A * 2  # computed on the GPU into a block from torch's pool
        assert torch.cuda.memory_allocated(0) >= before + 2 * 4 * n
        assert q.cuda_memory_info(0)["device_allocations"] == mallocs  # no cudaMalloc of ours
        np.testing.assert_array_equal(np.asarray(B), np.arange(n, dtype=np.float32) * 2)
        del A, B
        q.cuda_synchronize()
        assert torch.cuda.memory_allocated(0) == before  # handed back to torch
        # blocks go back to whoever made them across a change of source
        C = q.value(np.ones(n, np.float32)) + 1
        assert q.cuda_memory_source("isthmus") == "isthmus"
        D = C + 1  # isthmus's own allocator
        del C
        q.cuda_synchronize()
        assert torch.cuda.memory_allocated(0) == before
        np.testing.assert_array_equal(np.asarray(D), np.full(n, 3, np.float32))
    finally:
        q.cuda_memory_source("isthmus")
        q.destroy()
        q.init("cpu")
