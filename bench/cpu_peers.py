"""CPU peer benchmark: isthmus beside NumPy and PyTorch, one process, large elementwise ops,
math functions, casts, reductions and sorts.

Usage (after a build):
    PYTHONPATH=build/python python3 bench/cpu_peers.py [--quick] [--only NAME] [--reps N]
        [--threads N] [--cpu] [--hot]

--quick     4M-element cases only, fewer runs (a smoke run of a minute or so)
--only NAME run the cases whose name contains NAME (repeatable; e.g. --only sum --only exp)
--reps N    timed runs per library and case (default 11, --quick 5)
--threads N set the OpenMP threads of isthmus (and of torch, through torch.set_num_threads)
--cpu       time the calling thread's CPU time instead of wall time (needs --threads 1); on a
            loaded machine this compares the kernels without the scheduler's noise
--hot       time each library's runs back to back instead of interleaved: a 4M-element input
            stays in the last-level cache, so the figure is the kernel's speed, not memory's

All three libraries read the same memory (zero-copy views of one NumPy array), so none finds
its input in the cache because another library just read a different copy. Each case times
one call per run: a warm-up call, then N runs with the libraries interleaved
(isthmus, NumPy, torch, isthmus, ...), so that a burst of load from other processes hits all
of them alike; the figure is the median wall time. Every call makes a fresh output, as
`np.exp(a)` does. The ratio column is isthmus's time over the faster peer's (below 1: isthmus
is faster), with that peer named. Not a test: timings never gate anything.
"""
import argparse
import ctypes
import os
import statistics
import sys
import time

import numpy as np

import isthmus as q

try:
    import torch
except ImportError:  # PyTorch is optional: its column stays empty
    torch = None

UNARY = ["exp", "exp2", "log", "log2", "log10", "expm1", "log1p", "sqrt", "cbrt", "sin", "cos",
         "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf",
         "erfc"]
# NumPy's spelling where it differs from isthmus's / torch's; None: NumPy has no such function.
NP_NAME = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "atan2": "arctan2",
           "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh", "erf": None, "erfc": None}
# torch's spelling where it differs; None: torch has none.
TORCH_NAME = {"cbrt": None}


def omp_threads_of(libname):
    """omp_get_max_threads() of the loaded OpenMP runtime whose path contains `libname`."""
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if libname in line and "/" in line}
    out = []
    for p in sorted(paths):
        try:
            out.append((p, ctypes.CDLL(p).omp_get_max_threads()))
        except (OSError, AttributeError):
            pass
    return out


class Bench:
    def __init__(self, reps, only, clock, hot=False):
        self.reps = reps
        self.clock = clock
        self.hot = hot
        self.only = only
        self.rows = []

    def wanted(self, name):
        return not self.only or any(s in name for s in self.only)

    def case(self, name, fns):
        """fns: {"isthmus": f, "numpy": f, "torch": f} (a missing or None entry is skipped)."""
        if not self.wanted(name):
            return
        fns = {k: f for k, f in fns.items() if f is not None}
        for f in fns.values():  # warm-up: first-touch, lazy initialisation, thread start
            f()
        times = {k: [] for k in fns}
        if self.hot:
            for k, f in fns.items():
                for _ in range(3):
                    f()
                for _ in range(self.reps):
                    t0 = self.clock()
                    f()
                    times[k].append(self.clock() - t0)
        for _ in range(0 if self.hot else self.reps):
            for k, f in fns.items():
                time.sleep(0.002)  # let the previous library's spinning threads go idle
                t0 = self.clock()
                f()
                times[k].append(self.clock() - t0)
        med = {k: statistics.median(v) for k, v in times.items()}
        peers = {k: v for k, v in med.items() if k != "isthmus"}
        best = min(peers, key=peers.get) if peers else None
        ratio = med["isthmus"] / peers[best] if best else float("nan")
        self.rows.append((name, med, best, ratio))
        self.print_row(self.rows[-1])

    @staticmethod
    def header():
        print(f"{'case':34s} {'isthmus':>10s} {'numpy':>10s} {'torch':>10s}  {'ratio':>6s} vs")

    @staticmethod
    def print_row(row):
        name, med, best, ratio = row
        cell = lambda k: f"{med[k] * 1e3:8.3f}ms" if k in med else f"{'-':>10s}"
        print(f"{name:34s} {cell('isthmus')} {cell('numpy')} {cell('torch')}  {ratio:6.2f} {best}",
              flush=True)


