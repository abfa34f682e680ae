"""Everyday ops beside NumPy and PyTorch: a sweep for gaps outside cpu_peers' list.

Usage (after a build):  PYTHONPATH=build/python python3 bench/everyday_ops.py [--only NAME]

4M-element inputs (float32 uniform in -2..2 or 0.5..2, int32/int16/uint8/int64 in -1000..1000,
float16), each op timed in one process for the three libraries: a warm-up call, then 11 calls
with 2 ms sleeps between them (the threads go idle as between a program's statements), median
wall time. The ratio is isthmus over the faster peer (below 1: isthmus is faster). Scalar
operands are Python numbers, as users write them (`a ** 2.0`, `x // 7`). Not a test.
"""
import argparse
import statistics
import time

import numpy as np

import isthmus as q

try:
    import torch
except ImportError:  # PyTorch is optional: its column stays empty
    torch = None


def median_ms(f):
    f()
    ts = []
    for _ in range(11):
        time.sleep(0.002)
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3


def cases():
    rng = np.random.default_rng(0)
    n = 4_000_000
    a = rng.uniform(-2, 2, n).astype(np.float32)
    b = rng.uniform(0.5, 2, n).astype(np.float32)
    h = a.astype(np.float16)
    ints = {dt: rng.integers(-1000, 1000, n).astype(dt)
            for dt in (np.int32, np.int16, np.uint8, np.int64)}
    T = (lambda x: torch.from_numpy(x)) if torch is not None else (lambda x: None)
    qa, qb, qh, ta, tb, th = (q.asvalue(a), q.asvalue(b), q.asvalue(h), T(a), T(b), T(h))
    yield "a / b", lambda: qa / qb, lambda: a / b, lambda: ta / tb
    yield "a * 2.0", lambda: qa * 2.0, lambda: a * 2.0, lambda: ta * 2.0
    yield "a > 0.5", lambda: qa > 0.5, lambda: a > 0.5, lambda: ta > 0.5
    yield "abs(a)", lambda: abs(qa), lambda: abs(a), lambda: abs(ta)
    yield "-a", lambda: -qa, lambda: -a, lambda: -ta
    yield "maximum(a, 0)", (lambda: q.maximum(qa, 0.0), lambda: np.maximum(a, 0.0),
                            lambda: torch.clamp_min(ta, 0.0))
    yield "floor(a)", lambda: q.floor(qa), lambda: np.floor(a), lambda: torch.floor(ta)
    yield "round(a)", lambda: q.round(qa), lambda: np.round(a), lambda: torch.round(ta)
    yield "a // b", lambda: qa // qb, lambda: a // b, lambda: ta // tb
    yield "a % b", lambda: qa % qb, lambda: a % b, lambda: torch.remainder(ta, tb)
    yield "sign(a)", lambda: q.sign(qa), lambda: np.sign(a), lambda: torch.sign(ta)
    yield "isnan(a)", lambda: q.isnan(qa), lambda: np.isnan(a), lambda: torch.isnan(ta)
    yield "argmax(a)", lambda: q.argmax(qa), lambda: np.argmax(a), lambda: torch.argmax(ta)
    yield "cumsum(a)", lambda: q.cumsum(qa), lambda: np.cumsum(a), lambda: torch.cumsum(ta, 0)
    yield "square(a)", lambda: q.square(qa), lambda: np.square(a), lambda: torch.square(ta)
    yield "exp(a) * b", (lambda: q.exp(qa) * qb, lambda: np.exp(a) * b,
                         lambda: torch.exp(ta) * tb)
    for e in (2.0, 3.0, 0.5, -1.0, 1.5):  # Note [pow by small exponents]
        yield f"b ** {e}", (lambda e=e: qb ** e, lambda e=e: b ** e, lambda e=e: tb ** e)
    # float16: Note [F16C conversions]
    yield "float32 -> float16", (lambda: qa.astype("float16"), lambda: a.astype(np.float16),
                                 lambda: ta.to(torch.float16))
    yield "float16 -> float32", (lambda: qh.astype("float32"), lambda: h.astype(np.float32),
                                 lambda: th.to(torch.float32))
    yield "float16 a + a", lambda: qh + qh, lambda: h + h, lambda: th + th
    yield "float16 exp", lambda: q.exp(qh), lambda: np.exp(h), lambda: torch.exp(th)
    yield "float16 sum", lambda: q.sum(qh), lambda: np.sum(h), lambda: torch.sum(th)
    # See Note [division by a scalar integer]
    for dt, x in ints.items():
        qx, tx = q.asvalue(x), T(x)
        name = np.dtype(dt).name
        yield f"{name} // 7", lambda qx=qx: qx // 7, lambda x=x: x // 7, lambda tx=tx: tx // 7
        yield f"{name} % 7", lambda qx=qx: qx % 7, lambda x=x: x % 7, lambda tx=tx: tx % 7
    yield "int32 ** 2", (lambda: q.asvalue(ints[np.int32]) ** 2, lambda: ints[np.int32] ** 2,
                         lambda: T(ints[np.int32]) ** 2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", default=[])
    args = ap.parse_args()
    q.init("cpu")
    print(f"isthmus {q.__version__}, NumPy {np.__version__}, "
          f"torch {torch.__version__ if torch is not None else '-'}; median of 11, wall time")
    print(f"{'case':20s} {'isthmus':>9s} {'numpy':>9s} {'torch':>9s}  ratio")
    for name, *fns in cases():  # name, f, f, f or name, (f, f, f)
        fq, fn, ft = fns[0] if len(fns) == 1 else fns
        if args.only and not any(s in name for s in args.only):
            continue
        tq, tn = median_ms(fq), median_ms(fn)
        tt = median_ms(ft) if torch is not None else float("inf")
        print(f"{name:20s} {tq:7.2f}ms {tn:7.2f}ms {tt:7.2f}ms  {tq / min(tn, tt):5.2f}",
              flush=True)


if __name__ == "__main__":
    main()
