# mypy on the shipped stub (isthmus/__init__.pyi) and on typed user code: the stub is clean under
# --strict, correct code passes, and misspelt names and wrong types are reported (no blanket
# module __getattr__: See Note [no module __getattr__ in the stub]).
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

import isthmus as q

pytest.importorskip("mypy", reason="mypy checks the stubs; scripts/deps installs it")

PACKAGE = pathlib.Path(q.__file__).parent


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("mypy_cache")


def mypy(args, cache_dir, cwd):
    """mypy's exit code and report; isthmus is found as an installed, typed package is (on the
    path of the Python that runs mypy), not as code under check."""
    env = dict(os.environ, PYTHONPATH=str(PACKAGE.parent))
    r = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(cache_dir),
                        "--no-color-output", "--no-error-summary", *args],
                       cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    return r.returncode, r.stdout + r.stderr


def test_the_package_is_marked_typed():
    assert (PACKAGE / "py.typed").is_file()
    assert (PACKAGE / "__init__.pyi").is_file()


def test_the_stub_is_clean_under_strict(cache_dir, tmp_path):
    # The stub itself is checked; the pure-Python submodules it imports are followed silently
    # (their own annotations are theirs, not the stub's).
    rc, out = mypy(["--strict", "--follow-imports=silent", str(PACKAGE / "__init__.pyi")],
                   cache_dir, tmp_path)
    assert rc == 0, out
    assert out.strip() == "", out


GOOD = """\
    import numpy as np

    import isthmus as q


    def blurred_total(n: int) -> float:
        q.init("cpu")
        a: q.qvalue = q.zeros(n, n, dtype="float32")
        b = q.from_py(np.ones((n, n), dtype=np.float32))
        c = q.sqrt(a + b * 2.0)
        total = q.sum(c, axis=0, keepdims=False)
        shape: tuple[int, ...] = c.shape
        m = q.compile_string("it", "ISTHMUS_PLUGIN(it, m) {}", ["-O2"], lang=None)
        kernel = getattr(m, "addk")
        q.parallel_do(shape, c, kernel)
        with q.checked():
            q.parallel_do([n, n], c, kernel)
        with q.device("cpu"):
            d = q.where(c > 1.0, c, 0.0)
        if q.type(d, "mat") and q.typename("vec[mat]").kind == "cell":
            q.print(d)
        info: dict[str, object] = q.build_info()
        print(info["version"], q.placement(c), q.cuda_available())
        return float(total.max())
    """

BAD = """\
    import isthmus as q

    q.compile_strng("it", "")
    x: int = q.zeros(3)
    q.parallel_do()
    q.init(devise="cpu")
    """


def test_typed_user_code_passes_and_mistakes_are_reported(cache_dir, tmp_path):
    (tmp_path / "good.py").write_text(textwrap.dedent(GOOD))
    (tmp_path / "bad.py").write_text(textwrap.dedent(BAD))
    (tmp_path / "reveal.py").write_text(
        "import isthmus as q\nreveal_type(q.zeros(3))\nreveal_type(q.parallel_do)\n")
    rc, out = mypy(["--strict", "good.py", "bad.py", "reveal.py"], cache_dir, tmp_path)
    lines = [line for line in out.splitlines() if line.strip()]
    assert not [line for line in lines if line.startswith("good.py")], out
    bad = [line for line in lines if line.startswith("bad.py") and ": error:" in line]
    assert any(line.startswith("bad.py:3:") and '"compile_strng"' in line
               and "compile_string" in line for line in bad), out  # the typo, with the fix
    assert any(line.startswith("bad.py:4:") and "qvalue" in line for line in bad), out
    assert any(line.startswith("bad.py:5:") for line in bad), out  # dims missing
    assert any(line.startswith("bad.py:6:") and '"devise"' in line for line in bad), out
    assert len(bad) == 4, out
    assert any('reveal.py:2: note: Revealed type is "isthmus.qvalue"' in line for line in lines), out
    assert rc == 1


def test_plugin_names_are_not_module_attributes_for_mypy(cache_dir, tmp_path):
    # At run time q.addk exists after compiling a plugin that defines it, but a type checker
    # cannot know that: it reports the name, and points at the returned module instead.
    (tmp_path / "plugin_use.py").write_text(textwrap.dedent("""\
        import isthmus as q

        m = q.compile_string("it", "")
        m.addk
        q.addk
        """))
    rc, out = mypy(["plugin_use.py"], cache_dir, tmp_path)
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert len(errors) == 1 and errors[0].startswith("plugin_use.py:5:"), out
    assert '"addk"' in errors[0], out
