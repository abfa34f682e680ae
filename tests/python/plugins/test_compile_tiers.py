"""Compile tiers (Note [compile tiers] in plugins/src/compile_tiers.cpp): a kernel-only C++ source
comes back from compile_string as a quick -O1 build, its -O3 build replaces it in the background,
and both compute the same values bit for bit. The rest of the suite compiles with tiers off
(conftest.py); these tests turn them on."""
import re
import textwrap

import numpy as np
import pytest

import isthmus as q
from isthmus import cache as qc

# Kernels whose arithmetic an optimiser likes to change: multiply-adds (an fma would round once),
# a running sum, a clamped stencil, strided and empty views, a 1-d and a 2-d position.
KERNELS = """
namespace ip = isthmus::plugin;
ISTHMUS_PLUGIN(NAME, m) {
    m.kernel("NAME_fma", [](ip::view<const float, 2> x, ip::view<const float, 2> w,
                            ip::view<float, 2> y, float a, ip::ivec2 p) {
        float s = 0.0f;
        for (int64_t j = 0; j < x.size(1); ++j) s += x(p[0], j) * w(j, p[1]) + a * x(p[0], j);
        y(p[0], p[1]) = s * a + x(p[0], 0) * w(0, p[1]);
    }, {"x", "w", "y", "a"});
    m.kernel("NAME_axpb", [](ip::view<const double, 1> x, ip::view<double, 1> y, double a,
                             double b, int64_t i) { y(i) = a * x(i) + b; }, {"x", "y", "a", "b"})
        .at_position({"x", "y"});
    m.kernel("NAME_blur", [](ip::view<const float, 2, ip::access::clamped> x,
                             ip::view<float, 2> y, ip::ivec2 p) {
        float s = 0.0f;
        for (int di = -1; di <= 1; ++di)
            for (int dj = -1; dj <= 1; ++dj) s += 0.3f * x(p[0] + di, p[1] + dj) + 0.1f;
        y(p[0], p[1]) = s / 9.0f + std::sqrt(std::abs(x(p[0], p[1])));
    }, {"x", "y"}).stencil({"x"}, 1);
}
"""


def source(name):
    return KERNELS.replace("NAME", name)


def metas(cache, name):
    """{tier: meta text} of the plugin's cache entries ("optimised" for an entry without a tier)."""
    out = {}
    for meta in cache.glob(f"{name}-*.meta"):
        text = meta.read_text()
        m = re.search(r"^tier (\S+)$", text, re.M)
        out[m.group(1) if m else "optimised"] = text
    return out


@pytest.fixture
def tiers(plugin_cache, monkeypatch):
    """A fresh cache with tiers on and the precompiled layer in place (else there is no quick
    build: a compiler other than the library's)."""
    monkeypatch.setenv("ISTHMUS_COMPILE_TIERS", "1")
    mod = q.compile_string("tier_warm", source("tier_warm"))
    if mod.tier_warm_fma.tier != "quick":
        pytest.skip("no precompiled kernel half for this compiler: compiles are not tiered")
    assert mod.tier_warm_fma.wait_optimised() == "optimised"
    return plugin_cache


def run_all(mod, name, rng):
    """Every kernel of `source(name)` on random inputs (strided, broadcast-free, empty); returns
    the outputs."""
    x = rng.standard_normal((37, 29)).astype(np.float32)
    w = rng.standard_normal((29, 41)).astype(np.float32)
    y = q.zeros((37, 41), dtype="float32")
    q.parallel_do((37, 41), x, w, y, 1.7, getattr(mod, f"{name}_fma"))
    xs = rng.standard_normal(301)[::3]  # a strided view
    ys = q.value(np.zeros(301)[::3])
    q.parallel_do(xs.shape[0], xs, ys, 0.3, -2.5, getattr(mod, f"{name}_axpb"))
    img = rng.standard_normal((23, 31)).astype(np.float32)
    out = q.zeros((23, 31), dtype="float32")
    q.parallel_do((23, 31), img, out, getattr(mod, f"{name}_blur"))
    empty = q.zeros((0, 5), dtype="float32")
    q.parallel_do((0, 5), q.zeros((0, 5), dtype="float32"), empty, getattr(mod, f"{name}_blur"))
    return [np.asarray(v).copy() for v in (y, ys, out, empty)]


