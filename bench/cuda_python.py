"""GPU benchmark from Python: isthmus on CUDA beside PyTorch CUDA in one run, as ratios.

Usage (on a machine with an NVIDIA GPU, after a CUDA build):
    PYTHONPATH=build/python python3 bench/cuda_python.py [--quick]
Rows: elementwise add GB/s beside a device-to-device copy and torch's add (target: 90% of the
copy), 8192 float32 and bf16-input matmul beside torch (target 0.95x), the host time of a
parallel_do launch from Python beside a small torch op (target: no slower), CPU<->GPU
transfers beside torch. Device work is timed with a synchronisation on both sides, median of
several runs after a warm-up, on random data. Not a test: timings never gate CI.
"""
import sys
import time

import numpy as np

import isthmus as q

QUICK = "--quick" in sys.argv
REPS = 5 if QUICK else 15


def median(f, sync, reps=REPS, inner=1):
    f()
    sync()
    ts = []
    for _ in range(reps):
        sync()
        t0 = time.perf_counter()
        for _ in range(inner):
            f()
        sync()
        ts.append((time.perf_counter() - t0) / inner)
    ts.sort()
    return ts[len(ts) // 2]


rows = []


def row(name, unit, ours, peer_name, peer, higher_better=True):
    ratio = ours / peer if higher_better else peer / ours
    rows.append((name, unit, ours, peer_name, peer, ratio))


def main():
    if not q.cuda_available():
        print("no CUDA:", q.cuda_unavailable_reason())
        return 0
    try:
        import torch
    except ImportError:
        print("PyTorch is not installed: nothing to compare with")
        return 0
    if not torch.cuda.is_available():
        print("torch sees no CUDA device")
        return 0
    q.init("cuda")
    dev = torch.device("cuda:0")
    gpu = torch.cuda.get_device_name(0)

    def qsync():
        q.cuda_synchronize()

    def tsync():
        torch.cuda.synchronize()

    def both():
        q.cuda_synchronize()
        torch.cuda.synchronize()

    rng = np.random.default_rng(0)

    # ---- elementwise add, GB/s counting bytes read and written
    n = (1 << 24) if QUICK else (1 << 28)
    host = rng.standard_normal(n, dtype=np.float32)
    qa = q.to(host, "cuda", copy=True)
    qb = q.to(host[::-1].copy(), "cuda", copy=True)
    ta = torch.from_numpy(host).to(dev)
    tb = torch.from_numpy(host[::-1].copy()).to(dev)
    tc = torch.empty_like(ta)
    out = [None]

    def qadd():
        out[0] = qa + qb

    t_q = median(qadd, qsync)
    assert out[0].device == "cuda:0", out[0].device
    t_t = median(lambda: torch.add(ta, tb), tsync)
    t_copy = median(lambda: tc.copy_(ta), tsync)
    gb = 3 * n * 4 / 1e9
    row(f"add float32 {n}", "GB/s", gb / t_q, "D2D copy", 2 * n * 4 / 1e9 / t_copy)
    row(f"add float32 {n}", "GB/s", gb / t_q, "torch add", gb / t_t)
    err = np.abs(np.asarray(out[0])[: 1 << 20] - (host + host[::-1])[: 1 << 20]).max()
    assert err == 0, err
    del qa, qb, ta, tb, tc, out[0]

    # ---- matmul 8192: float32 and bf16 inputs
    m = 2048 if QUICK else 8192
    x = rng.standard_normal((m, m), dtype=np.float32)
    y = rng.standard_normal((m, m), dtype=np.float32)
    flop = 2.0 * m**3 / 1e9
    qx, qy = q.to(x, "cuda", copy=True), q.to(y, "cuda", copy=True)
    tx, ty = torch.from_numpy(x).to(dev), torch.from_numpy(y).to(dev)
    prev_tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False  # full float32, as isthmus computes
    t_q = median(lambda: qx @ qy, qsync, reps=max(3, REPS // 3))
    t_t = median(lambda: tx @ ty, tsync, reps=max(3, REPS // 3))
    torch.backends.cuda.matmul.allow_tf32 = prev_tf32
    row(f"matmul float32 {m}", "GFLOP/s", flop / t_q, "torch", flop / t_t)
    try:
        qxb, qyb = qx.astype("bfloat16"), qy.astype("bfloat16")
        txb, tyb = tx.bfloat16(), ty.bfloat16()
        t_q = median(lambda: qxb @ qyb, qsync, reps=max(3, REPS // 3))
        t_t = median(lambda: txb @ tyb, tsync, reps=max(3, REPS // 3))
        row(f"matmul bf16 inputs {m}", "GFLOP/s", flop / t_q, "torch", flop / t_t)
    except Exception as e:  # bf16 matmul on the GPU may not be there yet
        print(f"matmul bf16: n/a ({type(e).__name__}: {e})")
    del qx, qy, tx, ty

    # ---- sort: argsort of 16M float32 (one row) and of 4096 rows of 4096, Melements/s
    for shape in ([(1 << 22)] if QUICK else [(1 << 24)]) + [(4096, 4096)]:
        xs = rng.standard_normal(shape, dtype=np.float32)
        qs = q.to(xs, "cuda", copy=True)
        ts_ = torch.from_numpy(xs).to(dev)
        res = [None]

        def qsort():
            res[0] = q.argsort(qs)

        t_q = median(qsort, qsync, reps=max(3, REPS // 3))
        assert res[0].device == "cuda:0", res[0].device  # sorted on the GPU (Note [gpu sort])
        t_t = median(lambda: torch.sort(ts_, stable=True), tsync, reps=max(3, REPS // 3))
        melems = xs.size / 1e6
        label = "x".join(map(str, shape)) if isinstance(shape, tuple) else str(shape)
        row(f"argsort float32 {label} (stable)", "Melem/s", melems / t_q, "torch", melems / t_t)
        del qs, ts_, res[0]

    # ---- launch overhead: parallel_do of a compiled CUDA kernel vs a small torch op
    try:
        mod = q.compile_string(
            "bench_cuda_kernel",
            """
            #include <isthmus/plugin.hpp>
            namespace ip = isthmus::plugin;
            ISTHMUS_PLUGIN(bench_cuda_kernel, m) {
                m.kernel("add_one", [] __host__ __device__ (ip::view<float, 1> x, int64_t i) {
                    x(i) += 1.0f;
                }, {"x"});
            }
            """,
            lang="cuda",
        )
        small = q.to(np.zeros(1024, np.float32), "cuda", copy=True)
        tsmall = torch.zeros(1024, device=dev)
        inner = 200
        t_q = median(lambda: q.parallel_do((1024,), small, mod.add_one), qsync, inner=inner)
        t_t = median(lambda: tsmall.add_(1.0), tsync, inner=inner)
        row("launch: parallel_do 1k vs torch add_", "us", t_q * 1e6, "torch", t_t * 1e6, False)
    except Exception as e:
        print(f"parallel_do launch: n/a ({type(e).__name__}: {e})")

    # ---- transfers, GB/s
    nt = (1 << 24) if QUICK else (1 << 26)
    h = rng.standard_normal(nt, dtype=np.float32)
    t_q = median(lambda: q.to(h, "cuda", copy=True), both, reps=max(3, REPS // 3))
    t_t = median(lambda: torch.from_numpy(h).to(dev), both, reps=max(3, REPS // 3))
    row(f"host->device {nt * 4 >> 20} MiB", "GB/s", nt * 4 / 1e9 / t_q, "torch", nt * 4 / 1e9 / t_t)
    qd = q.to(h, "cuda", copy=True)
    td = torch.from_numpy(h).to(dev)
    t_q = median(lambda: np.array(qd * 1.0), both, reps=max(3, REPS // 3))
    t_t = median(lambda: (td * 1.0).cpu(), both, reps=max(3, REPS // 3))
    row(f"device->host {nt * 4 >> 20} MiB (incl. a x1 op)", "GB/s", nt * 4 / 1e9 / t_q, "torch",
        nt * 4 / 1e9 / t_t)

    print(f"GPU: {gpu}; torch {torch.__version__}; isthmus {q.__version__}")
    print(f"{'measure':44} {'unit':8} {'isthmus':>10} {'peer':>12} {'peer value':>11} {'ratio':>7}")
    for name, unit, ours, pname, peer, ratio in rows:
        print(f"{name:44} {unit:8} {ours:10.1f} {pname:>12} {peer:11.1f} {ratio:6.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
