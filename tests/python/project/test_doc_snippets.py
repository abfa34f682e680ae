"""Runs every python and cpp block of README.md and docs/*.md as written; checks relative links.

See Note [documentation snippets] (tests/python/project/doc_snippets.py) for the rules and the marks.
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig

import pytest

import doc_snippets as ds

ROOT = ds.ROOT
BUILD = pathlib.Path(os.environ.get("ISTHMUS_BUILD_DIR", ROOT / "build"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
INCLUDE_DIRS = [ROOT / layer / "include" for layer in ("core", "plugins", "py_boundary",
                                                       "py_in_cpp")]
# Where the examples' plugins are built: the README says to put it in ISTHMUS_PLUGIN_PATH.
PLUGIN_DIR = BUILD / "examples" / "plugins"
TIMEOUT_S = 300

ALL = [s for page in ds.pages() for s in ds.snippets(page) if s.language in ds.LANGUAGES]
PYTHON_PAGES = sorted({s.page for s in ALL if s.language == "python" and s.mark is None})
CPP_BLOCKS = [s for s in ALL if s.language == "cpp" and s.mark is None
              and not (ds.plugin_name(s) and not ds.is_program(s))]
PLUGIN_BLOCKS = [s for s in ALL if s.language == "cpp" and s.mark is None
                 and ds.plugin_name(s) and not ds.is_program(s)]
MARKED = [s for s in ALL if s.mark is not None]


def _id(s):
    return s.where


@pytest.fixture(scope="module")
def snippet_env(tmp_path_factory):
    """The environment every snippet runs in: the built package first on PYTHONPATH, one
    compile cache for the whole run, the examples' plugins findable by name, no display."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(BUILD / "python")] +
                                        [p for p in [env.get("PYTHONPATH")] if p])
    # One compile cache for the run: pytest-xdist's workers share their base folder's parent
    # (the cache is safe for concurrent compiles), so the precompiled layer is built once.
    base = tmp_path_factory.getbasetemp()
    cache = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "snippet_cache"
    cache.mkdir(exist_ok=True)
    env["ISTHMUS_CACHE_DIR"] = str(cache)
    env["ISTHMUS_PLUGIN_PATH"] = os.pathsep.join(
        [str(PLUGIN_DIR)] + [p for p in [env.get("ISTHMUS_PLUGIN_PATH")] if p])
    env["MPLBACKEND"] = "Agg"
    return env


# Runs one page's blocks in order in one namespace; line numbers in tracebacks are the page's.
# The guard keeps processes that multiprocessing spawns (Dask's workers) from running them again.
_RUNNER = r"""
import json, sys, traceback
if __name__ == "__main__":
    ns = {"__name__": "__main__"}
    for path, line, code in json.load(open(sys.argv[1])):
        try:
            exec(compile("\n" * line + code, path, "exec"), ns)
        except BaseException:
            traceback.print_exc()
            print(f"the block at {path}:{line} failed", file=sys.stderr)
            sys.exit(1)
"""


@pytest.mark.parametrize("page", PYTHON_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_python_blocks_run(page, snippet_env, tmp_path):
    blocks = [s for s in ds.snippets(page) if s.language == "python" and s.mark is None]
    spec = tmp_path / "blocks.json"
    spec.write_text(json.dumps([[str(page.relative_to(ROOT)), s.line, s.code] for s in blocks]))
    runner = tmp_path / "run_blocks.py"
    runner.write_text(_RUNNER)
    r = subprocess.run([sys.executable, str(runner), str(spec)], cwd=tmp_path, env=snippet_env,
                       capture_output=True, text=True, timeout=TIMEOUT_S)
    assert r.returncode == 0, f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}"


def _libpython():
    libdir, name = sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("LDLIBRARY")
    path = pathlib.Path(libdir or "") / (name or "")
    return path if path.is_file() else None


