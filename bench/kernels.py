"""Kernel benchmark: the same kernels in isthmus, Numba, Quadrants, Warp and NumPy, one process.

Usage (after a build):
    PYTHONPATH=build/python python3 bench/kernels.py [--quick] [--threads N] [--only NAME]

--quick      fewer repeats (at least 5 per cell, ~0.1 s of runs per cell instead of ~0.5 s)
--threads N  threads for isthmus (OpenMP), Numba (numba.set_num_threads), Quadrants
             (cpu_max_num_threads) and the torch expressions (torch.set_num_threads);
             default: every core. Warp's CPU launches run on the calling thread; NumPy's ufuncs
             are single-threaded.
--only NAME  run the kernels whose name contains NAME (repeatable): saxpy, color_temperature,
             box_blur, row_sum, launch

Kernels (each library runs the same math; user kernels write into outputs allocated once):
  saxpy              y = a*x + 1 over 10M float32
  color_temperature  examples/color_temperature.py's kernel over a 2048x2048x3 float32 image
                     (temp = 1: the image blended towards the "hot" colour)
  box_blur           3x3 box blur with clamped edges over a 2048x2048 float32 image
  row_sum            one position per row of a 4096x4096 float32 matrix, a float32 loop over
                     its columns (the other libraries' kernels accumulate in float32 too)
  launch             saxpy over 1,000 float32: the cost of one launch, timed as loops of launches

Each kernel has two rows: NumPy arrays in and out, and torch CPU tensors passed straight in
(isthmus, Quadrants and Warp take them; Numba does not, and the NumPy column becomes the torch
expression of the same math). All isthmus kernels are one compile_string source, compiled (or
loaded from the cache in $ISTHMUS_CACHE_DIR, default /tmp/isthmus-bench-kernels) before any
timing; every library's first calls (its JIT compiles) are excluded. Each library's result is
checked against the NumPy expression (np.testing.assert_allclose) before it is timed, so a
wrong kernel cannot win: a failed check prints the error and leaves the cell empty.

Timing: the libraries are interleaved in rounds (isthmus, numba, ..., isthmus, ...) so that a
burst of load from other processes hits them alike; each cell is the median wall time of at
least 7 calls (more for fast kernels, ~0.5 s of calls per cell). The ratio after each peer's
time is that library's time over isthmus's (above 1: isthmus is faster); the last column names
the fastest. Not a test: timings never gate anything.
"""
import argparse
import ctypes
import math
import os
import platform
import statistics
import sys
import time

os.environ.setdefault("ISTHMUS_CACHE_DIR", "/tmp/isthmus-bench-kernels")
os.environ.setdefault("NUMBA_CACHE_DIR", "/tmp/isthmus-bench-kernels/numba")

import numpy as np  # noqa: E402

import isthmus as q  # noqa: E402

try:
    import torch
except ImportError:  # the torch rows are skipped
    torch = None

PEERS_HINT = "scripts/deps --bench-peers"
# The columns; in the torch rows "numpy" holds torch's expression of the same math.
LIBS = ["isthmus", "numba", "quadrants", "warp", "numpy"]

# ---------------------------------------------------------------------------------------------
# isthmus: one plugin with every kernel, compiled once.

ISTHMUS_SRC = r"""
namespace ip = isthmus::plugin;

// examples/color_temperature.py's blend: lerp(a, b, c) = a c + b (1 - c), elementwise on RGB.
static inline ip::vec3 bk_lerp(ip::vec3 a, ip::vec3 b, float c) { return a * c + b * (1 - c); }

ISTHMUS_PLUGIN(bench_kernels, m) {
    m.kernel("bk_saxpy",
             [](ip::view<const float, 1> x, ip::view<float, 1> y, float a, int64_t i) {
                 y(i) = a * x(i) + 1.0f;
             },
             {"x", "y", "a"})
        .at_position({"x", "y"});
    m.kernel("bk_color_temperature",
             [](ip::view<const float, 3> x, ip::view<float, 3> y, float temp, ip::vec3 cold,
                ip::vec3 hot, ip::ivec2 pos) {
                 const ip::vec3 input = x.load<3>(pos[0], pos[1], 0);
                 const ip::vec3 output = temp < 0 ? bk_lerp(input, cold, -0.25f * temp)
                                                  : bk_lerp(input, hot, 0.25f * temp);
                 y.store(output, pos[0], pos[1], 0);
             },
             {"x", "y", "temp", "cold", "hot"})
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
        .at_position({"x", "y"});
    m.kernel("bk_row_sum",
             [](ip::view<const float, 2> x, ip::view<float, 1> out, int64_t i) {
                 const int64_t n = x.size(1);
                 float s = 0.0f;
                 for (int64_t j = 0; j < n; ++j) s += x(i, j);
                 out(i) = s;
             },
             {"x", "out"})
        .at_position({"x", "out"});
}
"""

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

    @njit(parallel=True, cache=True)
    def row_sum(x, out):
        for i in prange(x.shape[0]):
            s = f32(0.0)
            for j in range(x.shape[1]):
                s += x[i, j]
            out[i] = s

    ns = argparse.Namespace(mod=numba, saxpy=saxpy, color_temperature=color_temperature,
                            box_blur=box_blur, row_sum=row_sum)
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


