"""Python-side benchmark: isthmus qvalue ops beside NumPy (and PyTorch when installed), one run.

Usage (after a build):  PYTHONPATH=build/python python3 bench/python_ops.py [--quick]
Prints one table; the ratio column is isthmus relative to the fastest peer (higher is better
for GB/s and GFLOP/s, lower is better for times). Not a test: timings never gate CI.
"""
import os
import sys
import time

import numpy as np

import isthmus as q

try:
    import torch
except ImportError:  # PyTorch is optional (scripts/deps installs the CPU build)
    torch = None

# The bare pybind11 peer module (bench/pybind11_peer.cpp), built beside this script's outputs.
_build = os.environ.get("ISTHMUS_BUILD_DIR", os.path.join(os.path.dirname(__file__), "..", "build"))
sys.path.insert(0, os.path.join(_build, "bench"))
try:
    import isthmus_bench_peer as peer
except ImportError:
    peer = None

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

    # Zero-copy exchange with NumPy and torch: wrap a foreign array, and view a qvalue.
    sizes = [(256, "1 KB"), (256 * 1024 * 1024, "1 GB")]
    if QUICK:
        sizes[1] = (16 * 1024 * 1024, "64 MB")
    for size, label in sizes:
        arr = np.ones(size, dtype=np.float32)
        ref = {"torch.from_numpy": (median(lambda: torch.from_numpy(arr), inner=2000) * 1e6
                                    if torch is not None else float("nan"))}
        ref = {k: v for k, v in ref.items() if v == v} or {
            "np.asarray(ndarray)": median(lambda: np.asarray(arr), inner=2000) * 1e6}
        row(f"q.from_py(ndarray) {label}", "us",
            median(lambda: q.from_py(arr), inner=2000) * 1e6, ref, False)
        val = q.from_py(arr)
        row(f"np.asarray(qvalue) {label}", "us",
            median(lambda: np.asarray(val), inner=2000) * 1e6, ref, False)
        if torch is not None and hasattr(q, "from_dlpack"):
            t = torch.from_numpy(arr)
            row(f"q.from_dlpack(torch) {label}", "us",
                median(lambda: q.from_dlpack(t), inner=2000) * 1e6, ref, False)
            row(f"torch.from_dlpack(qvalue) {label}", "us",
                median(lambda: torch.from_dlpack(val), inner=2000) * 1e6, ref, False)
            if hasattr(q, "torch"):
                row(f"q.torch.to_tensor {label}", "us",
                    median(lambda: q.torch.to_tensor(val), inner=2000) * 1e6, ref, False)
                row(f"q.torch.from_tensor {label}", "us",
                    median(lambda: q.torch.from_tensor(t), inner=2000) * 1e6, ref, False)
            del t
        del val, arr

    # Per-call overhead beside a bare pybind11 module doing the same trivial work.
    if peer is not None:
        pv = peer.value()
        row("qvalue.ndim (property)", "ns", median(lambda: a.ndim, inner=20000) * 1e9,
            {"pybind11 property": median(lambda: pv.ndim, inner=20000) * 1e9}, False)
        row("qvalue.numel() (method)", "ns", median(lambda: a.numel(), inner=20000) * 1e9,
            {"pybind11 method": median(lambda: pv.numel(), inner=20000) * 1e9}, False)
        row("q.is_initialized() (function)", "ns",
            median(lambda: q.is_initialized(), inner=20000) * 1e9,
            {"pybind11 function": median(lambda: peer.noop(None), inner=20000) * 1e9}, False)
    else:
        peers = {"ndarray.ndim": median(lambda: a_np.ndim, inner=20000) * 1e9}
        row("qvalue.ndim call", "ns", median(lambda: a.ndim, inner=20000) * 1e9, peers, False)

    print(f"isthmus Python ops bench ({'quick' if QUICK else 'full'}; torch "
          f"{'present' if torch is not None else 'absent'}; pybind11 peer "
          f"{'present' if peer is not None else 'absent'}; median of {REPS})")
    print(f"{'op':28} {'isthmus':>12}  {'peers':40} {'ratio':>8}")
    for name, unit, ours, peers, ratio, hb in rows:
        ps = ", ".join(f"{k} {v:.3g}" for k, v in peers.items())
        print(f"{name:28} {ours:9.3g} {unit:>3}  {ps:40} {ratio:7.2f}x"
              f"{'' if hb else ' (time: lower is better)'}")
    q.destroy()


if __name__ == "__main__":
    main()
