"""Python-side benchmark: isthmus qvalue ops beside NumPy (and PyTorch when installed), one run.

Usage (after a build):  PYTHONPATH=build/python python3 bench/python_ops.py [--quick]
Prints one table; the ratio column is isthmus relative to the fastest peer (higher is better
for GB/s and GFLOP/s, lower is better for times). Not a test: timings never gate CI.
"""
import sys
import time

import numpy as np

import isthmus as q

try:
    import torch
except ImportError:  # PyTorch is optional (scripts/deps --torch installs the CPU build)
    torch = None

QUICK = "--quick" in sys.argv
N = 5_000_000 if QUICK else 50_000_000
MM = 512 if QUICK else 2048
REPS = 3 if QUICK else 7


def median(f, reps=REPS, inner=1):
    f()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(inner):
            f()
        ts.append((time.perf_counter() - t0) / inner)
    ts.sort()
    return ts[len(ts) // 2]


rows = []


def row(name, unit, ours, peers, higher_better=True):
    best = max(peers.values()) if higher_better else min(peers.values())
    ratio = ours / best if higher_better else ours / best
    rows.append((name, unit, ours, peers, ratio, higher_better))


def main():
    q.init("cpu")
    rng = np.random.default_rng(0)
    a_np = rng.random(N, dtype=np.float32)
    b_np = rng.random(N, dtype=np.float32)
    a, b = q.value(a_np), q.value(b_np)
    peers_t = {}
    if torch is not None:
        a_t, b_t = torch.from_numpy(a_np), torch.from_numpy(b_np)

    mb = N * 4
    peers = {"numpy": 3 * mb / median(lambda: a_np + b_np) / 1e9}
    if torch is not None:
        peers["torch"] = 3 * mb / median(lambda: a_t + b_t) / 1e9
    row(f"add {N // 1_000_000}M float32", "GB/s", 3 * mb / median(lambda: a + b) / 1e9, peers)

    peers = {"numpy": mb / median(lambda: a_np.sum()) / 1e9}
    if torch is not None:
        peers["torch"] = mb / median(lambda: a_t.sum()) / 1e9
    row(f"sum {N // 1_000_000}M float32", "GB/s", mb / median(lambda: a.sum()) / 1e9, peers)

    x_np = rng.random((MM, MM), dtype=np.float32)
    y_np = rng.random((MM, MM), dtype=np.float32)
    x, y = q.value(x_np), q.value(y_np)
    fl = 2.0 * MM**3
    peers = {"numpy": fl / median(lambda: x_np @ y_np) / 1e9}
    if torch is not None:
        xt, yt = torch.from_numpy(x_np), torch.from_numpy(y_np)
        peers["torch"] = fl / median(lambda: xt @ yt) / 1e9
    row(f"matmul {MM} float32", "GFLOP/s", fl / median(lambda: x @ y) / 1e9, peers)

    s1_np = rng.random(1000, dtype=np.float32)
    s2_np = rng.random(1000, dtype=np.float32)
    s1, s2 = q.value(s1_np), q.value(s2_np)
    peers = {"numpy": median(lambda: s1_np + s2_np, inner=2000) * 1e6}
    if torch is not None:
        t1, t2 = torch.from_numpy(s1_np), torch.from_numpy(s2_np)
        peers["torch"] = median(lambda: t1 + t2, inner=2000) * 1e6
    row("add 1k float32", "us", median(lambda: s1 + s2, inner=2000) * 1e6, peers, False)

    # Zero-copy exchange with NumPy: wrap an ndarray, and view a qvalue as an ndarray.
    for size, label in [(256, "1 KB"), (256 * 1024 * 1024, "1 GB")]:
        if QUICK and size > 1024:
            size, label = 16 * 1024 * 1024, "64 MB"
        arr = np.ones(size, dtype=np.float32)
        val = q.value(arr[:1])  # warm
        peers = {"torch.from_numpy": (median(lambda: torch.from_numpy(arr), inner=2000) * 1e6
                                      if torch is not None else float("nan"))}
        peers["np.asarray(ndarray)"] = median(lambda: np.asarray(arr), inner=2000) * 1e6
        peers = {k: v for k, v in peers.items() if v == v}
        row(f"q.from_py(ndarray) {label}", "us",
            median(lambda: q.from_py(arr), inner=2000) * 1e6, peers, False)
        val = q.from_py(arr)
        row(f"np.asarray(qvalue) {label}", "us",
            median(lambda: np.asarray(val), inner=2000) * 1e6, peers, False)
        del val, arr

    # Overhead of a trivial method call (ndim) beside the same on an ndarray.
    peers = {"ndarray.ndim": median(lambda: a_np.ndim, inner=20000) * 1e9}
    row("qvalue.ndim call", "ns", median(lambda: a.ndim, inner=20000) * 1e9, peers, False)

    print(f"isthmus Python ops bench ({'quick' if QUICK else 'full'}; torch "
          f"{'present' if torch is not None else 'absent'}; median of {REPS})")
    print(f"{'op':28} {'isthmus':>12}  {'peers':40} {'ratio':>8}")
    for name, unit, ours, peers, ratio, hb in rows:
        ps = ", ".join(f"{k} {v:.3g}" for k, v in peers.items())
        print(f"{name:28} {ours:9.3g} {unit:>3}  {ps:40} {ratio:7.2f}x"
              f"{'' if hb else ' (time: lower is better)'}")
    q.destroy()


if __name__ == "__main__":
    main()
