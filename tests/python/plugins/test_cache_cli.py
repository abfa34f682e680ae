"""python -m isthmus.cache: path, list, size and clear over a real compile cache, and its errors."""
import fcntl
import io
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

import pytest

import isthmus as q
from isthmus import cache as qc
from isthmus._cache_files import _fnv1a_hex

SOURCE = """
namespace ip = isthmus::plugin;
ISTHMUS_PLUGIN(cli_probe, m) {
    m.kernel("cli_probe_twice", [](ip::view<const float, 1> x, ip::view<float, 1> y, int64_t i) {
        y(i) = 2 * x(i);
    }, {"x", "y"});
}
"""


@pytest.fixture(scope="module")
def compiled(worker_cache):
    """A cache holding one compiled entry (one compile for the whole module: they are slow)."""
    with worker_cache("cache_cli") as d:
        q.compile_string("cli_probe", SOURCE, ["-O0"])
    (so,) = d.glob("cli_probe-*.so")
    return d, so.name[:-len(".so")]


def populate(d, base, stem, keys):
    """Copies the compiled entry `stem` of `base` into `d` under each key (a copy is a valid
    entry: the .meta checks the .so, not the name); returns the new stems."""
    stems = []
    for k in keys:
        new = f"cli_probe-{k}"
        for f in base.glob(stem + ".*"):
            shutil.copy2(f, d / (new + f.name[len(stem):]))
        stems.append(new)
    return stems


@pytest.fixture
def entries3(compiled, tmp_path, monkeypatch):
    """A cache directory with three valid entries and an unrelated file; ISTHMUS_CACHE_DIR
    points at it. Returns (dir, stems)."""
    base, stem = compiled
    d = tmp_path / "cache"
    d.mkdir()
    stems = populate(d, base, stem, ["00000000000000aa", "00000000000000bb", stem[-16:]])
    (d / "notes.txt").write_text("not a cache file")
    monkeypatch.setenv("ISTHMUS_CACHE_DIR", str(d))
    return d, stems


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    rc = qc.main(list(argv), stdout=out, stderr=err)
    return rc, out.getvalue(), err.getvalue()


def entry_bytes(d, stem):
    return sum(p.stat().st_size for p in d.glob(stem + ".*") if not p.name.endswith(".lock"))


