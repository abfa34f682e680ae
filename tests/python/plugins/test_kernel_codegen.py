"""Kernel loops compile to what a hand-written loop compiles to (Note [the fast loop is hot],
Note [unit-stride loops]): the object code of a compiled kernel has the body inlined into its
position loop, and both loop instances (unit last stride, any strides) give NumPy's values."""
import os
import re
import shutil

import numpy as np
import pytest

import isthmus as q
from object_code import functions

SRC = """
namespace ip = isthmus::plugin;
ISTHMUS_PLUGIN(codegen_kernels, m) {
    m.kernel("codegen_saxpy",
             [](ip::view<const float, 1> x, ip::view<float, 1> y, float a, int64_t i) {
                 y(i) = a * x(i) + 1.0f;
             },
             {"x", "y", "a"});
    m.kernel("codegen_blend",
             [](ip::view<const double, 2> x, ip::view<const double, 2, ip::access::clamped> z,
                ip::view<double, 2> y, ip::ivec2 p) {
                 y(p[0], p[1]) = 0.5 * x(p[0], p[1]) + z(p[0], p[1] + 1);
             },
             {"x", "z", "y"});
}
"""


@pytest.fixture(scope="module")
def kernels(worker_cache):
    with worker_cache("kernel_codegen"):
        yield q.compile_string("codegen_kernels", SRC)


@pytest.mark.skipif(shutil.which("objdump") is None, reason="needs binutils' objdump")
@pytest.mark.skipif("asan" in os.environ.get("LD_PRELOAD", ""),
                    reason="under the sanitizer gate plugins are compiled instrumented by clang")
def test_position_loops_inline_the_body(kernels):
    funcs = functions(kernels.codegen_saxpy.plugin_path)
    loops = {n: body for n, body in funcs.items() if "fast_kernel_loop<" in n}
    assert len(loops) >= 2, sorted(funcs)[:20]  # one per kernel (clones may add more)
    for name, body in loops.items():
        calls = [ln for ln in body if re.search(r"\bcall", ln) and "operator()" in ln]
        assert not calls, f"the position loop calls the body out of line:\n{name}\n" + \
            "\n".join(calls)
    # the saxpy loop over unit strides is vectorised (packed float multiplies or FMAs; see
    # Note [setup code is cold]: a cold call before it once made the loop scalar)
    saxpy = [body for n, body in loops.items() if "float const, 1" in n]
    assert saxpy
    assert any(re.search(r"\bv?(fmadd\w*|mul)ps\b", ln) for body in saxpy for ln in body), \
        "the unit-stride saxpy loop is not vectorised"
    # no function but the checked loop calls a kernel body (a lambda of the plugin's
    # definition; the support code's own lambdas, linked from the prebuilt layer's object, are
    # no kernels): it exists only inlined (or not at all). The checked loop is optimised for
    # size (Note [checked loops are cold]); with a stencil's split (Note [stencil interiors]) it
    # may call the body.
    callers = [n for n, body in funcs.items()
               if not re.search(r"(kernel_loop|run_positions)<true\b", n) and
               any(re.search(r"\bcall", ln) and "isthmus_plugin_define_" in ln and
                   "{lambda(" in ln and "operator()" in ln for ln in body)]
    assert not callers, f"kernel bodies called out of line from {callers}"


def test_unit_and_general_strides_agree_with_numpy(kernels):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(10_001).astype(np.float32)
    # a * x + 1 may be one fused multiply-add: within one rounding of the float64 value
    ref = (2.5 * x.astype(np.float64) + 1.0).astype(np.float32)
    y = np.zeros_like(x)
    q.parallel_do(x.size, x, y, 2.5, kernels.codegen_saxpy)  # unit strides
    np.testing.assert_allclose(y, ref, rtol=2e-7, atol=1e-7)
    xs = np.repeat(x, 3)[::3]  # the same values, strided: the general loop
    ys = np.zeros(2 * x.size, np.float32)[::2]
    q.parallel_do(xs.size, xs, ys, 2.5, kernels.codegen_saxpy)
    np.testing.assert_array_equal(ys, y)  # both loops: the same bits
    xr = np.ascontiguousarray(x[::-1])[::-1]  # negative stride, the same values
    yr = np.zeros(x.size, np.float32)
    q.parallel_do(xr.size, xr, yr, 2.5, kernels.codegen_saxpy)
    np.testing.assert_array_equal(yr, y)

    a = rng.standard_normal((37, 53))
    z = rng.standard_normal((37, 53))
    zc = np.concatenate([z[:, 1:], z[:, -1:]], axis=1)  # clamped at the right border
    for xa, za, out in ((a, z, np.zeros((37, 53))),  # all unit
                        (np.asfortranarray(a), z, np.zeros((37, 53))),  # one view strided
                        (a, np.asfortranarray(z), np.zeros((53, 37)).T)):  # output strided
        q.parallel_do((37, 53), xa, za, out, kernels.codegen_blend)
        np.testing.assert_allclose(out, 0.5 * a + zc, rtol=0, atol=1e-15)
    with q.checked():  # checked mode: one loop, the same values
        out = np.zeros((37, 53))
        q.parallel_do((37, 53), a, z, out, kernels.codegen_blend)
        np.testing.assert_allclose(out, 0.5 * a + zc, rtol=0, atol=1e-15)
