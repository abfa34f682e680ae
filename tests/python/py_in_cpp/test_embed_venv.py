# The embedded interpreter respects virtual environments: a C++ host started with $VIRTUAL_ENV
# imports the packages installed in that venv (and only then).
import os
import subprocess
import sysconfig
import venv

import pytest

from conftest import BUILD_DIR, INSTALLED

PROBE = BUILD_DIR / "tests" / "py_in_cpp_venv" / "venv_probe"

pytestmark = pytest.mark.skipif(INSTALLED or not PROBE.exists(),
                                reason="needs the build tree's venv_probe host")


def run_probe(env_extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(env_extra)
    return subprocess.run([str(PROBE), "isthmus_venv_probe_mod"], env=env, capture_output=True,
                          text=True, timeout=120)


def test_cpp_host_imports_from_the_active_venv(tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    ver = sysconfig.get_python_version()
    site = env_dir / "lib" / f"python{ver}" / "site-packages"
    assert site.is_dir()
    (site / "isthmus_venv_probe_mod.py").write_text("VALUE = 'from the venv'\n")

    res = run_probe({"VIRTUAL_ENV": str(env_dir)})
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"file {site}" in res.stdout
    assert f"prefix {env_dir}" in res.stdout
    assert "value from the venv" in res.stdout

    # Without the venv the module is not there: a python_error names ModuleNotFoundError.
    res = run_probe({})
    assert res.returncode == 1
    assert "python_error ModuleNotFoundError" in res.stdout
