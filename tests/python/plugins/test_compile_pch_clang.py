"""The precompiled author layer under Clang (Note [precompiled headers under Clang]): built by the
second cold compile as under GCC, used by later ones, and a layer that Clang refuses (an input
changed since it was built) costs a retry without it, never a failed compile."""
import pytest

from isthmus import cache as qcache
from plugin_compilers import clang_command, compile_scaled
from plugin_compilers import layer_files as layer_parts

CLANG = clang_command()
pytestmark = pytest.mark.skipif(CLANG is None, reason="no clang++ on this machine")



@pytest.fixture
def cache(plugin_cache, tmp_path, monkeypatch):
    monkeypatch.setenv("CXX", CLANG)
    monkeypatch.setenv("ISTHMUS_PLUGIN_LAYER_DIR", str(tmp_path / "no-prebuilt-layer"))
    return plugin_cache



def layer_files(cache):
    return sorted(p.name.split(".", 1)[1] for p in cache.glob("isthmus-pch-*"))


def test_built_by_the_second_cold_compile_used_by_the_next_and_a_stale_one_costs_a_retry(cache):
    compile_scaled("cl_a", 2)
    assert "gch" not in " ".join(layer_files(cache))  # the first cold compile builds nothing
    compile_scaled("cl_b", 3)
    assert {"hpp", "hpp.gch", "o", "meta"} <= set(layer_files(cache))
    (meta,) = cache.glob("isthmus-pch-*.meta")
    assert "family clang" in meta.read_text()
    (entry,) = [e for e in qcache.entries(cache) if e.name == "isthmus-pch"]
    assert entry.state == "complete" and entry.size > 1 << 20
    # Clang checks only the header's size (-fno-pch-timestamp) and then never reads its text: a
    # header of the same length that cannot compile proves the next plugin used the layer
    (hpp,) = layer_parts(cache, "hpp")
    original = hpp.read_text()
    broken = '#error "the precompiled header was not used"'
    hpp.write_text(broken + " " * (len(original) - len(broken) - 1) + "\n")
    assert len(hpp.read_text()) == len(original)
    compile_scaled("cl_c", 5)
    assert not list(cache.glob("isthmus-pch-*.failed"))

    # an input of the precompiled header changed size since: Clang stops with a fatal error, the
    # compile runs again without the layer, and the layer is marked
    hpp.write_text(original + "// changed since the layer was built\n")
    compile_scaled("cl_stale", 7)
    (failed,) = cache.glob("isthmus-pch-*.failed")
    assert "precompiled header" in failed.read_text()
    (entry,) = [e for e in qcache.entries(cache) if e.name == "isthmus-pch"]
    assert entry.state == "failed"
    # later compiles compile the layer inline: even a header that cannot compile is not read
    hpp.write_text('#error "a refused layer was used again"\n')
    compile_scaled("cl_after", 11)
    # clearing the cache removes the mark: the next cold compiles may build the layer afresh
    qcache.clear(cache)
    assert not list(cache.glob("isthmus-pch-*.failed"))