def test_a_kernel_only_source_comes_back_quick_and_the_optimised_build_replaces_it(tiers):
    mod = q.compile_string("tier_a", source("tier_a"))
    k = mod.tier_a_fma
    entries = metas(tiers, "tier_a")
    assert "quick" in entries and "layer kernel-only" in entries["quick"]
    rng = np.random.default_rng(7)
    quick = run_all(mod, "tier_a", rng)  # may already run the optimised build: same values
    assert k.wait_optimised() == "optimised" and k.tier == "optimised"
    entries = metas(tiers, "tier_a")
    assert set(entries) == {"quick", "optimised"}
    assert k.plugin_path != "" and "tier quick" not in entries["optimised"]
    optimised = run_all(mod, "tier_a", np.random.default_rng(7))
    for a, b in zip(quick, optimised):
        assert a.tobytes() == b.tobytes()  # bit for bit, NaN payloads and signed zeros included
    # the values themselves: the double kernel is NumPy's arithmetic, the float one a float64
    # reference's within float32 rounding
    rng = np.random.default_rng(7)
    x = rng.standard_normal((37, 29)).astype(np.float32)
    w = rng.standard_normal((29, 41)).astype(np.float32)
    xd, wd = x.astype(np.float64), w.astype(np.float64)
    ref = (xd @ wd + 1.7 * xd.sum(1, keepdims=True)) * 1.7 + xd[:, :1] * wd[:1, :]
    np.testing.assert_allclose(optimised[0], ref, rtol=1e-4, atol=1e-4)
    xs = rng.standard_normal(301)[::3]
    np.testing.assert_array_equal(optimised[1], 0.3 * xs + -2.5)
    assert optimised[3].shape == (0, 5)


def test_the_optimised_build_is_what_a_later_compile_loads(tiers):
    mod = q.compile_string("tier_b", source("tier_b"))
    mod.tier_b_fma.wait_optimised()
    again = q.compile_string("tier_b", source("tier_b"))
    assert again.tier_b_fma.tier == "optimised"
    assert again.tier_b_fma.plugin_path == mod.tier_b_fma.plugin_path  # the optimised entry
    assert "tier quick" not in metas(tiers, "tier_b")["optimised"]


def test_the_quick_build_agrees_with_an_untiered_compile(tiers):
    quick = q.compile_string("tier_c", source("tier_c"))
    k = quick.tier_c_fma
    rng_out = run_all(quick, "tier_c", np.random.default_rng(3)) if k.tier == "quick" else None
    plain = q.compile_string("tier_d", source("tier_d"), tiered=False)
    assert plain.tier_d_fma.tier == "optimised" and set(metas(tiers, "tier_d")) == {"optimised"}
    expected = run_all(plain, "tier_d", np.random.default_rng(3))
    if rng_out is not None:
        for a, b in zip(rng_out, expected):
            assert a.tobytes() == b.tobytes()
    # and the float64 kernel against NumPy
    xs = np.random.default_rng(5).standard_normal(50)
    ys = q.value(np.zeros(50))
    q.parallel_do(50, xs, ys, 0.3, -2.5, plain.tier_d_axpb)
    np.testing.assert_array_equal(np.asarray(ys), 0.3 * xs + -2.5)


@pytest.mark.parametrize("flags", [["-O2"], ["-ffast-math"], ["-march=x86-64"]])
def test_flags_that_change_the_arithmetic_are_not_tiered(tiers, flags):
    # (-D, -U, -I, -W and -g flags are: they keep the arithmetic, but they make another
    # precompiled layer, which the first cold compiles into a cache do not build)
    name = "tier_f" + flags[0].strip("-=").replace("-", "_").replace("=", "_")
    mod = q.compile_string(name, source(name), flags)
    assert set(metas(tiers, name)) == {"optimised"}
    assert getattr(mod, f"{name}_fma").tier == "optimised"


def test_what_is_not_kernel_only_is_not_tiered(tiers):
    src = source("tier_g").replace(
        'ISTHMUS_PLUGIN(tier_g, m) {', 'ISTHMUS_PLUGIN(tier_g, m) {\n    m.def("tier_g_one", '
        '[] { return 1; });')
    mod = q.compile_string("tier_g", src)
    assert mod.tier_g_fma.tier == "optimised" and set(metas(tiers, "tier_g")) == {"optimised"}
    assert mod.tier_g_one() == 1


def test_tiers_are_off_with_the_environment_switch(tiers, monkeypatch):
    monkeypatch.setenv("ISTHMUS_COMPILE_TIERS", "0")
    mod = q.compile_string("tier_h", source("tier_h"))
    assert mod.tier_h_fma.tier == "optimised" and set(metas(tiers, "tier_h")) == {"optimised"}


