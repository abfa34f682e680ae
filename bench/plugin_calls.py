"""Plugin call overhead and compile_string timings, side by side with a bare pybind11 module.

    PYTHONPATH=build/python python3 bench/plugin_calls.py

Measures, in one process: a Python -> plugin function call (add(double, double) -> double,
and a no-argument call) against the same lambdas bound by a bare pybind11 module built here;
compile_string of a small kernel cold (empty cache) and cached (a fresh process loading from
the cache); prints ratios. Never a test.
"""
import os
import pathlib
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import time
import timeit

import isthmus as q

SRC = """
namespace ip = isthmus::plugin;
ISTHMUS_PLUGIN(bench_calls, m) {
    m.def("bench_add", [](double a, double b) { return a + b; }, {"a", "b"});
    m.def("bench_noop", [] {});
    m.kernel("bench_scale", [](ip::view<const float, 1> x, ip::view<float, 1> y, float s,
                               int64_t i) { y(i) = s * x(i); }, {"x", "y", "s"});
}
"""

PEER = """
#include <pybind11/pybind11.h>
PYBIND11_MODULE(bench_peer, m) {
    m.def("add", [](double a, double b) { return a + b; });
    m.def("noop", [] {});
}
"""


def build_peer(tmp):
    src = pathlib.Path(tmp) / "peer.cpp"
    src.write_text(PEER)
    inc = subprocess.check_output([sys.executable, "-m", "pybind11", "--includes"], text=True).split()
    out = pathlib.Path(tmp) / ("bench_peer" + sysconfig.get_config_var("EXT_SUFFIX"))
    subprocess.check_call([os.environ.get("CXX", "g++"), "-O3", "-shared", "-fPIC", "-std=c++20",
                           *inc, str(src), "-o", str(out)])
    sys.path.insert(0, tmp)
    import bench_peer  # noqa: E402

    return bench_peer


def best_ns(stmt, number=200000, repeat=7):
    return min(timeit.repeat(stmt, number=number, repeat=repeat)) / number * 1e9


def main():
    q.init("cpu")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["ISTHMUS_CACHE_DIR"] = str(pathlib.Path(tmp) / "cache")
        t0 = time.perf_counter()
        mod = q.compile_string("bench_calls", SRC)
        cold = time.perf_counter() - t0
        code = textwrap.dedent(f"""
            import time, isthmus as q
            q.init("cpu")
            t0 = time.perf_counter()
            q.compile_string("bench_calls", {SRC!r})
            print(time.perf_counter() - t0)
        """)
        cached = min(float(subprocess.check_output([sys.executable, "-c", code], text=True))
                     for _ in range(5))
        peer = build_peer(tmp)

        add, noop = mod.bench_add, mod.bench_noop
        rows = [
            ("add(1.5, 2.5) ns/call", best_ns(lambda: add(1.5, 2.5)),
             best_ns(lambda: peer.add(1.5, 2.5))),
            ("noop() ns/call", best_ns(lambda: noop()), best_ns(lambda: peer.noop())),
        ]
        print(f"{'call':32}{'plugin':>12}{'pybind11':>12}{'ratio':>10}")
        for name, a, b in rows:
            print(f"{name:32}{a:10.1f}ns{b:10.1f}ns{a / b:9.2f}x")
        print(f"compile_string cold (empty cache): {cold * 1e3:8.1f} ms")
        print(f"compile_string cached, new process: {cached * 1e3:8.2f} ms")


if __name__ == "__main__":
    main()
