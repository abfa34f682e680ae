# `pip install .` into a fresh virtual environment (with NumPy 1.x), then the core of the Python
# suite against the installed package: the wheel layout, the stubs and NumPy 1 compatibility.
import os
import pathlib
import subprocess
import sys
import venv

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# The suites that need nothing but NumPy; they run against the installed package.
SUITES = ["test_module.py", "test_values.py", "test_numpy.py", "test_operators.py",
          "test_errors.py", "test_functions.py", "test_methods.py", "test_blas.py"]

pytestmark = pytest.mark.skipif(
    os.environ.get("ISTHMUS_SKIP_INSTALL_TEST") == "1" or
    os.environ.get("ISTHMUS_TEST_INSTALLED") == "1",
    reason="ISTHMUS_SKIP_INSTALL_TEST=1 (or already testing an installed package)")


def run(cmd, **kw):
    res = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if res.returncode != 0:
        raise AssertionError(f"{cmd} failed ({res.returncode}):\n{res.stdout[-6000:]}\n"
                             f"{res.stderr[-6000:]}")
    return res


def test_pip_install_into_fresh_venv(tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    py = str(env_dir / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    # Note [a quick wheel]
    # ~~~~~~~~~~~~~~~~~~~~
    # This test checks the packaging (layout, stubs, BLAS, NumPy 1); the code it packages is the
    # code the rest of the suite tests, built optimised. So the wheel here is built without CUDA
    # (the CUDA sources compile in the build under test) and without optimisation (-O0, no debug
    # info): the optimised build took 460 s of the CI's 2 cores, most of it in the optimiser on the
    # kernels' templates.
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_ROOT_USER_ACTION="ignore",
               CMAKE_BUILD_PARALLEL_LEVEL=str(os.cpu_count() or 2),
               CMAKE_ARGS=(env.get("CMAKE_ARGS", "") + " -DISTHMUS_CUDA=OFF"
                           " -DCMAKE_C_FLAGS_DEBUG=-O0 -DCMAKE_CXX_FLAGS_DEBUG=-O0").strip())
    # NumPy 1.x here (the oldest supported line); the main suite runs with NumPy 2.
    run([py, "-m", "pip", "install", "--quiet", "numpy>=1.24,<2", "pytest"], env=env,
        timeout=900)
    run([py, "-m", "pip", "install", "--quiet", "--config-settings=cmake.build-type=Debug",
         str(ROOT)], env=env, timeout=1500)

    # Imported from site-packages, not from the source or build tree.
    res = run([py, "-c", "import isthmus, numpy, pathlib; print(isthmus.__file__); "
               "print(numpy.__version__); d = pathlib.Path(isthmus.__file__).parent; "
               "print(sorted(p.name for p in d.iterdir()))"], env=env, cwd=tmp_path)
    file, npver, listing = res.stdout.splitlines()[:3]
    assert str(env_dir) in file
    assert npver.startswith("1.")
    assert "__init__.pyi" in listing and "py.typed" in listing and "include" in listing
    assert "_isthmus" in listing

    snippet = ("import isthmus as q, numpy as np; q.init('cpu'); a = q.value([1.0, 2.0]); "
               "print((a + np.ones(2)).to_py().tolist(), q.sum(a))")
    res = run([py, "-c", snippet], env=env, cwd=tmp_path)
    assert res.stdout.split()[0:2] == ["[2.0,", "3.0]"]

    # The suites against the installed package under NumPy 1.
    env["ISTHMUS_TEST_INSTALLED"] = "1"
    tests = [str(ROOT / "tests" / "python" / s) for s in SUITES]
    run([py, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests], env=env, cwd=tmp_path,
        timeout=900)