# ---------------------------------------------------------------------------------------------
# The machine.

def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def simd_flags():
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f
                          if line.startswith("flags")), [])
    except OSError:
        return "unknown"
    order = ["sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
             "avx512_bf16", "avx512_fp16", "amx_tile"]
    have = [f for f in order if f in flags]
    return " ".join(have) or "none of SSE4.2/AVX"


def cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count()


def set_omp_threads(n):
    """omp_set_num_threads(n) on every OpenMP runtime in the process (isthmus's, which torch
    and Numba share)."""
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if ("gomp" in line or "libomp" in line)
                 and "/" in line}
    for p in sorted(paths):
        try:
            ctypes.CDLL(p).omp_set_num_threads(n)
        except (OSError, AttributeError):
            pass


# ---------------------------------------------------------------------------------------------
# Timing.

def fmt_time(s):
    if s != s:  # NaN
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.2f}us"
    if s < 1:
        return f"{s * 1e3:.3f}ms"
    return f"{s:.3f}s"


class Bench:
    def __init__(self, quick, only):
        self.only = only
        self.min_reps = 5 if quick else 7
        self.target = 0.1 if quick else 0.5
        self.max_reps = 40 if quick else 300
        self.rows = []
        self.first_calls = {}  # library -> seconds spent in first calls (compiles, cache loads)

    def wanted(self, name):
        return not self.only or any(s in name for s in self.only)

    def row(self, name, arrays, fns, check, per=1):
        """fns: {library: (call, result)}; call() runs the kernel once (or `per` launches);
        result() returns the output as a NumPy array for the check. None: not available."""
        cells = {}
        live = {}
        for lib, entry in fns.items():
            if entry is None:
                continue
            call, result = entry
            try:
                t0 = time.perf_counter()
                call()
                self.first_calls[lib] = self.first_calls.get(lib, 0.0) + time.perf_counter() - t0
                check(result())
            except Exception as e:  # a wrong or failing kernel is reported, never timed
                msg = str(e).strip().splitlines()
                print(f"  {name} [{arrays}] {lib}: {type(e).__name__}: "
                      f"{' '.join(msg[:3])[:300]}", flush=True)
                cells[lib] = "wrong"
                continue
            live[lib] = call
        # Warm-up and the size of each library's batch per round.
        batch = {}
        for lib, call in live.items():
            call()
            t0 = time.perf_counter()
            call()
            t1 = max(time.perf_counter() - t0, 1e-7)
            reps = min(max(self.min_reps, math.ceil(self.target / t1)), self.max_reps)
            batch[lib] = math.ceil(reps / self.min_reps)
        samples = {lib: [] for lib in live}
        for _ in range(self.min_reps):
            for lib, call in live.items():
                time.sleep(0.002)  # let the previous library's idle threads stop spinning
                for _ in range(batch[lib]):
                    t0 = time.perf_counter()
                    call()
                    samples[lib].append(time.perf_counter() - t0)
        for lib, s in samples.items():
            cells[lib] = statistics.median(s) / per
        r = (name, arrays, cells, {lib: len(s) for lib, s in samples.items()})
        self.rows.append(r)
        print_row(r)


def header():
    print(f"{'kernel':30s} {'arrays':6s} {'isthmus':>10s} " +
          " ".join(f"{c:>17s}" for c in ("numba", "quadrants", "warp", "numpy/torch ops")) +
          "  fastest")


