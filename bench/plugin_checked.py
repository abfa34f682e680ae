"""The cost of checked mode on plugin kernels (docs/plugins.md, "Checked mode"). Never a test.

    PYTHONPATH=build/python python3 bench/plugin_checked.py [--base REV] [--threads N]

Builds the same kernels twice with the flags compile_string uses (g++ -O3 -march=native): once
against the plugin headers of git revision REV (default: the last commit before checked mode
existed) and once against this tree's, loads both into one process (which also shows that a
plugin built against the older header still loads and runs), and times parallel_do on the CPU:

  before   the older header (no checked-mode flag at all);
  normal   this header, normal mode (the flag exists, the launcher picks the unchecked loop);
  checked  this header inside `with q.checked():` (every unchecked view access tested).

Prints the best of several runs in ns per position and the ratios normal/before (the cost of
the flag when off) and checked/normal (the cost of checked mode). OMP threads: --threads
(default 1, the steadiest figures).
"""
import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

SRC = r"""
#include <isthmus/plugin.hpp>
namespace ip = isthmus::plugin;
ISTHMUS_PLUGIN(bench_checked_SUFFIX, m) {
    // 1-d, one read and one write per position: vectorisable, memory-bound when large.
    m.kernel("scale_SUFFIX", [](ip::view<const float, 1> x, ip::view<float, 1> y, float s,
                                int64_t i) { y(i) = s * x(i); }, {"x", "y", "s"});
    // 2-d 5-point stencil over the interior: five reads and one write per position.
    m.kernel("stencil_SUFFIX", [](ip::view<const float, 2> x, ip::view<float, 2> y,
                                  ip::ivec2 p) {
        const int64_t i = p[0] + 1, j = p[1] + 1;
        y(i, j) = 0.5f * x(i, j) + 0.125f * (x(i - 1, j) + x(i + 1, j) + x(i, j - 1) + x(i, j + 1));
    }, {"x", "y"});
    // 2-d, strided input (a transposed view) and a position-vector access.
    m.kernel("axpb_SUFFIX", [](ip::view<const double, 2> x, ip::view<double, 2> y, double a,
                               double b, ip::ivec2 p) { y[p] = a * x[p] + b; },
             {"x", "y", "a", "b"});
    // Function calls: the scalar fast path, and a view argument (the generic path).
    m.def("add_SUFFIX", [](double a, double b) { return a + b; }, {"a", "b"});
    m.def("first_SUFFIX", [](ip::view<const double, 1> x) { return x(0); }, {"x"});
}
"""

ROOT = pathlib.Path(__file__).resolve().parents[1]
# The commit before checked mode (ISTHMUS_CALL_CHECKED) was added to the plugin headers.
DEFAULT_BASE = "ee9b08c~1"


def build(tmp, suffix, include):
    """Compiles the kernels against `include`; returns the .so path and the compile seconds."""
    src = pathlib.Path(tmp) / f"bench_checked_{suffix}.cpp"
    src.write_text(SRC.replace("SUFFIX", suffix))
    out = pathlib.Path(tmp) / f"bench_checked_{suffix}.so"
    t0 = time.perf_counter()
    subprocess.check_call([os.environ.get("CXX", "g++"), "-std=c++20", "-O3", "-march=native",
                           "-fPIC", "-shared", "-fvisibility=hidden", f"-I{include}", str(src),
                           "-o", str(out)])
    return str(out), time.perf_counter() - t0


def old_headers(tmp, rev):
    inc = pathlib.Path(tmp) / "old_include" / "isthmus"
    inc.mkdir(parents=True)
    for h in ("plugin.hpp", "plugin_abi.h"):
        text = subprocess.check_output(["git", "-C", str(ROOT), "show",
                                        f"{rev}:plugins/include/isthmus/{h}"], text=True)
        (inc / h).write_text(text)
    return str(inc.parent)


