"""CPU matmul beside NumPy and PyTorch in one process: alone, and right after a peer's matmul.

Usage (after a build):  PYTHONPATH=build/python python3 bench/matmul_peers.py [--quick] [--reps N]
                                                                             [--single]

For float32 and float64 square products (2048; --quick: 512) it prints GFLOP/s of isthmus,
NumPy and torch, each timed alone, then isthmus timed right after NumPy's (and torch's) matmul
on the same data: the peer's OpenBLAS/MKL pool has just finished and may still be spinning,
which is where two pools on the same cores get in each other's way (docs/threads.md). Every
figure is the median of --reps wall-clock timings (default 9; matmul is multi-threaded, so
thread CPU time would not do); the ratio column is isthmus / NumPy (target >= 0.95).
--single runs every library on one thread (OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=1, set before
the imports) and times the calling thread's CPU time instead: the kernels alone, and figures
that hold on a machine loaded by other processes. Works against builds without q.build_info()
too (to compare with an older tree: PYTHONPATH=/that/build/python). Not a test: timings never
gate CI.
"""
import argparse
import os
import statistics
import sys
import time

SINGLE = "--single" in sys.argv
if SINGLE:  # before NumPy, torch and isthmus load their thread pools
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["OPENBLAS_NUM_THREADS"] = "1"

import numpy as np

import isthmus as q

try:
    import torch
except ImportError:  # PyTorch is optional (scripts/deps installs the CPU build)
    torch = None


clock = time.thread_time if SINGLE else time.perf_counter


def median_seconds(run, reps, before=None):
    """Median time of run() (see clock); before() (untimed) runs ahead of every timing."""
    if before:
        before()
    run()  # warm-up: first-touch of the output, pool start-up
    times = []
    for _ in range(reps):
        if before:
            before()
        t0 = clock()
        run()
        times.append(clock() - t0)
    return statistics.median(times)


def bench(n, dtype, reps):
    rng = np.random.default_rng(0)
    a_np = rng.standard_normal((n, n)).astype(dtype)
    b_np = rng.standard_normal((n, n)).astype(dtype)
    a, b = q.value(a_np), q.value(b_np)
    gflop = 2.0 * n**3 / 1e9
    ours = lambda: q.matmul(a, b)  # noqa: E731
    numpy_mm = lambda: a_np @ b_np  # noqa: E731
    rows = [("isthmus", gflop / median_seconds(ours, reps)),
            ("NumPy", gflop / median_seconds(numpy_mm, reps))]
    if torch is not None:
        a_t, b_t = torch.from_numpy(a_np), torch.from_numpy(b_np)
        torch_mm = lambda: a_t @ b_t  # noqa: E731
        rows.append(("torch", gflop / median_seconds(torch_mm, reps)))
    rows.append(("isthmus right after NumPy's matmul",
                 gflop / median_seconds(ours, reps, before=numpy_mm)))
    if torch is not None:
        rows.append(("isthmus right after torch's matmul",
                     gflop / median_seconds(ours, reps, before=torch_mm)))
        rows.append(("NumPy right after isthmus's matmul",
                     gflop / median_seconds(numpy_mm, reps, before=ours)))
    # Same results as NumPy's (a benchmark that computes the wrong thing is no benchmark).
    tol = 1e-3 if dtype == np.float32 else 1e-9
    ref = a_np.astype(np.float64) @ b_np.astype(np.float64)
    err = np.max(np.abs(np.asarray(q.matmul(a, b)) - ref)) / np.max(np.abs(ref))
    assert err < tol, f"isthmus matmul differs from NumPy's: relative error {err}"
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="512 instead of 2048")
    parser.add_argument("--reps", type=int, default=9, help="timings per figure (median)")
    parser.add_argument("--single", action="store_true",
                        help="one thread everywhere, timed by the calling thread's CPU time")
    args = parser.parse_args()
    q.init("cpu")
    if hasattr(q, "build_info"):
        info = q.build_info()
        blas = info["blas"]
        print(f"isthmus {info['version']}: {blas['name']} {blas['version']}, core "
              f"{blas['core']}, {blas['threads']} BLAS threads, {info['openmp_threads']} "
              "OpenMP threads")
    else:
        print(f"isthmus {q.__version__} (no build_info(): an older build)")
    if torch is not None and SINGLE:
        torch.set_num_threads(1)
    print(f"NumPy {np.__version__}" + (f", torch {torch.__version__} "
                                      f"({torch.get_num_threads()} threads)" if torch else
                                      ", torch not installed"))
    n = 512 if args.quick else 2048
    kind = "thread CPU time, one thread" if SINGLE else "wall-clock"
    print(f"median of {args.reps} {kind} timings per figure\n")
    print(f"{'matmul':<12} {'who':<38} {'GFLOP/s':>9} {'/ NumPy':>8}")
    for dtype in (np.float32, np.float64):
        rows = bench(n, dtype, args.reps)
        base = dict(rows)["NumPy"]
        for who, gflops in rows:
            label = f"{n} {np.dtype(dtype).name}"
            print(f"{label:<12} {who:<38} {gflops:9.1f} {gflops / base:7.2f}x")


if __name__ == "__main__":
    main()