def print_row(r):
    name, arrays, cells, _ = r
    base = cells.get("isthmus")
    base = base if isinstance(base, float) else None

    def cell(lib, width):
        v = cells.get(lib)
        if v is None:
            return f"{'-':>{width}s}"
        if isinstance(v, str):
            return f"{v:>{width}s}"
        ratio = f" {v / base:5.2f}x" if base and lib != "isthmus" else ""
        return f"{fmt_time(v) + ratio:>{width}s}"

    timed = {k: v for k, v in cells.items() if isinstance(v, float)}
    fastest = min(timed, key=timed.get) if timed else "-"
    if fastest == "numpy" and arrays == "torch":
        fastest = "torch ops"
    print(f"{name:30s} {arrays:6s} {cell('isthmus', 10)} " +
          " ".join(cell(lib, 17) for lib in LIBS[1:]) + f"  {fastest}", flush=True)


# ---------------------------------------------------------------------------------------------
# The kernels.

def close(rtol, atol=0.0):
    def make(ref):
        return lambda got: np.testing.assert_allclose(np.asarray(got), ref, rtol=rtol, atol=atol)
    return make


def as_np(x):
    return x.numpy() if torch is not None and isinstance(x, torch.Tensor) else np.asarray(x)


def run_case(b, name, inputs, make_out, ref, check, kernels, launches=1):
    """inputs: NumPy arrays; make_out(): a fresh output of each library (NumPy array);
    kernels: {lib: f(ins, out, mode) -> call}, mode "numpy" or "torch"."""
    for mode in ("numpy", "torch"):
        if mode == "torch" and torch is None:
            continue
        fns = {}
        for lib in LIBS:
            k = kernels.get(lib)
            if k is None or (lib != "numpy" and lib != "isthmus" and lib not in peers):
                continue
            if mode == "torch" and lib == "numba":
                continue  # Numba's kernels take NumPy arrays, not torch tensors
            out = make_out()
            ins = inputs
            if mode == "torch":
                ins = [torch.from_numpy(a) for a in inputs]
                out = torch.from_numpy(out)
            call = k(ins, out, mode)
            if call is None:
                continue
            if launches > 1:
                one = call
                call = (lambda one=one: [one() for _ in range(launches)])
            fns[lib] = (call, (lambda out=out: as_np(out)))
        b.row(name, mode, fns, check(ref), per=launches)


def kernel_saxpy(b, n, name, launches=1):
    rng = np.random.default_rng(1)
    x = rng.random(n, dtype=np.float32)
    a = 2.0
    ref = a * x + np.float32(1.0)

    def isthmus_k(ins, out, mode):
        xx = ins[0]
        return lambda: q.parallel_do(n, xx, out, a, q.bk_saxpy)

    def numba_k(ins, out, mode):
        f, xx, aa = peers["numba"].saxpy, ins[0], np.float32(a)
        return lambda: f(xx, out, aa)

    def quadrants_k(ins, out, mode):
        p = peers["quadrants"]
        f, xx = p.saxpy, ins[0]
        if launches > 1:
            return lambda: f(xx, out, a)
        return lambda: (f(xx, out, a), p.sync())

    def warp_k(ins, out, mode):
        p = peers["warp"]
        xx, yy = (ins[0], out) if mode == "torch" else (p.wrap(ins[0]), p.wrap(out))
        return lambda: p.launch(p.saxpy, n, xx, yy, a)

    def numpy_k(ins, out, mode):
        xx = ins[0]
        if mode == "torch":
            return lambda: (torch.mul(xx, a, out=out), out.add_(1.0))
        a32, one = np.float32(a), np.float32(1)
        return lambda: (np.multiply(xx, a32, out=out), np.add(out, one, out=out))

    run_case(b, name, [x], lambda: np.full(n, np.nan, np.float32), ref, close(1e-6),
             {"isthmus": isthmus_k, "numba": numba_k, "quadrants": quadrants_k, "warp": warp_k,
              "numpy": numpy_k}, launches=launches)
    if launches > 1 and "warp" in peers:
        peers["warp"].sync()