def test_a_checked_launch_of_a_quick_kernel_waits_for_the_optimised_build(tiers):
    src = textwrap.dedent("""
        namespace ip = isthmus::plugin;
        ISTHMUS_PLUGIN(tier_i, m) {
            m.kernel("tier_i_shift", [](ip::view<const float, 1> x, ip::view<float, 1> y,
                                        int64_t i) { y(i) = x(i + 1); }, {"x", "y"});
        }
    """)
    mod = q.compile_string("tier_i", src)
    y = q.zeros(4, dtype="float32")
    with q.checked(), pytest.raises(IndexError, match="index 4 is out of bounds"):
        q.parallel_do(4, np.ones(4, np.float32), y, mod.tier_i_shift)
    assert mod.tier_i_shift.tier == "optimised"
    np.testing.assert_array_equal(np.asarray(y)[:3], 1)


def test_a_failed_optimised_build_keeps_the_quick_one_and_says_why(tiers, caplog):
    # compiles in the quick build only (isthmus/plugin/quick_build.hpp marks its translation unit)
    src = source("tier_j") + textwrap.dedent("""
        static_assert(isthmus::plugin::detail::tier_policy<
                          isthmus::plugin::detail::this_build>::quick,
                      "this source compiles in the quick build only");
    """)
    with caplog.at_level("INFO", logger="isthmus.compile"):
        mod = q.compile_string("tier_j", src)
        k = mod.tier_j_axpb
        assert k.tier == "quick"
        assert k.wait_optimised() == "quick"
    assert k.tier == "quick"
    said = "\n".join(r.getMessage() for r in caplog.records)
    assert "the optimised build of plugin 'tier_j' failed" in said
    assert "this source compiles in the quick build only" in said
    xs = np.arange(5.0)
    ys = q.value(np.zeros(5))
    q.parallel_do(5, xs, ys, 2.0, 1.0, k)  # the quick build still runs
    np.testing.assert_array_equal(np.asarray(ys), 2.0 * xs + 1.0)
    assert set(metas(tiers, "tier_j")) == {"quick"}  # a failed build leaves no entry


def test_a_long_launch_moves_to_the_optimised_build_between_blocks(tiers):
    mod = q.compile_string("tier_k", source("tier_k"))
    k = mod.tier_k_axpb
    xs = np.random.default_rng(1).standard_normal(1 << 20)
    expected = 0.3 * xs + -2.5
    for _ in range(200):  # launches during the swap compute the same values
        ys = q.value(np.zeros(xs.shape[0]))
        q.parallel_do(xs.shape[0], xs, ys, 0.3, -2.5, k)
        np.testing.assert_array_equal(np.asarray(ys), expected)
        if k.tier == "optimised":
            break
    assert k.wait_optimised() == "optimised"


def test_a_script_exits_at_once_and_its_next_run_loads_the_optimised_build(
        tiers, run_python):
    code = textwrap.dedent(f"""
        import os
        import isthmus as q
        q.init("cpu")
        src = {source("tier_l")!r}
        mod = q.compile_string("tier_l", src)
        print(mod.tier_l_fma.tier)
    """)
    assert run_python(code).stdout.strip().splitlines()[-1] == "quick"  # and exits at once
    # A detached process builds what the exit left; the cache's `wait` waits for it (See Note
    # [finishing lock]).
    assert qc.wait_for_finishers(tiers, timeout=120)
    assert set(metas(tiers, "tier_l")) == {"quick", "optimised"}
    assert qc.wait_for_finishers(tiers, timeout=0)
    assert run_python(code).stdout.strip().splitlines()[-1] == "optimised"


