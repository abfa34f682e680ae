"""Per-call cost of small qvalue ops and zero-copy exchange, in CPU time of the calling thread.

Usage (after a build):  PYTHONPATH=build/python python3 bench/small_ops_cpu.py
Wall-clock timings of sub-microsecond calls are meaningless on a shared, loaded machine;
thread CPU time (best of 7 runs of 20000 calls) is not inflated by other processes, so two
builds can be compared side by side (run this with each build's PYTHONPATH). Not a test.
"""
import operator
import time

import numpy as np

import isthmus as q

try:
    import torch
except ImportError:  # PyTorch is optional: its rows are skipped
    torch = None


def best_us(f, inner=20000, reps=7):
    """Best per-call thread CPU time of f over `reps` runs of `inner` calls, in microseconds."""
    f()
    ts = []
    for _ in range(reps):
        t0 = time.thread_time()
        for _ in range(inner):
            f()
        ts.append((time.thread_time() - t0) / inner)
    return min(ts) * 1e6


def main():
    q.init("cpu")
    rng = np.random.default_rng(0)
    a_np = rng.random(1000, dtype=np.float32)
    b_np = rng.random(1000, dtype=np.float32)
    c_np = a_np.copy()
    a, b = q.value(a_np), q.value(b_np)
    rows = [
        ("a + b, 1k float32", lambda: a + b),
        ("NumPy a + b, 1k float32", lambda: a_np + b_np),
        ("a + 1.0, 1k float32", lambda: a + 1.0),
        ("NumPy a + 1.0, 1k float32", lambda: a_np + 1.0),
        ("a += b, 1k float32", lambda: operator.iadd(a, b)),
        ("NumPy a += b, 1k float32", lambda: operator.iadd(c_np, b_np)),
        ("q.from_py(ndarray)", lambda: q.from_py(a_np)),
        ("np.asarray(qvalue)", lambda: np.asarray(a)),
        ("A.__dlpack__(max_version=(1, 0))", lambda: a.__dlpack__(max_version=(1, 0))),
        ("NumPy x.__dlpack__(max_version=(1, 0))", lambda: a_np.__dlpack__(max_version=(1, 0))),
    ]
    if torch is not None:
        t = torch.from_numpy(a_np.copy())
        rows += [
            ("q.from_dlpack(torch tensor)", lambda: q.from_dlpack(t)),
            ("torch.from_dlpack(qvalue)", lambda: torch.from_dlpack(a)),
            ("torch.from_numpy (reference)", lambda: torch.from_numpy(a_np)),
            ("a + torch tensor, 1k float32", lambda: a + t),
        ]
    for name, f in rows:
        print(f"{name:40s} {best_us(f):7.3f} us")


if __name__ == "__main__":
    main()
