"""The prebuilt author layer (Note [prebuilt plugin layer]): built with the library, used by the
first compile_string whose key matches it, passed over (the lazy layer in the cache instead) when
the compiler or flags differ or when it fails the cache's trust checks."""
import os
import shutil
import stat
import subprocess

import numpy as np
import pytest

import isthmus as q

from conftest import BUILD_DIR
from plugin_compilers import layer_files

SOURCE = """
namespace ip = isthmus::plugin;
ISTHMUS_PLUGIN({name}, m) {{
    m.kernel("{name}_k", [](ip::view<const float, 1> x, ip::view<float, 1> y, float a,
                            int64_t i) {{ y(i) = a * x(i) + {k}.0f; }}, {{"x", "y", "a"}});
    m.def("{name}_bad", [](int64_t n) {{
        if (n < 0) throw ip::value_error(ip::detail::cat("n must be >= 0, got ", n));
        return n;
    }}, {{"n"}});
}}
"""

TOOL = BUILD_DIR / "plugins" / "isthmus_plugin_layer"
PREBUILT = [pth for pth in (BUILD_DIR / "plugins" / "isthmus-plugin-layer",
                            BUILD_DIR / "python" / "isthmus" / "isthmus-plugin-layer")
            if list(pth.glob("isthmus-pch-*.hpp.gch"))]

needs_layer = pytest.mark.skipif(
    "clang" in os.environ.get("CXX", "") or os.environ.get("CXX", "g++") != "g++"
    or os.environ.get("ISTHMUS_PLUGIN_PCH") == "0" or shutil.which("g++") is None
    or not TOOL.exists(),
    reason="the layer is prebuilt for g++ (CXX unset or g++) by the build tree's step")


@pytest.fixture
def cache(plugin_cache, monkeypatch):
    monkeypatch.delenv("CXX", raising=False)
    return plugin_cache


@pytest.fixture(scope="module")
def built_layer(worker_dir):  # Note [module fixtures under worksteal] (conftest.py)
    """A prebuilt layer, built once by the build-time step into a folder of its own."""
    d = worker_dir("prebuilt_layer") / "layer"
    r = subprocess.run([str(TOOL), str(d)], capture_output=True, text=True, timeout=600,
                       env={k: v for k, v in os.environ.items() if k != "CXX"})
    assert r.returncode == 0, r.stderr
    assert str(d) in r.stdout, r.stdout
    return d


@pytest.fixture
def layer(built_layer, tmp_path, monkeypatch):
    """A copy of the prebuilt layer, which compiles then search alone
    ($ISTHMUS_PLUGIN_LAYER_DIR)."""
    d = tmp_path / "layer"
    shutil.copytree(built_layer, d)
    d.chmod(0o755)
    monkeypatch.setenv("ISTHMUS_PLUGIN_LAYER_DIR", str(d))
    return d


def run(name, k, flags=()):
    mod = q.compile_string(name, SOURCE.format(name=name, k=k), flags=list(flags))
    x = np.random.default_rng(k).random(37, dtype=np.float32)
    y = q.zeros(37, dtype="float32")
    q.parallel_do(37, x[::1], y, 2.0, getattr(mod, f"{name}_k"))
    np.testing.assert_array_equal(np.asarray(y), np.float32(2.0) * x + np.float32(k))
    with pytest.raises(ValueError, match="n must be >= 0, got -3"):
        getattr(mod, f"{name}_bad")(-3)
    return mod


def cache_layer_files(cache):
    return sorted(p.name.split(".", 1)[1] for p in cache.glob("isthmus-pch-*"))


@needs_layer
def test_the_build_step_leaves_only_what_a_compile_reads(layer):
    names = sorted(p.name for p in layer.iterdir())
    (stem,) = {n.split(".", 1)[0] for n in names}
    assert names == [f"{stem}.hpp", f"{stem}.hpp.gch", f"{stem}.lean.hpp", f"{stem}.lean.hpp.gch",
                     f"{stem}.meta", f"{stem}.o"]
    assert (layer / f"{stem}.hpp.gch").stat().st_size > 1 << 20
    # the build tree's own layer (what the library finds when nothing is set) has that key too
    assert PREBUILT and any((p / f"{stem}.hpp.gch").is_file() for p in PREBUILT)
    # run again: the layer is complete, kept as it is
    before = {n: (layer / n).stat().st_mtime_ns for n in names}
    assert subprocess.run([str(TOOL), str(layer)], capture_output=True,
                          env={k: v for k, v in os.environ.items() if k != "CXX"}).returncode == 0
    assert {n: (layer / n).stat().st_mtime_ns for n in sorted(os.listdir(layer))} == before


