# pytest configuration for the Python module: imports `isthmus` from the build tree and starts it.
import contextlib
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD_DIR = pathlib.Path(os.environ.get("ISTHMUS_BUILD_DIR", ROOT / "build")).resolve()
PACKAGE_PARENT = BUILD_DIR / "python"

# The staged package ($ISTHMUS_BUILD_DIR/python/isthmus) goes first, whatever PYTHONPATH says,
# unless ISTHMUS_TEST_INSTALLED=1 asks to test the installed package (tests/python/project/test_install.py).
INSTALLED = os.environ.get("ISTHMUS_TEST_INSTALLED") == "1"
# compile_string's quick builds and their optimised builds in the background (Note [compile
# tiers]) would double the suite's compiles on a 2-core machine: the suite compiles the optimised
# build directly, except plugins/test_compile_tiers.py, which turns tiers on.
os.environ.setdefault("ISTHMUS_COMPILE_TIERS", "0")
if not INSTALLED and str(PACKAGE_PARENT) not in sys.path:
    sys.path.insert(0, str(PACKAGE_PARENT))

import isthmus as q  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def runtime():
    """The runtime, initialised once for the whole session (tests that destroy it re-init)."""
    q.init("cpu")
    yield q
    q.destroy()


# Note [module fixtures under worksteal]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# pytest-xdist's worksteal can hand a worker a module's tests in two runs with another module
# between them; pytest then tears the module-scoped fixtures down and sets them up again in the
# same process. A fixture that compiles a plugin into a fresh temporary cache each time then
# imports a second library defining the same names, which isthmus refuses ("already has").
# Caches (and sources) made through worker_dir are the same directory the second time, so the
# compile is a cache hit and returns the module already imported.
@pytest.fixture(scope="session")
def worker_dir(tmp_path_factory):
    """worker_dir(name): one directory per name for this test process.

    See Note [module fixtures under worksteal] above."""
    made = {}

    def get(name):
        if name not in made:
            made[name] = tmp_path_factory.mktemp(name)
        return made[name]

    return get


@pytest.fixture(scope="session")
def worker_cache(worker_dir):
    """worker_cache(name): a context manager that points ISTHMUS_CACHE_DIR at worker_dir(name)/cache.

    For module-scoped fixtures that compile plugins: `with worker_cache("x") as d: yield ...`.
    See Note [module fixtures under worksteal] above."""

    @contextlib.contextmanager
    def cache(name):
        d = worker_dir(name) / "cache"
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("ISTHMUS_CACHE_DIR", str(d))
            yield d

    return cache


@pytest.fixture
def plugin_cache(tmp_path, monkeypatch):
    """A fresh plugin cache for one test (ISTHMUS_CACHE_DIR=<tmp_path>/cache), with the
    precompiled layer at its default (ISTHMUS_PLUGIN_PCH unset); returns the cache's path."""
    d = tmp_path / "cache"
    monkeypatch.setenv("ISTHMUS_CACHE_DIR", str(d))
    monkeypatch.delenv("ISTHMUS_PLUGIN_PCH", raising=False)
    return d


@pytest.fixture
def run_python():
    """Runs a snippet in a fresh interpreter that imports the built package; returns the result."""

    def run(code, check=True):
        env = dict(os.environ)
        if not INSTALLED:
            env["PYTHONPATH"] = str(PACKAGE_PARENT) + os.pathsep + env.get("PYTHONPATH", "")
        res = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if check and res.returncode != 0:
            raise AssertionError(f"snippet failed ({res.returncode}):\n{res.stdout}\n{res.stderr}")
        return res

    return run


# Note [parallel pytest] (docs/testing.md): the packaging test compiles a wheel for minutes, so
# it is collected first; with pytest-xdist's work stealing the first worker starts it at once
# and the other workers share the rest of the suite meanwhile.
LONG_TESTS_FIRST = ("test_install.py",)


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: 0 if item.path.name in LONG_TESTS_FIRST else 1)


@pytest.fixture(params=["cpu", "cuda"])
def init_device(request):
    """Runs the test after init("cpu") (devices registered on first use) and init("cuda"): the
    GPU exchange tests (test_dlpack_cuda*.py)."""
    q.destroy()
    q.init(request.param)
    yield request.param
    q.cuda_synchronize()
    q.destroy()
    q.init("cpu")
