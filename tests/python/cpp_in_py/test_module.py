# The module itself: one library in two roles, init/destroy and the init gate, constants.
import os
import subprocess
import sysconfig

import numpy as np
import pytest

import isthmus as q

from conftest import BUILD_DIR, INSTALLED, PACKAGE_PARENT


@pytest.mark.skipif(INSTALLED, reason="the build-tree layout (test_install.py checks the wheel's)")
def test_package_layout_is_the_shared_library():
    ext = sysconfig.get_config_var("EXT_SUFFIX")
    module = PACKAGE_PARENT / "isthmus" / f"_isthmus{ext}"
    assert module.exists()
    assert os.path.realpath(module) == os.path.realpath(BUILD_DIR / "core" / "libisthmus.so")
    assert os.path.realpath(q._isthmus.__file__) == os.path.realpath(module)


def test_library_does_not_link_libpython():
    lib = os.path.realpath(q._isthmus.__file__)  # the build's libisthmus.so or the wheel's copy
    out = subprocess.run(["ldd", lib], capture_output=True, text=True, check=True).stdout
    assert "libpython" not in out
    dyn = subprocess.run(["readelf", "-d", lib], capture_output=True, text=True)
    if dyn.returncode == 0:
        assert "libpython" not in dyn.stdout


def test_library_keeps_the_cpp_runtime_private():
    # See Note [static libstdc++]: built by a toolchain that links libstdc++ statically, the library
    # must not export its copy (std::locale's facet ids are GNU_UNIQUE, process-wide), or a
    # libstdc++.so loaded after it binds to them.
    lib = os.path.realpath(q._isthmus.__file__)
    nm = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True)
    if nm.returncode != 0:
        pytest.skip(f"nm cannot read {lib}: {nm.stderr.strip()}")
    runtime = ("_ZNSt6locale", "_ZNKSt7codecvt", "_ZNSt8ios_base", "__cxa_throw", "_Unwind_")
    exported = [ln.split()[-1] for ln in nm.stdout.splitlines() if ln.split()[-1].startswith(runtime)]
    assert exported == [], f"libstdc++/libgcc symbols exported: {exported[:5]}"


def test_torch_imports_after_isthmus(run_python):
    # The order that crashed with a statically linked libstdc++ (GPU machine, 2026-11-26).
    pytest.importorskip("torch")
    out = run_python(
        """
        import isthmus as q, torch
        q.init("cpu")
        print(torch.tensor([1.5, 2.0]).sum().item(), q.value([1, 2]).sum())
        """
    )
    assert out.stdout.split() == ["3.5", "3"]


def test_version_and_constants():
    assert q.__version__.count(".") == 2
    assert (q.LOCK_READ, q.LOCK_WRITE, q.LOCK_READWRITE) == (1, 2, 3)
    assert q.MEMRESOURCE_DEVICE0 == 0
    assert q.MEMRESOURCE_CPU == q.MEMRESOURCE_DEVICE1 == 1
    assert q.MEMRESOURCE_SINGLE_CUDA == q.MEMRESOURCE_DEVICE2 == 2
    assert (q.MEMRESOURCE_DEVICE3, q.MEMRESOURCE_DEVICE4) == (3, 4)
    assert q.MEMRESOURCE_SINGLE_OPENCL == 0x4000
    assert q.qvalue.__module__ == "isthmus" and q.qtype.__module__ == "isthmus"


GATED = [
    "q.value([1, 2])",
    "q.value(2.0)",
    "q.zeros(2, 3)",
    "q.ones(2)",
    "q.uninit(2)",
    "q.typename('vec')",
    "q.type(1.0, 'scalar')",
    "q.size(1.0)",
    "q.print(1)",
    "q.from_py(np.zeros(3))",
    "q.asvalue(np.zeros(3))",
    "q.qvalue([1.0])",
]