def kernel_color_temperature(b, h, w):
    rng = np.random.default_rng(2)
    img = (rng.random((h, w, 3), dtype=np.float32) * 255).astype(np.float32)
    temp = 1.0
    hot = np.array([1, 0.2, 0], np.float32) * 255
    cold = np.array([0.3, 0.4, 1], np.float32) * 255
    # examples/color_temperature.py's reference
    c, target = (np.float32(-0.25 * temp), cold) if temp < 0 else (np.float32(0.25 * temp), hot)
    ref = img * c + target * (1 - c)
    shift = (target * (1 - c)).astype(np.float32)
    q_cold, q_hot = q.asvalue(cold), q.asvalue(hot)

    def isthmus_k(ins, out, mode):
        x = ins[0]
        return lambda: q.parallel_do((h, w), x, out, temp, q_cold, q_hot, q.bk_color_temperature)

    def numba_k(ins, out, mode):
        f, x, t = peers["numba"].color_temperature, ins[0], np.float32(temp)
        return lambda: f(x, out, t, cold, hot)

    def quadrants_k(ins, out, mode):
        p = peers["quadrants"]
        f, x, vc, vh = p.color_temperature, ins[0], p.vec(cold), p.vec(hot)
        return lambda: (f(x, out, temp, vc, vh), p.sync())

    def warp_k(ins, out, mode):
        p = peers["warp"]
        x, y = (ins[0], out) if mode == "torch" else (p.wrap(ins[0]), p.wrap(out))
        vc, vh = p.vec(cold), p.vec(hot)
        return lambda: p.launch(p.color_temperature, (h, w), x, y, temp, vc, vh)

    def numpy_k(ins, out, mode):
        x = ins[0]
        if mode == "torch":
            s = torch.from_numpy(shift)
            return lambda: (torch.mul(x, float(c), out=out), out.add_(s))
        return lambda: (np.multiply(x, c, out=out), np.add(out, shift, out=out))

    run_case(b, f"color_temperature {h}x{w}x3", [img],
             lambda: np.full((h, w, 3), np.nan, np.float32), ref, close(1e-5, 1e-3),
             {"isthmus": isthmus_k, "numba": numba_k, "quadrants": quadrants_k, "warp": warp_k,
              "numpy": numpy_k})


def kernel_box_blur(b, h, w):
    rng = np.random.default_rng(3)
    x = rng.random((h, w), dtype=np.float32)
    offsets = [(di, dj) for di in (-1, 0, 1) for dj in (-1, 0, 1)]

    def blur_np(x, out):
        p = np.pad(x, 1, mode="edge")
        np.copyto(out, p[0:h, 0:w])
        for di, dj in offsets[1:]:
            np.add(out, p[1 + di:1 + di + h, 1 + dj:1 + dj + w], out=out)
        np.divide(out, np.float32(9), out=out)

    ref = np.empty_like(x)
    blur_np(x, ref)

    def isthmus_k(ins, out, mode):
        xx = ins[0]
        return lambda: q.parallel_do((h, w), xx, out, q.bk_box_blur)

    def numba_k(ins, out, mode):
        f, xx = peers["numba"].box_blur, ins[0]
        return lambda: f(xx, out)

    def quadrants_k(ins, out, mode):
        p = peers["quadrants"]
        f, xx = p.box_blur, ins[0]
        return lambda: (f(xx, out), p.sync())

    def warp_k(ins, out, mode):
        p = peers["warp"]
        xx, y = (ins[0], out) if mode == "torch" else (p.wrap(ins[0]), p.wrap(out))
        return lambda: p.launch(p.box_blur, (h, w), xx, y)

    def numpy_k(ins, out, mode):
        xx = ins[0]
        if mode == "torch":
            F = torch.nn.functional
            x4 = xx[None, None]
            return lambda: out.copy_(F.avg_pool2d(F.pad(x4, (1, 1, 1, 1), mode="replicate"),
                                                  3, stride=1)[0, 0])
        return lambda: blur_np(xx, out)

    run_case(b, f"box_blur 3x3 {h}x{w}", [x], lambda: np.full((h, w), np.nan, np.float32),
             ref, close(1e-5, 1e-6),
             {"isthmus": isthmus_k, "numba": numba_k, "quadrants": quadrants_k, "warp": warp_k,
              "numpy": numpy_k})


def kernel_row_sum(b, r, c):
    rng = np.random.default_rng(4)
    x = rng.random((r, c), dtype=np.float32)
    ref = x.sum(axis=1, dtype=np.float64).astype(np.float32)

    def isthmus_k(ins, out, mode):
        xx = ins[0]
        return lambda: q.parallel_do(r, xx, out, q.bk_row_sum)

    def numba_k(ins, out, mode):
        f, xx = peers["numba"].row_sum, ins[0]
        return lambda: f(xx, out)

    def quadrants_k(ins, out, mode):
        p = peers["quadrants"]
        f, xx = p.row_sum, ins[0]
        return lambda: (f(xx, out), p.sync())

    def warp_k(ins, out, mode):
        p = peers["warp"]
        xx, y = (ins[0], out) if mode == "torch" else (p.wrap(ins[0]), p.wrap(out))
        return lambda: p.launch(p.row_sum, r, xx, y)

    def numpy_k(ins, out, mode):
        xx = ins[0]
        if mode == "torch":
            return lambda: torch.sum(xx, dim=1, out=out)
        return lambda: np.sum(xx, axis=1, out=out)

    # A float32 running sum of 4096 values in [0, 1) is off by up to ~1e-4 relative.
    run_case(b, f"row_sum {r}x{c}", [x], lambda: np.full(r, np.nan, np.float32), ref,
             close(1e-3),
             {"isthmus": isthmus_k, "numba": numba_k, "quadrants": quadrants_k, "warp": warp_k,
              "numpy": numpy_k})


