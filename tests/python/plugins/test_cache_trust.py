"""The compile cache in a shared, hostile directory (Note [cache trust model] in
plugins/src/compile_cache.cpp): symlinks planted at every name a build writes are never written
through; a .so that is a symlink, a hard link, another user's file or writable by others is
rebuilt, never loaded, even with a .meta that matches it; a directory writable by others without
the sticky bit is refused; `python -m isthmus.cache list` says why it refuses an entry.

Every compile runs in a fresh process (a plugin's names can be imported once per process), and
the compiles are few: a primed cache holds our plugin and a "foreign" one of the same name whose
function returns another value, so the result tells which library ran."""
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap

import pytest

from isthmus import cache as qc

from conftest import PACKAGE_PARENT
from plugin_compilers import cxx_is_gcc

NAME = "trust_probe"
SOURCE = ('ISTHMUS_PLUGIN(trust_probe, m) {{\n'
          '    m.def("trust_f", [](double x) {{ return x * {k}; }}, {{"x"}});\n}}\n')
OURS, FOREIGN = 3, 100  # trust_f(2.0): 6.0 from our library, 200.0 from the foreign one

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
needs_gcc = pytest.mark.skipif(not cxx_is_gcc(),
                               reason="the precompiled header is built for GCC only")


def compile_in_fresh_process(cache, k=OURS, prelude="", pch=True):
    """Runs `prelude`, then compile_string of SOURCE with factor k into `cache`, in a new
    interpreter; returns the CompletedProcess (stdout ends with the library's path and
    trust_f(2.0))."""
    code = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(PACKAGE_PARENT)!r})
        os.environ["ISTHMUS_CACHE_DIR"] = {str(cache)!r}
    """) + textwrap.dedent(prelude) + textwrap.dedent(f"""
        import isthmus as q
        q.init("cpu")
        mod = q.compile_string({NAME!r}, {SOURCE.format(k=k)!r})
        print(mod.__file__)
        print(mod.trust_f(2.0))
    """)
    env = {k: v for k, v in os.environ.items() if k != "ISTHMUS_PLUGIN_PCH"}
    env["ISTHMUS_PLUGIN_LAYER_DIR"] = str(cache / "no-prebuilt-layer")  # the lazy layer's names
    if not pch:
        env["ISTHMUS_PLUGIN_PCH"] = "0"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=300)


def value_of(r):
    assert r.returncode == 0, r.stderr
    return float(r.stdout.strip().splitlines()[-1])


def stem_of(r):
    assert r.returncode == 0, r.stderr
    return os.path.basename(r.stdout.strip().splitlines()[-2])[:-len(".so")]


@pytest.fixture(scope="module")
def primed(worker_dir):  # Note [module fixtures under worksteal] (conftest.py)
    """A cache holding the foreign plugin and ours (same name, other keys) and the precompiled
    layer's first mark (`.seen`, whose stem the planted-names test needs). Returns (dir, stem
    of ours, stem of the foreign one, stem of the precompiled layer)."""
    d = worker_dir("trust_primed")
    r = compile_in_fresh_process(d, FOREIGN)
    assert value_of(r) == 2.0 * FOREIGN
    foreign = stem_of(r)
    r = compile_in_fresh_process(d, OURS, pch=False)
    assert value_of(r) == 2.0 * OURS
    ours = stem_of(r)
    assert ours != foreign and ours.startswith(NAME + "-")
    # (a compiler other than g++, as under the sanitizer gate, builds no precompiled layer)
    seen = next(iter(d.glob("isthmus-pch-*.seen")), None)
    return d, ours, foreign, seen.name[:-len(".seen")] if seen else None


def fresh_cache(tmp_path, name="cache"):
    d = tmp_path / name
    d.mkdir(mode=0o755)
    return d


def copy_entry(primed_dir, stem, d):
    """A valid copy of the primed cache's entry `stem` in `d` (a copy is valid: the .meta checks the
    .so, not the directory)."""
    for suffix in (".so", ".meta", ".cpp"):
        shutil.copyfile(primed_dir / (stem + suffix), d / (stem + suffix))


def listing(d, *flags):
    """`python -m isthmus.cache --dir d list --json ...` as {stem: entry}, and the text table."""
    out, err = io.StringIO(), io.StringIO()
    assert qc.main(["--dir", str(d), "list", "--json", *flags], stdout=out, stderr=err) == 0
    entries = {e["stem"]: e for e in json.loads(out.getvalue())}
    text = io.StringIO()
    assert qc.main(["--dir", str(d), "list", *flags], stdout=text, stderr=err) == 0
    return entries, text.getvalue()


def snapshot(victims):
    return {p.name: p.read_bytes() for p in sorted(victims.iterdir())}


@needs_gcc
def test_symlinks_planted_at_every_name_a_build_writes_are_not_written_through(primed, tmp_path):
    primed_dir, ours, _, pch = primed
    if pch is None:
        pytest.skip("this compiler builds no precompiled layer")
    d, victims = fresh_cache(tmp_path), tmp_path / "victims"
    victims.mkdir()
    # the precompiled layer's mark: this cold compile builds the layer too, so its names count
    (d / f"{pch}.seen").write_bytes(b"")
    # the final names (a dangling one for the lock: opening it with O_CREAT would create the
    # file it names), and the temporary names of earlier versions, predictable from the pid of
    # the compiling process (planted by that process itself, just before it compiles)
    final = [f"{ours}{s}" for s in (".cpp", ".so", ".meta")] + [
        f"{pch}{s}" for s in (".hpp", ".lean.hpp", ".support.cpp", ".hpp.gch", ".lean.hpp.gch",
                              ".o", ".meta", ".lock", ".failed")]
    for n in final:
        (victims / f"{n}.txt").write_text(f"victim of {n}\n")
        os.symlink(victims / f"{n}.txt", d / n)
    os.symlink(victims / "created_through_the_lock", d / f"{ours}.lock")
    old_tmp = [f"{ours}{s}" for s in (".cpp.tmp.", ".so.tmp.", ".meta.tmp.", ".log.")] + [
        f"{pch}{s}" for s in (".hpp.tmp.", ".lean.hpp.tmp.", ".support.cpp.tmp.", ".hpp.gch.tmp.",
                              ".lean.hpp.gch.tmp.", ".o.tmp.", ".meta.tmp.", ".seen.tmp.",
                              ".failed.tmp.", ".log.", ".o.log.", ".lean.log.")
    ] + ["isthmus-pch-version.log."]
    for n in old_tmp:
        (victims / f"{n}pid.txt").write_text(f"victim of {n}<pid>\n")
    before = snapshot(victims)
    prelude = f"""
        for n in {old_tmp!r}:
            os.symlink(os.path.join({str(victims)!r}, n + "pid.txt"),
                       os.path.join({str(d)!r}, n + str(os.getpid())))
    """
    assert value_of(compile_in_fresh_process(d, OURS, prelude)) == 2.0 * OURS
    assert snapshot(victims) == before  # byte for byte, and nothing created there
    for n in final[:-1] + [f"{ours}.lock"]:  # replaced by the cache's own files (not .failed)
        st = os.lstat(d / n)
        assert stat.S_ISREG(st.st_mode) and not st.st_mode & 0o022, n
    assert stat.S_IMODE(os.lstat(d / f"{ours}.lock").st_mode) == 0o600
    assert (d / f"{pch}.failed").is_symlink()  # a planted mark is ignored, never written
    leftovers = [p.name for p in d.iterdir() if ".tmp." in p.name or ".log." in p.name]
    assert all((d / n).is_symlink() for n in leftovers), leftovers  # only the planted ones
    entries, _ = listing(d, "--verify")
    assert entries[ours]["state"] == "complete" and entries[pch]["state"] == "complete"


def plant_foreign_so(primed, d, how):
    """Puts the primed cache's foreign library at our entry's .so in `d` in the way `how`, with a
    .meta that matches it (a copy of the foreign entry's)."""
    primed_dir, ours, foreign, _ = primed
    so, target = d / f"{ours}.so", primed_dir / f"{foreign}.so"
    if how == "symlink":
        os.symlink(target, so)
    elif how == "hard link":
        os.link(target, so)
    else:
        shutil.copyfile(target, so)
        if how == "writable":
            os.chmod(so, 0o757)
        elif how == "foreign owner":
            os.chown(so, 65534, 65534)
    shutil.copyfile(primed_dir / f"{foreign}.meta", d / f"{ours}.meta")
    return so, target


REFUSALS = [
    ("symlink", ".so is a symlink"),
    ("hard link", ".so has 2 hard links"),
    ("writable", ".so is writable by group or others"),
    pytest.param("foreign owner", ".so has a foreign owner (uid 65534)", marks=needs_root),
]


@pytest.mark.parametrize("how, reason", REFUSALS)
def test_a_foreign_so_with_a_matching_meta_is_rebuilt_not_loaded(primed, tmp_path, how, reason):
    primed_dir, ours, foreign, _ = primed
    d = fresh_cache(tmp_path)
    so, target = plant_foreign_so(primed, d, how)
    foreign_bytes = target.read_bytes()
    entries, text = listing(d, "--verify")
    assert entries[ours]["state"] == "refused" and not entries[ours]["complete"]
    assert entries[ours]["reason"] == reason
    assert f"refused: {reason}" in text
    assert value_of(compile_in_fresh_process(d, OURS, pch=False)) == 2.0 * OURS  # not 200
    st = os.lstat(so)
    assert stat.S_ISREG(st.st_mode) and st.st_nlink == 1 and not st.st_mode & 0o022
    assert st.st_uid == os.geteuid()
    assert target.read_bytes() == foreign_bytes  # rebuilt beside it, renamed over the name
    entries, _ = listing(d, "--verify")
    assert entries[ours]["state"] == "complete" and entries[ours]["reason"] is None


@pytest.mark.parametrize("plant, reason", [
    ("meta symlink", ".meta is a symlink"),
    ("so fifo", ".so is not a regular file"),
    ("meta writable", ".meta is writable by group or others"),
    pytest.param("meta foreign owner", ".meta has a foreign owner (uid 65534)",
                 marks=needs_root),
])
def test_list_names_why_it_refuses_an_entry(primed, tmp_path, plant, reason):
    primed_dir, ours, _, _ = primed
    d = fresh_cache(tmp_path)
    copy_entry(primed_dir, ours, d)
    so, meta = d / f"{ours}.so", d / f"{ours}.meta"
    if plant == "meta symlink":
        meta.unlink()
        os.symlink(primed_dir / f"{ours}.meta", meta)
    elif plant == "so fifo":
        so.unlink()
        os.mkfifo(so)
    elif plant == "meta writable":
        os.chmod(meta, 0o646)
    else:
        os.chown(meta, 65534, 65534)
    for flags in ((), ("--verify",)):  # never blocks on the FIFO, never follows the symlink
        entries, text = listing(d, *flags)
        assert entries[ours]["state"] == "refused" and entries[ours]["reason"] == reason
        assert not entries[ours]["complete"] and f"refused: {reason}" in text


def test_a_directory_writable_by_others_needs_the_sticky_bit(primed, tmp_path):
    primed_dir, ours, _, _ = primed
    d = fresh_cache(tmp_path)
    copy_entry(primed_dir, ours, d)
    os.chmod(d, 0o777)
    before = sorted(p.name for p in d.iterdir())
    entries, _ = listing(d, "--verify")
    assert entries[ours]["state"] == "refused"
    assert entries[ours]["reason"] == ("the cache directory is writable by group or others "
                                       "without the sticky bit")
    # refused before anything is loaded or written; with the sticky bit the entry loads
    prelude = f"""
        import isthmus as q
        q.init("cpu")
        try:
            q.compile_string({NAME!r}, {SOURCE.format(k=OURS)!r})
        except RuntimeError as e:
            print("refused:", e)
        os.chmod({str(d)!r}, 0o1777)
    """
    r = compile_in_fresh_process(d, OURS, prelude, pch=False)
    assert value_of(r) == 2.0 * OURS
    assert "refused: compile_string: refusing the cache directory" in r.stdout
    assert "writable by group or others without the sticky bit" in r.stdout
    assert sorted(p.name for p in d.iterdir() if p.suffix != ".lock") == before
    entries, _ = listing(d, "--verify")
    assert entries[ours]["state"] == "complete"
