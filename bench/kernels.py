"""Kernel benchmark: the same kernels in isthmus, Numba, Quadrants, Warp and NumPy, one process.

Usage (after a build):
    PYTHONPATH=build/python python3 bench/kernels.py [--quick] [--threads N] [--only NAME]

--quick      fewer repeats (at least 5 per cell, ~0.1 s of runs per cell instead of ~0.5 s)
--threads N  threads for isthmus (OpenMP), Numba (numba.set_num_threads), Quadrants
             (cpu_max_num_threads) and the torch expressions (torch.set_num_threads);
             default: every core. Warp's CPU launches run on the calling thread; NumPy's ufuncs
             are single-threaded.
--only NAME  run the kernels whose name contains NAME (repeatable): saxpy, color_temperature,
             box_blur, row_sum, row_sum_fast_math, row_sum_helper, launch

Kernels (each library runs the same math; user kernels write into outputs allocated once):
  saxpy              y = a*x + 1 over 10M float32
  color_temperature  examples/color_temperature.py's kernel over a 2048x2048x3 float32 image
                     (temp = 1: the image blended towards the "hot" colour)
  box_blur           3x3 box blur with clamped edges over a 2048x2048 float32 image (isthmus
                     declares the stencil: .stencil({"x"}, 1))
  row_sum            one position per row of a 4096x4096 float32 matrix, a float32 loop over
                     its columns (the other libraries' kernels accumulate in float32 too)
  row_sum_fast_math  the same compiled with fast math (isthmus flags=["-ffast-math"], Numba
                     fastmath=True, Quadrants' default), which vectorises the running sum
  row_sum_helper     isthmus sums each row with ip::row_sum (a fixed pairwise order that
                     vectorises without fast math); the peers run the running-sum kernels above
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

This file is the driver (options, machine line, timing, the table); the kernels are in
bench/kernels_sources.py, each kernel's data, reference and calls in bench/kernels_cases.py.
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
from kernels_cases import (kernel_box_blur, kernel_color_temperature,  # noqa: E402
                           kernel_row_sum, kernel_saxpy)
from kernels_sources import FAST_MATH_SRC, ISTHMUS_SRC, LIBS, PEERS_HINT, peers, peer_versions  # noqa: E402
from kernels_sources import load_numba, load_quadrants, load_warp  # noqa: E402

try:
    import torch
except ImportError:  # the torch rows are skipped
    torch = None

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
    q.compile_string("bench_kernels", ISTHMUS_SRC, tiered=False)  # the -O3 build is timed
    t_compile = time.perf_counter() - t0
    q.compile_string("bench_kernels_fast_math", FAST_MATH_SRC, flags=["-ffast-math"])

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
                ("row_sum_fast_math", lambda: kernel_row_sum(b, 4096, 4096, fast_math=True)),
                ("row_sum_helper", lambda: kernel_row_sum(b, 4096, 4096, helper=True)),
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