def test_two_processes_compiling_one_source_share_both_builds(tiers, tmp_path):
    import subprocess
    import sys
    script = tmp_path / "compile.py"
    script.write_text(textwrap.dedent(f"""
        import numpy as np
        import isthmus as q
        q.init("cpu")
        mod = q.compile_string("tier_m", {source("tier_m")!r})
        ys = q.value(np.zeros(8))
        q.parallel_do(8, np.arange(8.0), ys, 2.0, 1.0, mod.tier_m_axpb)
        assert np.array_equal(np.asarray(ys), 2.0 * np.arange(8.0) + 1.0)
        print(mod.tier_m_axpb.wait_optimised())
    """))
    import os
    env = dict(os.environ)
    procs = [subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        assert out.strip() == "optimised"
    assert set(metas(tiers, "tier_m")) == {"quick", "optimised"}
    assert not list(tiers.glob("*.tmp.*"))  # no temporary file left behind


def test_a_forked_child_does_not_wait_for_its_parents_builds(tiers, run_python):
    code = textwrap.dedent(f"""
        import os
        import isthmus as q
        q.init("cpu")
        mod = q.compile_string("tier_n", {source("tier_n")!r})
        pid = os.fork()
        if pid == 0:
            q.wait_for_compiles()  # the parent's queue is not the child's
            os._exit(0 if mod.tier_n_fma.tier in ("quick", "optimised") else 3)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status), mod.tier_n_fma.wait_optimised())
    """)
    assert run_python(code).stdout.strip().splitlines()[-1] == "0 optimised"


def test_a_bad_tiered_argument_is_a_type_error_before_anything_compiles(tiers):
    before = sorted(p.name for p in tiers.iterdir())
    for bad in ("yes", None, [True]):
        with pytest.raises(TypeError, match="tiered"):
            q.compile_string("tier_o", source("tier_o"), tiered=bad)
    assert sorted(p.name for p in tiers.iterdir()) == before
    assert not hasattr(q, "tier_o_fma")
    mod = q.compile_string("tier_o", source("tier_o"), tiered=False)  # the process goes on
    assert mod.tier_o_fma.tier == "optimised"


# ---- the quick build's direct link (Note [direct links for quick builds]) ----------------------

def needed_libraries(so):
    """The DT_NEEDED entries of a shared library, as readelf prints them."""
    import shutil
    import subprocess
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("no readelf to read the library's dynamic section")
    out = subprocess.run([readelf, "-d", str(so)], capture_output=True, text=True, check=True)
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out.stdout)


def quick_entry(cache, name):
    (meta,) = [m for m in cache.glob(f"{name}-*.meta") if "tier quick" in m.read_text()]
    return meta, meta.with_suffix(".so")


@pytest.fixture
def gold():
    import shutil
    if shutil.which("ld.gold") is None:
        pytest.skip("no ld.gold: the quick build is linked by the compiler driver")


def test_the_quick_build_is_linked_by_gold_against_stubs_and_computes_the_same(tiers, gold):
    mod = q.compile_string("tier_dl", source("tier_dl"))
    assert mod.tier_dl_fma.tier == "quick"
    meta, so = quick_entry(tiers, "tier_dl")
    assert "link direct" in meta.read_text().splitlines()
    needed = needed_libraries(so)
    for lib in ("libstdc++.so.6", "libc.so.6"):
        assert lib in needed
    quick = run_all(mod, "tier_dl", np.random.default_rng(5))
    assert mod.tier_dl_fma.wait_optimised() == "optimised"
    optimised = run_all(mod, "tier_dl", np.random.default_rng(5))
    for a, b in zip(quick, optimised):
        np.testing.assert_array_equal(a, b)


def test_the_direct_link_is_turned_off_by_its_switch_and_keyed_apart(tiers, gold, monkeypatch):
    monkeypatch.setenv("ISTHMUS_DIRECT_LINK", "0")
    mod = q.compile_string("tier_do", source("tier_do"))
    assert mod.tier_do_fma.tier == "quick"
    meta, _ = quick_entry(tiers, "tier_do")
    assert "link direct" not in meta.read_text()
    assert mod.tier_do_fma.wait_optimised() == "optimised"
    monkeypatch.setenv("ISTHMUS_DIRECT_LINK", "1")
    # The same source with the direct link is another quick entry: its optimised build is the
    # same entry, so this compile loads it.
    assert q.compile_string("tier_do", source("tier_do")).tier_do_fma.tier == "optimised"


def test_without_a_place_for_stubs_the_direct_link_reads_the_real_libraries(
        tiers, gold, run_python, tmp_path, monkeypatch):
    code = textwrap.dedent(f"""
        import numpy as np
        import isthmus as q
        q.init("cpu")
        mod = q.compile_string("tier_dt", {source("tier_dt")!r})
        ys = q.value(np.zeros(8))
        q.parallel_do(8, np.arange(8.0), ys, 2.0, 1.0, mod.tier_dt_axpb)
        assert np.array_equal(np.asarray(ys), 2.0 * np.arange(8.0) + 1.0)
        print(mod.tier_dt_axpb.tier)
    """)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "missing"))
    assert run_python(code).stdout.strip().splitlines()[-1] == "quick"
    meta, so = quick_entry(tiers, "tier_dt")
    assert "link direct" in meta.read_text().splitlines()
    assert "libstdc++.so.6" in needed_libraries(so)
    assert qc.wait_for_finishers(tiers, timeout=120)


