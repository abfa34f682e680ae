"""Stencil interiors (Note [stencil interiors]): a kernel that declares `.stencil({"x"}, r)` runs
the positions at least r from every edge with x's 'clamped/'circular/'mirror map skipped; its
results equal the undeclared kernel's and NumPy's padded reference on every shape, layout and
thread count, its interior loop is vectorised, and checked mode catches a read that breaks the
declaration."""
import os
import re
import shutil

import numpy as np
import pytest

import isthmus as q
from object_code import functions

MODES = {"clamped": "edge", "circular": "wrap", "mirror": "symmetric"}


def blur(name, mode, declared):
    decl = '.stencil({"x"}, 1)' if declared else '.at_position({"x"})'
    return f"""
    m.kernel("{name}",
             [](ip::view<const double, 2, ip::access::{mode}> x, ip::view<double, 2> y,
                ip::ivec2 p) {{
                 double s = 0.0;
                 for (int di = -1; di <= 1; ++di)
                     for (int dj = -1; dj <= 1; ++dj) s += (3 * di + dj + 5) * x(p[0] + di, p[1] + dj);
                 y(p[0], p[1]) = s;
             }},
             {{"x", "y"}})
        .at_position({{"y"}}){decl};"""


SRC = "namespace ip = isthmus::plugin;\nISTHMUS_PLUGIN(stencil_kernels, m) {\n" + "".join(
    blur(f"{m}_{'st' if d else 'plain'}", m, d) for m in MODES for d in (True, False)) + """
    m.kernel("line_st",
             [](ip::view<const float, 1, ip::access::mirror> x, ip::view<float, 1> y, int64_t i) {
                 y(i) = x(i - 2) + 2.0f * x(i) - x(i + 2);
             },
             {"x", "y"})
        .stencil({"x"}, 2);
    m.kernel("cube_st",
             [](ip::view<const float, 3, ip::access::circular> x, ip::view<float, 3> y,
                ip::ivec3 p) {
                 y(p[0], p[1], p[2]) = x(p[0] - 1, p[1], p[2]) + x(p[0], p[1] + 1, p[2]) -
                                       x(p[0], p[1], p[2] - 1);
             },
             {"x", "y"})
        .stencil({"x"}, 1).at_position({"y"});
    m.kernel("blur_f32_st",
             [](ip::view<const float, 2, ip::access::clamped> x, ip::view<float, 2> y,
                ip::ivec2 p) {
                 float s = 0.0f;
                 for (int di = -1; di <= 1; ++di)
                     for (int dj = -1; dj <= 1; ++dj) s += x(p[0] + di, p[1] + dj);
                 y(p[0], p[1]) = s / 9.0f;
             },
             {"x", "y"})
        .at_position({"y"}).stencil({"x"}, 1);
    m.kernel("too_far",  // declares radius 1, reads 2 away
             [](ip::view<const double, 1, ip::access::clamped> x, ip::view<double, 1> y,
                int64_t i) { y(i) = x(i + 2); },
             {"x", "y"})
        .stencil({"x"}, 1);
}
"""


@pytest.fixture(scope="module")
def mod(worker_cache):
    with worker_cache("kernel_stencil"):
        yield q.compile_string("stencil_kernels", SRC)


def reference(x, mode, dims):
    """The weighted 3x3 sum of the kernels above, x mapped by NumPy's pad mode over its shape."""
    pad = np.pad(x, ((1, 1), (1, 1)), mode=MODES[mode])
    out = np.zeros(x.shape)
    for di in (-1, 0, 1):
        for dj in (-1, 0, 1):
            out += (3 * di + dj + 5) * pad[1 + di:1 + di + x.shape[0], 1 + dj:1 + dj + x.shape[1]]
    return out[:dims[0], :dims[1]]


SHAPES = [(1, 1), (1, 5), (2, 2), (2, 3), (3, 3), (4, 1), (5, 7), (64, 3), (3, 64), (37, 129)]


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("shape", SHAPES)
def test_declared_and_undeclared_agree_with_numpy(mod, mode, shape):
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape)
    for layout in ("c", "transposed", "strided"):
        if layout == "c":
            xs = x
        elif layout == "transposed":  # no unit last stride: the general loop's split
            xs = np.ascontiguousarray(x.T).T
        else:
            big = np.zeros((shape[0], 2 * shape[1]))
            big[:, ::2] = x
            xs = big[:, ::2]
        ys = [np.full(shape, np.nan) for _ in range(2)]
        q.parallel_do(shape, xs, ys[0], getattr(mod, f"{mode}_st"))
        q.parallel_do(shape, xs, ys[1], getattr(mod, f"{mode}_plain"))
        ref = reference(x, mode, shape)
        np.testing.assert_allclose(ys[1], ref, rtol=1e-12, atol=1e-12, err_msg=layout)
        # the interior skips only the map: the same sums in the same order, bit for bit
        assert np.array_equal(ys[0], ys[1]), (mode, shape, layout)