def T(f):
    """The torch entry of a case: f, or None when PyTorch is absent."""
    return f if torch is not None else None


def arrays(n, dtype, rng, lo=0.01, hi=0.99):
    """The same memory for the three libraries: a NumPy array and zero-copy isthmus and torch views
    (one copy: a case reads the same cached data whichever library runs)."""
    a = (rng.random(n, dtype=np.float64) * (hi - lo) + lo).astype(dtype)
    return a, q.asvalue(a), (torch.from_numpy(a) if torch is not None else None)


def run_math(b, rng, n):
    tag = f"{n // 1_000_000}M"
    for dt in (np.float32, np.float64):
        dn = np.dtype(dt).name
        if not any(b.wanted(f"{op} {tag} {dn}") for op in UNARY + ["atan2", "pow"]):
            continue
        a_np, a_q, a_t = arrays(n, dt, rng)
        c_np, c_q, c_t = arrays(n, dt, rng, 0.5, 2.0)
        for op in UNARY:
            # acosh is defined from 1 up: its inputs are c (0.5 to 2) + 0.5
            x_np, x_q, x_t = (c_np + 0.5, c_q + 0.5, c_t + 0.5 if c_t is not None else None) \
                if op == "acosh" else (a_np, a_q, a_t)
            np_name, t_name = NP_NAME.get(op, op), TORCH_NAME.get(op, op)
            npf, qf = getattr(np, np_name) if np_name else None, getattr(q, op)
            tf = getattr(torch, t_name) if torch is not None and t_name else None
            b.case(f"{op} {tag} {dn}", {
                "isthmus": lambda: qf(x_q),
                "numpy": (lambda: npf(x_np)) if npf else None,
                "torch": (lambda: tf(x_t)) if tf else None})
        b.case(f"atan2 {tag} {dn}",
               {"isthmus": lambda: q.atan2(a_q, c_q), "numpy": lambda: np.arctan2(a_np, c_np),
                "torch": T(lambda: torch.atan2(a_t, c_t))})
        b.case(f"pow {tag} {dn}",
               {"isthmus": lambda: q.pow(c_q, a_q), "numpy": lambda: np.power(c_np, a_np),
                "torch": T(lambda: torch.pow(c_t, a_t))})
        del a_np, a_q, a_t, c_np, c_q, c_t