def test_a_process_removes_its_stubs_when_it_exits(tiers, gold, run_python, tmp_path,
                                                   monkeypatch):
    (tmp_path / "t").mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "t"))
    code = textwrap.dedent(f"""
        import glob, os
        import isthmus as q
        q.init("cpu")
        mod = q.compile_string("tier_dr", {source("tier_dr")!r})
        print(mod.tier_dr_fma.tier, len(glob.glob(os.path.join(os.environ["TMPDIR"],
                                                                "isthmus-link-*", "*"))) > 0)
    """)
    assert run_python(code).stdout.strip().splitlines()[-1] == "quick True"
    assert qc.wait_for_finishers(tiers, timeout=120)
    assert not list((tmp_path / "t").glob("isthmus-link-*"))


# ---- the quick build's launcher and views (Note [the quick build's launcher]) ------------------

VIEWS = """
namespace ip = isthmus::plugin;
ISTHMUS_PLUGIN(NAME, m) {
    m.kernel("NAME_rows", [](ip::view<const double, 2> x, ip::view<double, 2> y, ip::ivec2 p) {
        y[p] = x(p[0], p[1]) * 2.0 + x[p] * x(p[0], 0);
    }, {"x", "y"});
    m.kernel("NAME_maps", [](ip::view<const float, 1, ip::access::clamped> x,
                             ip::view<const float, 1, ip::access::circular> c,
                             ip::view<const float, 1, ip::access::mirror> r,
                             ip::view<float, 1> y, int64_t i) {
        y(i) = x(i - 2) + 10.0f * c(i + 5) + 100.0f * r(i - 3);
    }, {"x", "c", "r", "y"});
    m.kernel("NAME_gather", [](ip::view<const float, 1, ip::access::checked> x,
                               ip::view<const int32_t, 1> at, ip::view<float, 1> y, int64_t i) {
        y(i) = x(at(i));
    }, {"x", "at", "y"});
}
"""


def test_the_quick_builds_own_launcher_indexes_like_numpy(tiers, run_python):
    # A script compiles the plugin and exits: the quick build stays in the cache, and loaded
    # here by its path it runs alone (no optimised build to move to): its one general loop and
    # its unchecked views' direct indexing, on strided and broadcast views; mapped and 'checked
    # views keep their maps and checks there.
    run_python(f"""
        import isthmus as q
        q.init("cpu")
        assert q.compile_string("tier_qv", {VIEWS.replace("NAME", "tier_qv")!r}).tier_qv_rows.tier \
            == "quick"
    """)
    qc.wait_for_finishers()
    _, so = quick_entry(tiers, "tier_qv")
    mod = q.import_native(str(so))
    rng = np.random.default_rng(11)
    x = rng.standard_normal((13, 21))[::2, ::3]  # strided in both dimensions
    y = q.value(np.zeros((14, 7))[::2, :])
    q.parallel_do((7, 7), x, y, mod.tier_qv_rows)
    np.testing.assert_array_equal(np.asarray(y), x * 2.0 + x * x[:, :1])
    b = np.broadcast_to(rng.standard_normal(7), (3, 7))  # stride 0 along the rows
    y = q.value(np.zeros((3, 7)))
    q.parallel_do((3, 7), b, y, mod.tier_qv_rows)
    np.testing.assert_array_equal(np.asarray(y), b * 2.0 + b * b[:, :1])
    n = 9
    xs = rng.standard_normal(n).astype(np.float32)
    c = rng.standard_normal(n).astype(np.float32)
    r = rng.standard_normal(n).astype(np.float32)
    out = q.value(np.zeros(n, dtype=np.float32))
    q.parallel_do(n, xs, c, r, out, mod.tier_qv_maps)
    i = np.arange(n)
    mirror = np.where((i - 3) < 0, -(i - 3) - 1, i - 3)
    expected = (xs[np.clip(i - 2, 0, n - 1)] + np.float32(10) * c[(i + 5) % n]
                + np.float32(100) * r[mirror])
    np.testing.assert_array_equal(np.asarray(out), expected)
    src = np.arange(5, dtype=np.float32)
    y = q.value(np.full(3, -1.0, dtype=np.float32))
    q.parallel_do(3, src, np.array([4, 0, 2], dtype=np.int32), y, mod.tier_qv_gather)
    np.testing.assert_array_equal(np.asarray(y), [4.0, 0.0, 2.0])
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0"):
        q.parallel_do(3, src, np.array([1, 5, 2], dtype=np.int32), y, mod.tier_qv_gather)