def test_a_view_larger_than_dims_maps_by_its_own_shape(mod):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((40, 50))
    for dims in [(40, 50), (39, 49), (38, 48), (20, 7), (1, 50)]:
        y = np.zeros(dims)
        q.parallel_do(dims, x, y, mod.clamped_st)
        np.testing.assert_allclose(y, reference(x, "clamped", dims), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 6, 100, 5000])
def test_one_dimensional_positions_radius_two(mod, n):
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    y = np.full(n, np.nan, np.float32)
    q.parallel_do(n, x, y, mod.line_st)
    if n:
        p = np.pad(x, 2, mode="symmetric")
        np.testing.assert_allclose(y, p[:-4] + 2 * x - p[4:], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(1, 1, 1), (2, 3, 4), (3, 3, 3), (6, 5, 70)])
def test_three_dimensional_positions(mod, shape):
    x = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    y = np.zeros(shape, np.float32)
    q.parallel_do(shape, x, y, mod.cube_st)
    ref = np.roll(x, 1, axis=0) + np.roll(x, -1, axis=1) - np.roll(x, 1, axis=2)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)


def test_results_do_not_depend_on_the_blocks(mod):
    """Blocks start anywhere in a row, and the first launch of a kernel plans them differently
    from later ones (Note [CPU launch plan]); every cut gives the same bits."""
    x = np.random.default_rng(3).random((300, 301)).astype(np.float32)
    padded = np.pad(x, 1, mode="edge")
    box = sum(padded[1 + a:301 + a, 1 + b:302 + b] for a in (-1, 0, 1) for b in (-1, 0, 1)) / 9
    ys = []
    for dims in [x.shape] * 3 + [(300, 1), (1, 301)]:
        y = np.zeros(dims, np.float32)
        q.parallel_do(dims, x, y, mod.blur_f32_st)
        ys.append(y)
    assert np.array_equal(ys[0], ys[1]) and np.array_equal(ys[0], ys[2])
    np.testing.assert_allclose(ys[0], box, rtol=1e-5)
    assert np.array_equal(ys[3], ys[0][:, :1]) and np.array_equal(ys[4], ys[0][:1, :])


def test_checked_mode_reports_a_read_beyond_the_declared_radius(mod):
    x = np.arange(10.0)
    y = np.zeros(10)
    with q.checked():
        with pytest.raises(IndexError, match=r"index 10 is out of bounds for dimension 0 with "
                           r"size 10 in the interior of a stencil, where the 'clamped map is "
                           r"skipped: the kernel reads further from the position than its "
                           r"\.stencil radius says in argument 1 \(x\)"):
            q.parallel_do(10, x, y, mod.too_far)
    assert np.array_equal(x, np.arange(10.0))
    # positions whose reads stay inside are fine in checked mode: a shorter run
    y2 = np.zeros(7)
    with q.checked():
        q.parallel_do(7, x, y2, mod.too_far)
    assert np.array_equal(y2, x[2:9])


@pytest.mark.parametrize("decl, message", [
    ('.stencil({"nope"}, 1)', r'stencil\("nope"\): the kernel has no tensor parameter of that '
                              r'name'),
    ('.stencil({"k"}, 1)', r'stencil\("k"\): the kernel has no tensor parameter of that name'),
    ('.stencil({"x"}, 0)', r"stencil radius 0 is outside 1\.\.255"),
    ('.stencil({"x"}, 256)', r"stencil radius 256 is outside 1\.\.255"),
])
def test_bad_declarations_are_refused_when_the_plugin_loads(tmp_path, monkeypatch, decl,
                                                            message):
    monkeypatch.setenv("ISTHMUS_CACHE_DIR", str(tmp_path))
    src = ("namespace ip = isthmus::plugin;\nISTHMUS_PLUGIN(bad_stencil, m) {\n"
           '    m.kernel("bs", [](ip::view<const float, 1, ip::access::clamped> x, '
           "ip::view<float, 1> y, int64_t k, int64_t i) { y(i) = x(i + k); }, "
           '{"x", "y", "k"})' + decl + ";\n}\n")
    with pytest.raises(Exception, match=message):
        q.compile_string("bad_stencil", src)


@pytest.mark.skipif(shutil.which("objdump") is None, reason="needs binutils' objdump")
@pytest.mark.skipif("asan" in os.environ.get("LD_PRELOAD", ""),
                    reason="under the sanitizer gate plugins are compiled instrumented by clang")
def test_the_interior_loop_is_vectorised(mod):
    loops = functions(mod.blur_f32_st.plugin_path)
    blur_loops = [body for n, body in loops.items()
                  if "fast_kernel_loop<" in n and "float const, 2, (isthmus::plugin::access)2" in n]
    assert blur_loops
    assert any(re.search(r"\bvaddps\b", ln) for body in blur_loops for ln in body), \
        "the stencil's interior loop is not vectorised"
