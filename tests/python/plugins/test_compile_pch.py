"""The precompiled author layer (header and support object): built by the second cold compile,
used by later ones, listed and cleared by the cache CLI, never retried after a failure (Note
[precompiled plugin header]); plugins built with it behave as header-only ones (Note [support
object])."""
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import isthmus as q
from plugin_compilers import SCALED_SOURCE, compile_scaled, cxx_is_gcc, layer_files
from isthmus import cache as qcache

from conftest import PACKAGE_PARENT


needs_gcc = pytest.mark.skipif(not cxx_is_gcc(),
                               reason="the precompiled header is built for GCC only")


@pytest.fixture
def cache(plugin_cache, tmp_path, monkeypatch):
    # the lazy layer in the cache, without the library's prebuilt one (tested in
    # test_compile_prebuilt.py)
    monkeypatch.setenv("ISTHMUS_PLUGIN_LAYER_DIR", str(tmp_path / "no-prebuilt-layer"))
    return plugin_cache



def pch_files(cache):
    return sorted(p.name.split(".", 1)[1] for p in cache.glob("isthmus-pch-*"))


@needs_gcc
def test_second_cold_compile_builds_it_and_later_compiles_use_it(cache):
    compile_scaled("pch_a", 2)
    assert pch_files(cache) == ["lock", "seen"] or pch_files(cache) == ["seen"]  # nothing built
    compile_scaled("pch_b", 3)
    assert {"hpp", "hpp.gch", "support.cpp", "o", "meta", "seen"} <= set(pch_files(cache))
    # GCC takes the .gch and never reads the two-line header beside it: a header that cannot
    # compile proves the next plugin was built from the precompiled one, and its load that the
    # support object was linked (the precompiled header declares the support code only)
    (hpp,) = layer_files(cache, "hpp")
    hpp.write_text('#error "the precompiled header was not used"\n')
    compile_scaled("pch_c", 5)

    (entry,) = [e for e in qcache.entries(cache) if e.name == "isthmus-pch"]
    assert entry.source_kind == "pch" and entry.state == "complete" and entry.complete
    assert entry.size > 1 << 20  # the .gch: tens of MB
    removed, busy = qcache.clear(cache)
    assert busy == [] and "isthmus-pch" in {e.name for e in removed}
    assert pch_files(cache) == ["lock"]  # only the lock stays (Note [clearing under the lock])


@needs_gcc
def test_off_with_the_environment_variable(cache, monkeypatch):
    monkeypatch.setenv("ISTHMUS_PLUGIN_PCH", "0")
    compile_scaled("pch_off", 2)
    assert pch_files(cache) == []  # not even the first compile's mark


@needs_gcc
def test_a_failed_build_is_recorded_and_not_retried(cache, tmp_path, monkeypatch):
    # a compiler that fails on headers only: the plugins still build, without the header
    calls = tmp_path / "header-builds"
    cxx = tmp_path / "gxx-no-headers"
    cxx.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        for a in "$@"; do
          if [ "$a" = "c++-header" ]; then echo x >> {calls}; echo "no headers here" >&2; exit 1; fi
        done
        exec {shutil.which(os.environ.get("CXX", "g++"))} "$@"
        """))
    cxx.chmod(0o755)
    monkeypatch.setenv("CXX", str(cxx))
    compile_scaled("pch_fail_a", 2)
    compile_scaled("pch_fail_b", 3)  # tries to build it: fails, recorded
    compile_scaled("pch_fail_c", 5)  # does not try again
    assert calls.read_text().count("x") == 2  # one build: the full header and the kernel half
    (failed,) = cache.glob("isthmus-pch-*.failed")
    assert "no headers here" in failed.read_text()
    (entry,) = [e for e in qcache.entries(cache) if e.name == "isthmus-pch"]
    assert entry.state == "failed" and not entry.complete


@needs_gcc
def test_two_processes_needing_it_build_it_once(cache):
    compile_scaled("pch_seen", 2)  # the first cold compile: the next ones build the header
    code = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(PACKAGE_PARENT)!r})
        os.environ['ISTHMUS_CACHE_DIR'] = {str(cache)!r}
        import isthmus as q
        q.init("cpu")
        name = sys.argv[1]
        src = {SCALED_SOURCE!r}.format(name=name, k=7)
        print(getattr(q.compile_string(name, src), name + "_f")(1.0))
    """)
    procs = [subprocess.Popen([sys.executable, "-c", code, f"pch_proc{i}"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        assert out.strip() == "7.0"
    assert len(layer_files(cache, "hpp.gch")) == 1
    assert not list(cache.glob("*.tmp.*"))


KERNEL = """
namespace ip = isthmus::plugin;
ISTHMUS_PLUGIN({name}, m) {{
    m.kernel("{name}_k", [](ip::view<const float, 1> x, ip::view<float, 1, ip::access::checked> y,
                            int64_t i) {{ y(i + 1) = 2 * x(i); }},
             {{"x", "y"}});
    m.def("{name}_bad", [](int64_t n) {{
        if (n < 0) throw ip::value_error(ip::detail::cat("n must be >= 0, got ", n));
        return n;
    }}, {{"n"}});
}}
"""


def failures(name):
    """What a plugin's support code says: an out-of-bounds 'checked write, a thrown error."""
    mod = q.compile_string(name, KERNEL.format(name=name))
    x, y = q.value([1.0, 2.0, 3.0], dtype="float32"), q.zeros(3, dtype="float32")
    with pytest.raises(IndexError) as index_error:
        q.parallel_do(3, x, y, getattr(mod, f"{name}_k"))
    with pytest.raises(ValueError) as value_error:
        getattr(mod, f"{name}_bad")(-4)
    assert getattr(mod, f"{name}_bad")(4) == 4
    return [str(index_error.value).replace(name, "NAME"), str(value_error.value).replace(name, "NAME")]


@needs_gcc
def test_plugins_with_the_support_object_say_what_header_only_ones_say(cache, monkeypatch):
    monkeypatch.setenv("ISTHMUS_PLUGIN_PCH", "0")
    header_only = failures("sup_inline")
    assert "index 3 is out of bounds for dimension 0 with size 3" in header_only[0]
    assert "argument 2 (y)" in header_only[0] and "n must be >= 0, got -4" in header_only[1]
    monkeypatch.delenv("ISTHMUS_PLUGIN_PCH")
    compile_scaled("sup_seen", 2)  # the first cold compile; the next builds the layer
    assert failures("sup_separate") == header_only
    assert (cache / next(cache.glob("isthmus-pch-*.o")).name).is_file()


@needs_gcc
def test_a_truncated_support_object_is_rebuilt(cache):
    compile_scaled("sup_a", 2)
    compile_scaled("sup_b", 3)  # builds the layer
    (obj,) = cache.glob("isthmus-pch-*.o")
    good = obj.read_bytes()
    obj.write_bytes(good[: len(good) // 2])
    (entry,) = [e for e in qcache.entries(cache) if e.name == "isthmus-pch"]
    assert entry.state == "corrupt" and not entry.complete
    compile_scaled("sup_c", 5)  # the .meta no longer matches: built again, then used
    assert obj.read_bytes() != good[: len(good) // 2] and obj.stat().st_size == len(good)
    (entry,) = [e for e in qcache.entries(cache) if e.name == "isthmus-pch"]
    assert entry.state == "complete"