# ---------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--only", action="append", default=[])
    args = ap.parse_args()
    threads = args.threads or cores()

    q.init("cpu")
    for name, load in (("numba", load_numba), ("quadrants", lambda: load_quadrants(threads)),
                       ("warp", load_warp)):
        try:
            peers[name], peer_versions[name] = load()
        except ImportError:
            print(f"{name} not installed: its column is skipped (install the peers: {PEERS_HINT})")
        except Exception as e:  # installed but unusable here
            print(f"{name} failed to start ({type(e).__name__}: {e}): its column is skipped")
    if "numba" in peers:  # first: starting Numba's OpenMP layer resets the process's OpenMP count
        nb = peers["numba"].mod
        nb.set_num_threads(min(threads, nb.config.NUMBA_NUM_THREADS))
    set_omp_threads(threads)
    if torch is not None:
        torch.set_num_threads(threads)

    t0 = time.perf_counter()
    q.compile_string("bench_kernels", ISTHMUS_SRC)
    t_compile = time.perf_counter() - t0

    print(f"machine: {cpu_model()}, {cores()} cores, SIMD: {simd_flags()}; "
          f"Python {platform.python_version()}")
    vers = [f"isthmus {getattr(q, '__version__', '?')}", f"NumPy {np.__version__}",
            f"torch {torch.__version__ if torch is not None else 'absent'}"]
    vers += [f"{k} {v}" for k, v in peer_versions.items()]
    print("versions: " + ", ".join(vers))
    print(f"isthmus compile_string of the {ISTHMUS_SRC.count('m.kernel(')} kernels: "
          f"{t_compile:.3f} s (cache: {os.environ['ISTHMUS_CACHE_DIR']})")
    b = Bench(args.quick, args.only)

    sections = [("saxpy", lambda: kernel_saxpy(b, 10_000_000, "saxpy 10M")),
                ("color_temperature", lambda: kernel_color_temperature(b, 2048, 2048)),
                ("box_blur", lambda: kernel_box_blur(b, 2048, 2048)),
                ("row_sum", lambda: kernel_row_sum(b, 4096, 4096)),
                ("launch", lambda: kernel_saxpy(b, 1000, "launch: saxpy 1k, per call",
                                                launches=200))]
    todo = [(n, f) for n, f in sections if b.wanted(n)]
    if not todo:
        print("no kernel matches", args.only, file=sys.stderr)
        return 1

    # The threads line after the first parallel run: numba's layer is chosen by its first launch.
    started = False
    for name, f in todo:
        if not started:
            thr = [f"isthmus {q.build_info().get('openmp_threads', '?')} (OpenMP)"]
            if "numba" in peers:
                thr.append(f"numba {peers['numba'].mod.get_num_threads()}")
            if "quadrants" in peers:
                thr.append(f"quadrants {threads} (cpu_max_num_threads)")
            if "warp" in peers:
                thr.append("warp 1 (its CPU launches run on the calling thread)")
            thr.append("NumPy 1")
            if torch is not None:
                thr.append(f"torch ops {torch.get_num_threads()}")
            print("threads: " + ", ".join(thr) +
                  f"; OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(unset)')}")
            print(f"median wall time per call of >= {b.min_reps} calls (~{b.target} s per cell), "
                  "libraries interleaved; after each peer: its time / isthmus's "
                  "(above 1: isthmus faster)\n")
            header()
            started = True
        f()

    if "numba" in peers:
        try:
            layer = peers["numba"].mod.threading_layer()
        except ValueError:
            layer = "not started"
        print(f"\nnumba threading layer: {layer}")
    print("first calls, excluded from the table (JIT compiles or cache loads, checks): " +
          ", ".join(f"{k} {v:.2f} s" for k, v in b.first_calls.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