def best_ns(fn, positions, repeat):
    fn()  # warm up
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best / positions * 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default=DEFAULT_BASE)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=30)
    a = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(a.threads)

    import numpy as np
    import isthmus as q

    q.init("cpu")
    with tempfile.TemporaryDirectory() as tmp:
        path_b, cold_b = build(tmp, "before", old_headers(tmp, a.base))
        path_a, cold_a = build(tmp, "after", str(ROOT / "plugins" / "include"))
        before, after = q.import_native(path_b), q.import_native(path_a)

        rng = np.random.default_rng(0)
        cases = []
        for n in (1 << 14, 1 << 22):
            x = rng.standard_normal(n).astype(np.float32)
            y = np.zeros(n, np.float32)
            cases.append((f"scale 1-d n={n}", n,
                          lambda k, x=x, y=y, n=n: q.parallel_do(n, x, y, 2.0, k), "scale"))
        for h in (128, 2048):
            x = rng.standard_normal((h, h)).astype(np.float32)
            y = np.zeros((h, h), np.float32)
            cases.append((f"stencil 2-d {h}x{h}", (h - 2) ** 2,
                          lambda k, x=x, y=y, h=h: q.parallel_do((h - 2, h - 2), x, y, k),
                          "stencil"))
        x = rng.standard_normal((1024, 1024)).T  # strided
        y = np.zeros((1024, 1024))
        cases.append(("axpb 2-d 1024x1024 strided", 1024 * 1024,
                      lambda k, x=x, y=y: q.parallel_do((1024, 1024), x, y, 2.0, 1.0, k), "axpb"))

        print(f"OMP threads: {a.threads}; base revision: {a.base}; best of {a.repeat}")
        print(f"{'kernel':32}{'before':>10}{'normal':>10}{'checked':>10}"
              f"{'normal/before':>15}{'checked/normal':>16}   (ns per position)")
        for name, positions, run, kname in cases:
            kb = getattr(before, f"{kname}_before")
            ka = getattr(after, f"{kname}_after")
            # interleave the three so that drifts of a shared machine hit all alike
            tb, tn, tc = [], [], []
            for _ in range(3):
                tb.append(best_ns(lambda: run(kb), positions, a.repeat // 3))
                tn.append(best_ns(lambda: run(ka), positions, a.repeat // 3))
                with q.checked():
                    tc.append(best_ns(lambda: run(ka), positions, a.repeat // 3))
            b, n, c = min(tb), min(tn), min(tc)
            print(f"{name:32}{b:10.3f}{n:10.3f}{c:10.3f}{n / b:15.3f}{c / n:16.3f}")

        v = np.ones(4)
        calls = [("add(1.5, 2.5)", lambda f: f(1.5, 2.5), "add"),
                 ("first(x) (a view argument)", lambda f: f(v), "first")]
        print(f"{'function call':32}{'before':>10}{'normal':>10}{'checked':>10}"
              f"{'normal/before':>15}{'checked/normal':>16}   (ns per call)")
        for name, call, fname in calls:
            fb, fa = getattr(before, f"{fname}_before"), getattr(after, f"{fname}_after")
            tb, tn, tc = [], [], []
            for _ in range(3):
                tb.append(best_ns(lambda: [call(fb) for _ in range(1000)], 1000, a.repeat // 3))
                tn.append(best_ns(lambda: [call(fa) for _ in range(1000)], 1000, a.repeat // 3))
                with q.checked():
                    tc.append(best_ns(lambda: [call(fa) for _ in range(1000)], 1000,
                                      a.repeat // 3))
            b, n, c = min(tb), min(tn), min(tc)
            print(f"{name:32}{b:10.1f}{n:10.1f}{c:10.1f}{n / b:15.3f}{c / n:16.3f}")
        print(f"cold g++ compile of this plugin: {cold_b:.2f} s before, {cold_a:.2f} s now")


if __name__ == "__main__":
    main()
