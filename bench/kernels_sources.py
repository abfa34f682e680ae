"""bench/kernels.py's kernels: the isthmus plugin source and each peer library's definitions."""
import argparse
import importlib.util
import pathlib

import numpy as np

PEERS_HINT = "scripts/deps --bench-peers"
# The columns; in the torch rows "numpy" holds torch's expression of the same math.
LIBS = ["isthmus", "numba", "quadrants", "warp", "numpy"]

# ---------------------------------------------------------------------------------------------
# isthmus: one plugin with every kernel, compiled once. The color_temperature kernel (and its
# lerp helper) is examples/color_temperature.py's own source, into which the other kernels go.


def _example_kernel_src():
    path = pathlib.Path(__file__).resolve().parent.parent / "examples" / "color_temperature.py"
    spec = importlib.util.spec_from_file_location("color_temperature_example", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # defines the kernel source and functions; runs nothing
    return mod.KERNEL_SRC


BENCH_KERNELS = r"""
    m.kernel("bk_saxpy",
             [](ip::view<const float, 1> x, ip::view<float, 1> y, float a, int64_t i) {
                 y(i) = a * x(i) + 1.0f;
             },
             {"x", "y", "a"})
        .at_position({"x", "y"});
    m.kernel("bk_box_blur",
             [](ip::view<const float, 2, ip::access::clamped> x, ip::view<float, 2> y,
                ip::ivec2 p) {
                 float s = 0.0f;
                 for (int di = -1; di <= 1; ++di)
                     for (int dj = -1; dj <= 1; ++dj) s += x(p[0] + di, p[1] + dj);
                 y(p[0], p[1]) = s / 9.0f;
             },
             {"x", "y"})
        .at_position({"y"})
        .stencil({"x"}, 1);
    m.kernel("bk_row_sum_pairwise",
             [](ip::view<const float, 2> x, ip::view<float, 1> out, int64_t i) {
                 out(i) = ip::row_sum(x, i);
             },
             {"x", "out"})
        .at_position({"x", "out"});
    m.kernel("bk_row_sum",
             [](ip::view<const float, 2> x, ip::view<float, 1> out, int64_t i) {
                 const int64_t n = x.size(1);
                 float s = 0.0f;
                 for (int64_t j = 0; j < n; ++j) s += x(i, j);
                 out(i) = s;
             },
             {"x", "out"})
        .at_position({"x", "out"});
"""

# The row sum again, for the fast-math row: compiled with flags=["-ffast-math"] (an opt-in in
# isthmus and Numba, Quadrants' default), which lets the compiler reassociate the running sum.
FAST_MATH_SRC = """
namespace ip = isthmus::plugin;
ISTHMUS_PLUGIN(bench_kernels_fast_math, m) {""" + BENCH_KERNELS[BENCH_KERNELS.index(
    '    m.kernel("bk_row_sum"'):].replace("bk_row_sum", "bk_row_sum_fast") + "}\n"

_EXAMPLE_PLUGIN = "ISTHMUS_PLUGIN(color_temperature, m) {"
_example_src = _example_kernel_src()
assert _EXAMPLE_PLUGIN in _example_src, "examples/color_temperature.py's plugin line changed"
ISTHMUS_SRC = _example_src.replace(_EXAMPLE_PLUGIN,
                                   "ISTHMUS_PLUGIN(bench_kernels, m) {" + BENCH_KERNELS)

# ---------------------------------------------------------------------------------------------
# The peers, each imported and its kernels defined only when the package is there.

peers = {}  # name -> module namespace with the kernels, or absent
peer_versions = {}


def load_numba():
    import numba
    from numba import njit, prange

    f32 = np.float32

    @njit(parallel=True, cache=True)
    def saxpy(x, y, a):
        for i in prange(x.shape[0]):
            y[i] = a * x[i] + f32(1.0)

    @njit(parallel=True, cache=True)
    def color_temperature(x, y, temp, cold, hot):
        for i in prange(x.shape[0]):
            for j in range(x.shape[1]):
                if temp < f32(0.0):
                    c = f32(-0.25) * temp
                    t = cold
                else:
                    c = f32(0.25) * temp
                    t = hot
                for k in range(3):
                    y[i, j, k] = x[i, j, k] * c + t[k] * (f32(1.0) - c)

    @njit(parallel=True, cache=True)
    def box_blur(x, y):
        h, w = x.shape
        for i in prange(h):
            for j in range(w):
                s = f32(0.0)
                for di in range(-1, 2):
                    ii = min(max(i + di, 0), h - 1)
                    for dj in range(-1, 2):
                        s += x[ii, min(max(j + dj, 0), w - 1)]
                y[i, j] = s / f32(9.0)

    def row_sum_py(x, out):
        for i in prange(x.shape[0]):
            s = f32(0.0)
            for j in range(x.shape[1]):
                s += x[i, j]
            out[i] = s

    row_sum = njit(parallel=True, cache=True)(row_sum_py)
    # the same loop with fast math (not cached: one cache entry per Python function)
    row_sum_fast = njit(parallel=True, fastmath=True)(row_sum_py)

    ns = argparse.Namespace(mod=numba, saxpy=saxpy, color_temperature=color_temperature,
                            box_blur=box_blur, row_sum=row_sum, row_sum_fast=row_sum_fast)
    return ns, numba.__version__


def load_quadrants(threads):
    import quadrants as qd  # prints its banner and "Starting on arch=x64"
    qd.init(arch=qd.cpu, cpu_max_num_threads=threads)
    nd = qd.types.ndarray
    vec3 = qd.types.vector(3, qd.f32)

    @qd.kernel
    def saxpy(x: nd(dtype=qd.f32, ndim=1), y: nd(dtype=qd.f32, ndim=1), a: qd.f32):
        for i in range(x.shape[0]):
            y[i] = a * x[i] + 1.0

    @qd.kernel
    def color_temperature(x: nd(dtype=qd.f32, ndim=3), y: nd(dtype=qd.f32, ndim=3),
                          temp: qd.f32, cold: vec3, hot: vec3):
        for i, j in qd.ndrange(x.shape[0], x.shape[1]):
            c = 0.25 * temp
            t = hot
            if temp < 0.0:
                c = -0.25 * temp
                t = cold
            for k in qd.static(range(3)):
                y[i, j, k] = x[i, j, k] * c + t[k] * (1.0 - c)

    @qd.kernel
    def box_blur(x: nd(dtype=qd.f32, ndim=2), y: nd(dtype=qd.f32, ndim=2)):
        h, w = x.shape[0], x.shape[1]
        for i, j in qd.ndrange(h, w):
            s = 0.0
            for di in range(-1, 2):
                ii = qd.min(qd.max(i + di, 0), h - 1)
                for dj in range(-1, 2):
                    s += x[ii, qd.min(qd.max(j + dj, 0), w - 1)]
            y[i, j] = s / 9.0

    @qd.kernel
    def row_sum(x: nd(dtype=qd.f32, ndim=2), out: nd(dtype=qd.f32, ndim=1)):
        for i in range(x.shape[0]):
            s = 0.0
            for j in range(x.shape[1]):
                s += x[i, j]
            out[i] = s

    def vec(v):
        return qd.Vector([float(e) for e in v])

    ns = argparse.Namespace(mod=qd, saxpy=saxpy, color_temperature=color_temperature,
                            box_blur=box_blur, row_sum=row_sum, vec=vec, sync=qd.sync)
    v = qd.__version__
    return ns, ".".join(map(str, v)) if isinstance(v, tuple) else str(v)


def load_warp():
    import warp as wp
    wp.config.log_level = wp.LOG_WARNING  # no banner, no "Module ... load" lines
    wp.init()

    @wp.kernel
    def saxpy(x: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.float32), a: wp.float32):
        i = wp.tid()
        y[i] = a * x[i] + 1.0

    @wp.kernel
    def color_temperature(x: wp.array3d(dtype=wp.float32), y: wp.array3d(dtype=wp.float32),
                          temp: wp.float32, cold: wp.vec3, hot: wp.vec3):
        i, j = wp.tid()
        c = 0.25 * temp
        t = hot
        if temp < 0.0:
            c = -0.25 * temp
            t = cold
        for k in range(3):
            y[i, j, k] = x[i, j, k] * c + t[k] * (1.0 - c)

    @wp.kernel
    def box_blur(x: wp.array2d(dtype=wp.float32), y: wp.array2d(dtype=wp.float32)):
        i, j = wp.tid()
        h = x.shape[0]
        w = x.shape[1]
        s = float(0.0)
        for di in range(-1, 2):
            ii = wp.min(wp.max(i + di, 0), h - 1)
            for dj in range(-1, 2):
                s += x[ii, wp.min(wp.max(j + dj, 0), w - 1)]
        y[i, j] = s / 9.0

    @wp.kernel
    def row_sum(x: wp.array2d(dtype=wp.float32), out: wp.array(dtype=wp.float32)):
        i = wp.tid()
        s = float(0.0)
        for j in range(x.shape[1]):
            s += x[i, j]
        out[i] = s

    def launch(kernel, dim, *args):
        wp.launch(kernel, dim=dim, inputs=list(args), device="cpu")

    def wrap(a):
        """A zero-copy wp.array over a NumPy array (Warp's own container; made once)."""
        return wp.array(a, dtype=wp.float32, device="cpu", copy=False)

    ns = argparse.Namespace(mod=wp, saxpy=saxpy, color_temperature=color_temperature,
                            box_blur=box_blur, row_sum=row_sum, launch=launch, wrap=wrap,
                            vec=lambda v: wp.vec3(*[float(e) for e in v]),
                            sync=lambda: wp.synchronize_device("cpu"))
    return ns, wp.config.version
