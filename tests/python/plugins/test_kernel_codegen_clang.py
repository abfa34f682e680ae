"""Kernels compiled by Clang ($CXX=clang++) get the loops they get under GCC: the body inlined into
the flattened fast loop and vectorised (Note [the body inlined under Clang]), a row sum's partial
sums one vector add (Note [row sums under Clang]), and the bits of GCC's build."""
import os
import re
import shutil

import numpy as np
import pytest

import isthmus as q
from object_code import functions
from plugin_compilers import clang_command

CLANG = clang_command()
pytestmark = pytest.mark.skipif(CLANG is None, reason="no clang++ on this machine")

SRC = """
namespace ip = isthmus::plugin;
ISTHMUS_PLUGIN({name}, m) {{
    m.kernel("{p}_blur",
             [](ip::view<const float, 2, ip::access::clamped> x, ip::view<float, 2> y,
                ip::ivec2 p) {{
                 float s = 0.0f;
                 for (int di = -1; di <= 1; ++di)
                     for (int dj = -1; dj <= 1; ++dj) s += x(p[0] + di, p[1] + dj);
                 y(p[0], p[1]) = s / 9.0f;
             }},
             {{"x", "y"}})
        .at_position({{"y"}}).stencil({{"x"}}, 1);
    m.kernel("{p}_rs32", [](ip::view<const float, 2> x, ip::view<float, 1> out, int64_t i) {{
        out(i) = ip::row_sum(x, i);
    }}, {{"x", "out"}});
    m.kernel("{p}_rs64", [](ip::view<const double, 2> x, ip::view<double, 1> out, int64_t i) {{
        out(i) = ip::row_sum(x, i);
    }}, {{"x", "out"}});
}}
"""

UNDER_ASAN = "asan" in os.environ.get("LD_PRELOAD", "")


def compile_with(cxx, name, prefix):
    old = os.environ.get("CXX")
    os.environ["CXX"] = cxx
    try:
        return q.compile_string(name, SRC.format(name=name, p=prefix))
    finally:
        if old is None:
            del os.environ["CXX"]
        else:
            os.environ["CXX"] = old


@pytest.fixture(scope="module")
def builds(worker_cache):
    """The plugin built by Clang and, where there is one, by GCC (None otherwise)."""
    with worker_cache("kernel_codegen_clang"):
        clang = compile_with(CLANG, "codegen_clang", "cgc")
        gcc = compile_with("g++", "codegen_gcc", "cgg") if shutil.which("g++") else None
        yield clang, gcc


needs_objdump = pytest.mark.skipif(shutil.which("objdump") is None,
                                   reason="needs binutils' objdump")
optimised = pytest.mark.skipif(UNDER_ASAN,
                               reason="under the sanitizer gate plugins are built at -O0")


def fast_loop_lines(library, needle):
    """The instructions of the library's fast kernel loops whose names contain `needle`."""
    loops = [body for n, body in functions(library).items()
             if "fast_kernel_loop<" in n and needle in n]
    assert loops
    return [ln for body in loops for ln in body]


@needs_objdump
@optimised
def test_the_stencil_body_is_inlined_and_vectorised(builds):
    body = fast_loop_lines(builds[0].cgc_blur.plugin_path,
                           "float const, 2, (isthmus::plugin::access)2")
    assert any(re.search(r"\bvaddps\b", ln) for ln in body), "the blur's loop is not vectorised"
    calls = [ln for ln in body if re.search(r"\bcall\b", ln) and "operator()" in ln]
    assert calls == [], calls[:3]  # the body is not a call per position


@needs_objdump
@optimised
def test_the_row_sum_is_one_eight_lane_add(builds):
    body = fast_loop_lines(builds[0].cgc_rs32.plugin_path, "float const, 2")
    assert any(re.search(r"\bvaddps\b.*%ymm", ln) for ln in body), \
        "the row sum's partial sums are not one 8-lane vector add"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_clang_and_gcc_builds_give_the_same_bits(builds, dtype):
    clang, gcc = builds
    rng = np.random.default_rng(7)
    x = rng.standard_normal((37, 1000)).astype(dtype)  # a partial block, several merged blocks
    suffix = "rs32" if dtype == np.float32 else "rs64"
    out_c = np.zeros(37, dtype)
    q.parallel_do(37, x, out_c, getattr(clang, f"cgc_{suffix}"))
    np.testing.assert_allclose(out_c, x.astype(np.float64).sum(axis=1),
                               rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-4)
    img = rng.random((64, 70), dtype=np.float32)
    y_c = np.zeros_like(img)
    q.parallel_do((64, 70), img, y_c, clang.cgc_blur)
    padded = np.pad(img.astype(np.float64), 1, mode="edge")
    box = sum(padded[1 + di:65 + di, 1 + dj:71 + dj] for di in (-1, 0, 1) for dj in (-1, 0, 1))
    np.testing.assert_allclose(y_c, box / 9.0, rtol=1e-5)
    if gcc is None:
        return
    out_g = np.zeros(37, dtype)
    q.parallel_do(37, x, out_g, getattr(gcc, f"cgg_{suffix}"))
    assert np.array_equal(out_c, out_g)  # the same additions in the same order
    y_g = np.zeros_like(img)
    q.parallel_do((64, 70), img, y_g, gcc.cgg_blur)
    assert np.array_equal(y_c, y_g)