def test_path_matches_the_native_resolution(monkeypatch, tmp_path):
    monkeypatch.setenv("ISTHMUS_CACHE_DIR", str(tmp_path / "a"))
    assert run("path") == (0, f"{tmp_path / 'a'}\n", "")
    assert str(qc.cache_dir()) == q.plugin_cache_dir()
    monkeypatch.delenv("ISTHMUS_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert str(qc.cache_dir()) == q.plugin_cache_dir() == str(tmp_path / "x" / "isthmus")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert str(qc.cache_dir()) == q.plugin_cache_dir() == str(tmp_path / "h" / ".cache" / "isthmus")
    monkeypatch.delenv("HOME")
    rc, out, err = run("path")
    assert rc == 2 and "set ISTHMUS_CACHE_DIR or HOME" in err and out == ""


def test_list_json_describes_each_entry(entries3):
    d, stems = entries3
    rc, out, err = run("list", "--json")
    assert rc == 0 and err == ""
    got = json.loads(out)
    assert [e["stem"] for e in got] == sorted(stems)
    now = time.time()
    for e in got:
        assert e["name"] == "cli_probe" and len(e["key"]) == 16
        assert e["size"] == entry_bytes(d, e["stem"])
        # the .meta names the compiler that built the entry (the first word of $CXX, else g++)
        assert e["source_kind"] == "c++"
        assert e["compiler"] == q.plugin_compiler().split()[0]
        assert e["complete"] and e["state"] == "complete" and not e["busy"]
        assert 0 <= e["age_seconds"] <= now - e["mtime"] + 1
        assert set(e["files"]) == {p.name for p in d.glob(e["stem"] + ".*")}
    rc, text, _ = run("list")
    assert rc == 0 and text.splitlines()[0].split() == ["ENTRY", "SIZE", "AGE", "SOURCE",
                                                        "COMPILER", "STATE"]
    assert all(any(line.startswith(s) and "complete" in line for line in text.splitlines())
               for s in stems)


def test_list_reports_partial_and_corrupt_entries(entries3):
    d, (a, b, c) = entries3
    (d / f"{a}.meta").unlink()  # a build that stopped before its .meta
    so = d / f"{b}.so"
    with open(so, "r+b") as fh:  # a truncated .so: the size no longer matches
        fh.truncate(so.stat().st_size // 2)
    so_c = d / f"{c}.so"
    data = bytearray(so_c.read_bytes())  # same size, other bytes: only the hash can tell
    data[len(data) // 2] ^= 0xFF
    so_c.write_bytes(bytes(data))
    states = {e.stem: e.state for e in qc.entries()}
    assert states == {a: "partial", b: "corrupt", c: "complete"}
    states = {e.stem: e.state for e in qc.entries(verify=True)}
    assert states == {a: "partial", b: "corrupt", c: "corrupt"}
    rc, out, _ = run("list", "--verify", "--json")
    assert rc == 0 and {e["stem"]: e["complete"] for e in json.loads(out)} == {
        a: False, b: False, c: False}


def test_verify_accepts_the_hash_the_compiler_wrote(entries3):
    d, stems = entries3
    assert all(e.complete for e in qc.entries(verify=True))
    for s in stems:
        meta = (d / f"{s}.meta").read_text().split()
        assert meta[meta.index("hash") + 1] == _fnv1a_hex(d / f"{s}.so")


def test_size_totals_entries_only(entries3):
    d, stems = entries3
    rc, out, err = run("size", "--json")
    assert rc == 0 and err == ""
    assert json.loads(out) == {"bytes": sum(entry_bytes(d, s) for s in stems), "entries": 3}
    rc, out, _ = run("size")
    assert rc == 0 and out.startswith(f"{sum(entry_bytes(d, s) for s in stems)} bytes")


def test_clear_one_key_keeps_the_rest(entries3):
    d, (a, b, c) = entries3
    rc, out, err = run("clear", a[-16:].upper())
    assert (rc, err) == (0, "") and out.startswith("removed 1 entries")
    assert [p.name for p in d.glob(a + ".*")] == [f"{a}.lock"]  # Note [clearing under the lock]
    rc, _, _ = run("clear", b)  # the NAME-KEY form
    assert rc == 0 and [e.stem for e in qc.entries()] == [c]
    assert (d / "notes.txt").read_text() == "not a cache file"


def test_clear_older_than(entries3):
    d, (a, b, c) = entries3
    old = time.time() - 10 * 86400
    for p in d.glob(a + ".*"):
        os.utime(p, (old, old))
    assert run("clear", "--older-than", "11")[0] == 0
    assert len(qc.entries()) == 3
    rc, out, _ = run("clear", "--older-than", "9.5")
    assert rc == 0 and out.startswith("removed 1 entries")
    assert sorted(e.stem for e in qc.entries()) == sorted([b, c])


def test_clear_all_leaves_locks_and_foreign_files(entries3):
    d, stems = entries3
    rc, out, _ = run("clear")
    assert rc == 0 and out.startswith("removed 3 entries")
    assert sorted(p.name for p in d.iterdir()) == sorted([f"{s}.lock" for s in stems] +
                                                          ["notes.txt"])
    assert qc.entries() == [] and run("size", "--json")[1].strip() == '{"bytes": 0, "entries": 0}'


def test_clear_skips_an_entry_whose_lock_a_build_holds(entries3):
    d, (a, b, c) = entries3
    fd = os.open(d / f"{b}.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as compiler.cpp's file_lock does during a build
        assert {e.stem: e.busy for e in qc.entries()} == {a: False, b: True, c: False}
        rc, out, err = run("clear")
        assert rc == 1 and out.startswith("removed 2 entries")
        assert b in err and "holds its lock" in err
        assert [e.stem for e in qc.entries()] == [b]
        assert entry_bytes(d, b) > 0 and (d / f"{b}.so").is_file()
    finally:
        os.close(fd)
    assert run("clear", b)[0] == 0 and qc.entries() == []


def test_wait_returns_once_no_detached_build_holds_the_finishing_lock(entries3):
    d, stems = entries3
    before = sorted(p.name for p in d.iterdir())
    assert run("wait") == (0, "", "")  # no finisher ever ran: no lock file, nothing created
    assert sorted(p.name for p in d.iterdir()) == before
    # A detached build holds a shared lock (See Note [finishing lock]); hold one as it does.
    from isthmus._finish_builds import _hold_finishing_locks
    fds = _hold_finishing_locks([str(d), str(d)])
    try:
        assert len(fds) == 1
        t = time.monotonic()
        rc, out, err = run("wait", "--timeout", "0.3")
        assert rc == 1 and out == "" and "a detached build still runs after 0.3 s" in err
        assert time.monotonic() - t >= 0.3
        assert qc.wait_for_finishers(d, timeout=0) is False
        assert [e.stem for e in qc.entries()] == sorted(stems)  # the lock is no entry
    finally:
        for fd in fds:
            os.close(fd)
    assert run("wait", "--timeout", "5") == (0, "", "")
    assert qc.wait_for_finishers(d) is True


@pytest.mark.parametrize("argv, message", [
    (["wait", "--timeout", "-1"], "seconds >= 0"),
    (["wait", "--timeout", "nan"], "seconds >= 0"),
    (["wait", "--timeout", "x"], "invalid float value"),
    (["clear", "zz"], "not a cache key: 'zz'"),
    (["clear", "0123456789abcdeg"], "not a cache key"),
    (["clear", "0123456789abcdef"], "no cache entry with key '0123456789abcdef'"),
    (["clear", "other-0123456789abcdef"], "no cache entry"),
    (["clear", "--older-than", "-1"], "finite number of days >= 0"),
    (["clear", "--older-than", "nan"], "finite number of days >= 0"),
    (["clear", "--older-than", "inf"], "finite number of days >= 0"),
    (["clear", "--older-than", "x"], "invalid float value"),
    (["clear", "--older-than", "1", "0123456789abcdef"], "not both"),
    (["bogus"], "invalid choice"),
    ([], "required"),
    (["list", "--nope"], "unrecognized arguments"),
])
def test_bad_arguments_are_errors_with_exit_code_2(entries3, argv, message):
    d, stems = entries3
    before = sorted((p.name, p.stat().st_size) for p in d.iterdir())
    rc, out, err = run(*argv)
    assert rc == 2 and out == "" and message in err and err.startswith("isthmus.cache: error:")
    assert sorted((p.name, p.stat().st_size) for p in d.iterdir()) == before


def test_typed_errors_from_the_api(entries3, tmp_path):
    with pytest.raises(qc.CacheKeyError, match="not a cache key"):
        qc.clear(key="nothex")
    with pytest.raises(qc.CacheUsageError):
        qc.clear(older_than_days=-2)
    with pytest.raises(qc.CacheMissingError, match="no plugin cache at"):
        qc.entries(tmp_path / "missing")
    (tmp_path / "file").write_text("")
    with pytest.raises(qc.CacheError, match="not a directory"):
        qc.entries(tmp_path / "file")
    assert len(qc.entries()) == 3


@pytest.mark.parametrize("command", ["list", "size", "clear", "wait"])
def test_a_missing_cache_is_an_error(command, tmp_path, monkeypatch):
    monkeypatch.setenv("ISTHMUS_CACHE_DIR", str(tmp_path / "none"))
    rc, out, err = run(command)
    assert rc == 2 and out == "" and "no plugin cache at" in err
    assert not (tmp_path / "none").exists()


def test_python_dash_m(entries3):
    d, stems = entries3
    env = dict(os.environ, PYTHONPATH=str(pathlib.Path(q.__file__).parent.parent))
    r = subprocess.run([sys.executable, "-m", "isthmus.cache", "--dir", str(d), "list", "--json"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert sorted(e["stem"] for e in json.loads(r.stdout)) == sorted(stems)
    r = subprocess.run([sys.executable, "-m", "isthmus.cache", "clear", "nope"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 2 and "not a cache key" in r.stderr