def run_elementwise(b, rng, n):
    tag = f"{n // 1_000_000}M"
    names = ["add", "mul", "where", "clamp", "cast"]
    if not any(b.wanted(f"{s} {tag}") for s in names):
        return
    a_np, a_q, a_t = arrays(n, np.float32, rng)
    c_np, c_q, c_t = arrays(n, np.float32, rng)
    m_np = a_np > 0.5
    m_q = q.asvalue(m_np)
    m_t = torch.from_numpy(m_np) if torch is not None else None
    b.case(f"add {tag} float32", {"isthmus": lambda: a_q + c_q, "numpy": lambda: a_np + c_np,
                                  "torch": T(lambda: a_t + c_t)})
    b.case(f"mul {tag} float32", {"isthmus": lambda: a_q * c_q, "numpy": lambda: a_np * c_np,
                                  "torch": T(lambda: a_t * c_t)})
    b.case(f"where {tag} float32",
           {"isthmus": lambda: q.where(m_q, a_q, c_q), "numpy": lambda: np.where(m_np, a_np, c_np),
            "torch": T(lambda: torch.where(m_t, a_t, c_t))})
    b.case(f"clamp {tag} float32",
           {"isthmus": lambda: q.clip(a_q, 0.2, 0.8), "numpy": lambda: np.clip(a_np, 0.2, 0.8),
            "torch": T(lambda: torch.clamp(a_t, 0.2, 0.8))})
    b.case(f"cast {tag} float32->float64",
           {"isthmus": lambda: a_q.astype("float64"), "numpy": lambda: a_np.astype(np.float64),
            "torch": T(lambda: a_t.to(torch.float64))})
    del c_np, c_q, c_t, m_np, m_q, m_t
    d_np, d_q, d_t = arrays(n, np.float64, rng)
    b.case(f"cast {tag} float64->float32",
           {"isthmus": lambda: d_q.astype("float32"), "numpy": lambda: d_np.astype(np.float32),
            "torch": T(lambda: d_t.to(torch.float32))})
    del d_np, d_q, d_t
    i_np = rng.integers(-1000, 1000, n, dtype=np.int32)
    i_q = q.asvalue(i_np)
    i_t = torch.from_numpy(i_np) if torch is not None else None
    b.case(f"cast {tag} int32->float32",
           {"isthmus": lambda: i_q.astype("float32"), "numpy": lambda: i_np.astype(np.float32),
            "torch": T(lambda: i_t.to(torch.float32))})