def test_calls_before_init_raise(run_python):
    code = f"""
        import numpy as np
        import isthmus as q
        assert not q.is_initialized()
        # constants and type objects need no init
        assert q.LOCK_READ == 1 and q.MEMRESOURCE_CPU == 1 and q.qvalue and q.qtype
        for expr in {GATED!r}:
            try:
                eval(expr)
            except RuntimeError as e:
                assert "init" in str(e), (expr, str(e))
            else:
                raise AssertionError(expr + " did not raise")
        q.init("cpu")
        assert q.value([1, 2]).to_py().tolist() == [1, 2]
        print("ok")
    """
    assert run_python(code).stdout.strip() == "ok"


def test_destroy_then_calls_raise_then_reinit():
    a = q.value([1.0, 2.0])
    q.destroy()
    try:
        assert not q.is_initialized()
        for expr in GATED:
            with pytest.raises(RuntimeError, match="destroy"):
                eval(expr)
        with pytest.raises(RuntimeError, match="init"):
            a.to_py()
        with pytest.raises(RuntimeError, match="init"):
            a.lock(q.LOCK_READ, q.MEMRESOURCE_CPU)
        # metadata stays readable, and a second destroy is harmless
        assert a.shape == (2,) and a.dtype == np.float32
        q.destroy()
    finally:
        q.init("cpu")
    assert q.is_initialized()
    assert a.to_py().tolist() == [1.0, 2.0]
    assert q.zeros(2).to_py().tolist() == [0.0, 0.0]


def test_init_again_with_same_settings_is_a_noop():
    q.init("cpu")
    q.init(device="cpu", precision="float32", load_compiler=False)
    q.init("cpu", loadCompiler=False)
    assert q.is_initialized()


def test_init_with_other_settings_while_running_raises():
    with pytest.raises(RuntimeError, match="already initialised"):
        q.init("cpu", precision="float64")
    assert q.value(1.5).dtype == np.float32


@pytest.mark.skipif(q.cuda_available(), reason="this machine has a GPU")
def test_init_cuda_raises_clear_runtime_error(run_python):
    for dev in ("cuda", "cuda:0", "CUDA:1"):
        with pytest.raises(RuntimeError, match="CUDA"):
            q.init(dev)
    assert q.is_initialized()
    res = run_python(
        """
        import isthmus as q
        try:
            q.init("cuda")
        except RuntimeError as e:
            print("RuntimeError", e)
        assert not q.is_initialized()
        """
    )
    assert "CUDA is not available" in res.stdout


@pytest.mark.parametrize("dev", ["gpu", "opencl", "cuda:x", "", "helios:cpu", "cpu0"])
def test_init_unknown_device_raises_value_error(dev):
    with pytest.raises(ValueError, match="unknown device"):
        q.init(dev)
    assert q.is_initialized()


@pytest.mark.parametrize("bad", ["float16", "int32", "quad"])
def test_init_bad_precision_raises_value_error(bad):
    with pytest.raises(ValueError, match="precision"):
        q.init("cpu", precision=bad)
    assert q.is_initialized()


def test_init_argument_types():
    with pytest.raises(TypeError):
        q.init(3)


def test_precision_float64_switches_scalar(run_python):
    res = run_python(
        """
        import numpy as np
        import isthmus as q
        q.init("cpu", precision="float64")
        assert q.value(2.0).dtype == np.float64
        assert q.value([1.0, 2.0]).dtype == np.float64
        assert q.zeros(2).dtype == np.float64
        assert q.typename("scalar").dtype == np.float64
        assert q.value(1j).dtype == np.complex128
        q.destroy()
        q.init("cpu")
        assert q.value(2.0).dtype == np.float32
        assert q.value(1j).dtype == np.complex64
        print("ok")
        """
    )
    assert res.stdout.strip() == "ok"


def test_process_survives_native_errors(run_python):
    res = run_python(
        """
        import isthmus as q
        q.init("cpu")
        for f in (lambda: q.zeros(-1), lambda: q.typename("vec[mat"), lambda: q.value([[1], [2, 3]])):
            try:
                f()
            except Exception as e:
                print(type(e).__name__)
        print("alive")
        """
    )
    assert res.stdout.split() == ["ValueError", "ValueError", "ValueError", "alive"]