@needs_layer
def test_the_first_compile_uses_the_prebuilt_layer(cache, layer):
    # GCC takes the .gch and never reads the two-line header beside it: a header that cannot
    # compile proves the plugin was built from the precompiled one, and its run (the support
    # code's messages) that the prebuilt object was linked
    (hpp,) = layer_files(layer, "hpp")
    mode = hpp.stat().st_mode
    hpp.chmod(0o644)
    hpp.write_text('#error "the precompiled header was not used"\n')
    hpp.chmod(stat.S_IMODE(mode))
    run("pre_first", 2)
    assert cache_layer_files(cache) == []  # nothing built, not even the lazy build's mark
    run("pre_second", 3)
    assert cache_layer_files(cache) == []


@needs_layer
def test_the_build_tree_layer_is_found_without_settings(cache, monkeypatch):
    monkeypatch.delenv("ISTHMUS_PLUGIN_LAYER_DIR", raising=False)
    run("pre_default", 4)
    assert cache_layer_files(cache) == []


@needs_layer
def test_other_flags_get_the_lazy_layer_in_the_cache(cache, layer):
    run("pre_flags_a", 2, ["-DPRE_FLAG=1"])
    assert cache_layer_files(cache) in (["seen"], ["lock", "seen"])  # another key: the lazy mark
    run("pre_flags_b", 3, ["-DPRE_FLAG=1"])  # the second cold compile builds it in the cache
    assert {"hpp", "hpp.gch", "o", "meta"} <= set(cache_layer_files(cache))
    run("pre_flags_c", 5)  # no extra flags: the prebuilt one still (nothing new in the cache)
    assert len(layer_files(cache, "hpp.gch")) == 1


@needs_layer
def test_another_compiler_identity_gets_the_lazy_layer(cache, layer, tmp_path, monkeypatch):
    # the same g++ under another path is another compiler for the key
    gxx = tmp_path / "bin" / "g++"
    gxx.parent.mkdir()
    gxx.write_text(f'#!/bin/sh\nexec {shutil.which("g++")} "$@"\n')
    gxx.chmod(0o755)
    monkeypatch.setenv("CXX", str(gxx))
    run("pre_cxx", 2)
    assert cache_layer_files(cache) in (["seen"], ["lock", "seen"])


def tamper_gch_mode(layer, gch, hpp, obj, meta):
    gch.chmod(0o664)


def tamper_truncated_object(layer, gch, hpp, obj, meta):
    data = obj.read_bytes()
    obj.write_bytes(data[: len(data) // 2])


def tamper_symlinked_header(layer, gch, hpp, obj, meta):
    real = layer.parent / "elsewhere.hpp"
    hpp.rename(real)
    hpp.symlink_to(real)


def tamper_hard_linked_object(layer, gch, hpp, obj, meta):
    os.link(obj, layer.parent / "second-name.o")


def tamper_meta_missing(layer, gch, hpp, obj, meta):
    meta.unlink()


def tamper_folder_writable_by_others(layer, gch, hpp, obj, meta):
    layer.chmod(0o777)


@needs_layer
@pytest.mark.parametrize("tamper", [tamper_gch_mode, tamper_truncated_object,
                                    tamper_symlinked_header, tamper_hard_linked_object,
                                    tamper_meta_missing, tamper_folder_writable_by_others])
def test_a_layer_failing_the_trust_checks_is_passed_over(cache, layer, tamper, monkeypatch):
    (gch,) = layer_files(layer, "hpp.gch")
    stem = gch.name[: -len(".hpp.gch")]
    files = [layer / f"{stem}{s}" for s in (".hpp.gch", ".hpp", ".o", ".meta")]
    tamper(layer, *files)
    before = {p.name: p.read_bytes() for p in layer.iterdir() if p.is_file()}
    name = f"pre_{tamper.__name__}"
    run(name, 6)
    # not used: the compile took the lazy path (its first mark, under the same stem) ...
    assert (cache / f"{stem}.seen").exists()
    # ... and never wrote the prebuilt folder
    assert {p.name: p.read_bytes() for p in layer.iterdir() if p.is_file()} == before
    layer.chmod(0o755)


@needs_layer
def test_a_failed_compile_still_names_the_users_line(cache, layer):
    src = "ISTHMUS_PLUGIN(pre_broken, m) {\n    (void)m;\n    int x = undeclared_name;\n}\n"
    with pytest.raises(q.CompileError) as e:
        q.compile_string("pre_broken", src)
    assert "pre_broken.cpp:3:" in e.value.diagnostics
    assert "undeclared_name" in e.value.diagnostics
    assert not list(cache.glob("pre_broken-*.so"))