def run_reductions(b, rng, n, dtypes):
    tag = f"{n // 1_000_000}M"
    for dt in dtypes:
        dn = np.dtype(dt).name
        if not any(b.wanted(f"{s} {tag} {dn}") for s in ("sum", "mean", "min", "max", "var",
                                                         "std", "sum axis=0", "sum axis=1")):
            continue
        a_np, a_q, a_t = arrays(n, dt, rng)
        b.case(f"sum {tag} {dn}", {"isthmus": lambda: q.sum(a_q), "numpy": lambda: np.sum(a_np),
                                   "torch": T(lambda: torch.sum(a_t))})
        b.case(f"mean {tag} {dn}", {"isthmus": lambda: q.mean(a_q),
                                    "numpy": lambda: np.mean(a_np),
                                    "torch": T(lambda: torch.mean(a_t))})
        b.case(f"min {tag} {dn}", {"isthmus": lambda: q.min(a_q), "numpy": lambda: np.min(a_np),
                                   "torch": T(lambda: torch.min(a_t))})
        b.case(f"max {tag} {dn}", {"isthmus": lambda: q.max(a_q), "numpy": lambda: np.max(a_np),
                                   "torch": T(lambda: torch.max(a_t))})
        b.case(f"var {tag} {dn}",
               {"isthmus": lambda: q.var(a_q), "numpy": lambda: np.var(a_np),
                "torch": T(lambda: torch.var(a_t, correction=0))})
        b.case(f"std {tag} {dn}",
               {"isthmus": lambda: q.std(a_q), "numpy": lambda: np.std(a_np),
                "torch": T(lambda: torch.std(a_t, correction=0))})
        # A column reduction (axis 0 of a C-contiguous matrix) and a row reduction (axis 1).
        r = 1000
        a2_np = a_np.reshape(r, n // r)
        a2_q, a2_t = a_q.reshape(r, n // r), (a_t.reshape(r, n // r) if torch is not None else None)
        b.case(f"sum axis=0 {tag} {dn}",
               {"isthmus": lambda: q.sum(a2_q, axis=0), "numpy": lambda: np.sum(a2_np, axis=0),
                "torch": T(lambda: torch.sum(a2_t, dim=0))})
        b.case(f"sum axis=1 {tag} {dn}",
               {"isthmus": lambda: q.sum(a2_q, axis=1), "numpy": lambda: np.sum(a2_np, axis=1),
                "torch": T(lambda: torch.sum(a2_t, dim=1))})
        del a_np, a_q, a_t, a2_np, a2_q, a2_t


def run_sorting(b, rng, n):
    """sort/argsort of one 1M-element row and of 1000 rows of 1000, beside NumPy's default
    (unstable) and stable sorts and torch's stable sort (isthmus's sort is always stable)."""
    tag = f"{n // 1_000_000}M"
    for dt in (np.float32, np.float64, np.int32):
        dn = np.dtype(dt).name
        if not any(b.wanted(f"{s} {tag} {dn}") for s in ("sort", "argsort", "sort rows")):
            continue
        a_np = (rng.standard_normal(n) * 1000).astype(dt)
        a_q = q.asvalue(a_np)
        a_t = torch.from_numpy(a_np) if torch is not None else None
        for name, qf, nf, tf in (("sort", q.sort, np.sort, torch and torch.sort),
                                 ("argsort", q.argsort, np.argsort, torch and torch.argsort)):
            b.case(f"{name} {tag} {dn}",
                   {"isthmus": lambda qf=qf: qf(a_q), "numpy": lambda nf=nf: nf(a_np),
                    "torch": T(lambda tf=tf: tf(a_t, stable=True))})
            b.case(f"{name} stable {tag} {dn}",
                   {"isthmus": lambda qf=qf: qf(a_q),
                    "numpy": lambda nf=nf: nf(a_np, kind="stable"),
                    "torch": T(lambda tf=tf: tf(a_t, stable=True))})
        r_np, r_q = a_np.reshape(1000, n // 1000), a_q.reshape(1000, n // 1000)
        r_t = a_t.reshape(1000, n // 1000) if torch is not None else None
        b.case(f"sort rows {tag} {dn}",
               {"isthmus": lambda: q.sort(r_q, 1), "numpy": lambda: np.sort(r_np, 1),
                "torch": T(lambda: torch.sort(r_t, dim=1, stable=True))})
        del a_np, a_q, a_t, r_np, r_q, r_t


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--reps", type=int, default=0)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--hot", action="store_true")
    args = ap.parse_args()
    if args.cpu and args.threads != 1:
        ap.error("--cpu measures one thread: use it with --threads 1")
    reps = args.reps or (5 if args.quick else 11)
    q.init("cpu")
    if args.threads:
        for path, _ in omp_threads_of("gomp"):
            ctypes.CDLL(path).omp_set_num_threads(args.threads)
        if torch is not None:
            torch.set_num_threads(args.threads)
    print(f"isthmus {getattr(q, '__version__', '?')}, NumPy {np.__version__}, torch "
          f"{torch.__version__ if torch is not None else 'absent'}; {os.cpu_count()} CPUs; "
          f"median of {reps} runs after a warm-up, "
          f"{'thread CPU' if args.cpu else 'wall'} time per call"
          f"{', each library back to back (--hot)' if args.hot else ''}")
    for path, nt in omp_threads_of("gomp"):
        print(f"OpenMP runtime {path}: omp_get_max_threads() = {nt} (isthmus's threads"
              f"{' and torch' if torch is not None else ''}'s if it is the only one)")
    if torch is not None:
        print(f"torch.get_num_threads() = {torch.get_num_threads()}; NumPy's ufuncs and "
              "reductions run on one thread")
    print(f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '(unset)')} "
          f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(unset)')}")
    b = Bench(reps, args.only, time.thread_time if args.cpu else time.perf_counter, args.hot)
    Bench.header()
    rng = np.random.default_rng(0)
    sizes = [4_000_000] if args.quick else [4_000_000, 50_000_000]
    run_math(b, rng, 4_000_000)
    for n in sizes:
        run_elementwise(b, rng, n)
    for n in sizes:
        run_reductions(b, rng, n, (np.float32, np.float64))
    run_sorting(b, rng, 1_000_000)
    if not b.rows:
        print("no case matches", args.only, file=sys.stderr)
        return 1
    slower = [r for r in b.rows if r[3] > 1.05]
    print(f"\n{len(b.rows)} cases; isthmus slower than the faster peer by more than 5% in "
          f"{len(slower)}: {', '.join(r[0] for r in slower) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