@pytest.mark.parametrize("snippet", CPP_BLOCKS, ids=_id)
def test_cpp_blocks_compile_and_run(snippet, snippet_env, tmp_path):
    assert ds.is_program(snippet), (
        f"{snippet.where}: a cpp block that is neither a program (int main) nor a plugin "
        "(ISTHMUS_PLUGIN) must be marked, e.g. "
        "<!-- snippet: fragment (declarations only) --> on the line before its fence")
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    libdir = BUILD / "core"
    if not any(libdir.glob("libisthmus.so*")):
        pytest.skip(f"libisthmus.so is not built in {libdir}")
    src = tmp_path / "snippet.cpp"
    src.write_text(f'#line {snippet.line + 1} "{snippet.page.relative_to(ROOT)}"\n' + snippet.code)
    exe = tmp_path / "snippet"
    cmd = [cxx, "-std=c++20", "-O0", "-pthread", *[f"-I{d}" for d in INCLUDE_DIRS], str(src),
           "-o", str(exe), f"-L{libdir}", f"-Wl,-rpath,{libdir}", "-listhmus"]
    libpython = _libpython()
    if libpython is not None:  # programs that embed Python link it, as isthmus::isthmus does
        cmd += [str(libpython), f"-Wl,-rpath,{libpython.parent}"]
    c = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert c.returncode == 0, f"{snippet.where} does not compile:\n{c.stderr}"
    r = subprocess.run([str(exe)], cwd=tmp_path, env=snippet_env, capture_output=True, text=True,
                       timeout=TIMEOUT_S)
    assert r.returncode == 0, f"{snippet.where} failed:\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"


_COMPILE_PLUGIN = r"""
import sys
import isthmus as q
q.init("cpu")
name, path = sys.argv[1], sys.argv[2]
mod = q.compile_string(name, open(path).read())
assert mod.functions + mod.kernels, mod  # it defines something
"""


@pytest.mark.parametrize("snippet", PLUGIN_BLOCKS, ids=_id)
def test_plugin_blocks_compile_and_load(snippet, snippet_env, tmp_path):
    src = tmp_path / "plugin.cpp"
    src.write_text(snippet.code)
    script = tmp_path / "compile_plugin.py"
    script.write_text(_COMPILE_PLUGIN)
    r = subprocess.run([sys.executable, str(script), ds.plugin_name(snippet), str(src)],
                       cwd=tmp_path, env=snippet_env, capture_output=True, text=True,
                       timeout=TIMEOUT_S)
    assert r.returncode == 0, f"{snippet.where} does not compile or load:\n{r.stderr}"


@pytest.mark.parametrize("snippet", MARKED, ids=_id)
def test_marked_blocks_say_why(snippet):
    assert snippet.reason, f"{snippet.where}: the mark needs a reason in parentheses"
    pytest.skip(f"{snippet.mark}: {snippet.reason}")


def test_every_page_has_its_blocks_collected():
    # The collector sees the fences the pages hold: a miscount would silently run nothing.
    for page in ds.pages():
        text = page.read_text(encoding="utf-8")
        opened = sum(1 for line in text.splitlines() if line.strip().startswith("```")) // 2
        assert len(ds.snippets(page)) == opened, page


@pytest.mark.parametrize("page", ds.pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    broken = [f"{page.relative_to(ROOT)}:{line}: {target}"
              for line, target in ds.relative_links(page)
              if target and not (page.parent / target).exists()]
    assert not broken, "links to files that do not exist:\n" + "\n".join(broken)


def test_marks_links_and_fences_are_read_and_misplaced_marks_refused(tmp_path, monkeypatch):
    page = tmp_path / "page.md"
    page.write_text("text\n\n<!-- snippet: skip (needs a CUDA GPU) -->\n```python\nx = 1\n```\n"
                    "<!-- snippet: fragment -->\n\n```cpp\nint f();\n```\n```python\ny = 2\n```\n"
                    "[a](missing.md) [b](https://example.org/x.md) [c](#anchor)\n")
    monkeypatch.setattr(ds, "ROOT", tmp_path)
    got = ds.snippets(page)
    assert [(s.language, s.mark, s.reason, s.line) for s in got] == [
        ("python", "skip", "needs a CUDA GPU", 4), ("cpp", "fragment", "", 9),
        ("python", None, "", 12)]
    assert got[2].code == "y = 2\n"
    assert ds.relative_links(page) == [(15, "missing.md")]
    bad = tmp_path / "bad.md"
    bad.write_text("```python\nx = 1\n")
    with pytest.raises(ValueError, match="unclosed"):
        ds.snippets(bad)
    bad.write_text("<!-- snippet: skip (needs a CUDA GPU) -->\ntext\n```python\nx = 1\n```\n")
    with pytest.raises(ValueError, match=r"bad.md:1: a snippet mark must come right before"):
        ds.snippets(bad)


def test_readme_indexes_every_docs_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = {target for _, target in ds.relative_links(ROOT / "README.md")}
    missing = [f"docs/{p.name}" for p in sorted((ROOT / "docs").glob("*.md"))
               if f"docs/{p.name}" not in listed]
    assert not missing, ("README.md's documentation index lacks a line for: " +
                         ", ".join(missing))
    assert "## Documentation" in readme
