"""Row sums in a kernel: a running sum against ip::row_sum's fixed pairwise order.

A kernel that sums a row with `s += x(i, j)` adds in order: without fast math the compiler may
not reorder the additions, so the loop stays scalar and waits on each add. ip::row_sum(x, i)
adds in a fixed pairwise order that vectorises without fast math, rounds like NumPy's pairwise
sum, and gives the same bits for every stride and thread count.

    python examples/row_sums.py [rows cols]      (default 2048 4096)
"""
import sys

import numpy as np

import isthmus as q
from best_time import best_ms  # examples/best_time.py

SRC = r"""
namespace ip = isthmus::plugin;
ISTHMUS_PLUGIN(row_sums, m) {
    m.kernel("running_sum",
             [](ip::view<const float, 2> x, ip::view<float, 1> out, int64_t i) {
                 float s = 0.0f;
                 for (int64_t j = 0; j < x.size(1); ++j) s += x(i, j);
                 out(i) = s;
             },
             {"x", "out"})
        .at_position({"x", "out"});
    m.kernel("pairwise_sum",
             [](ip::view<const float, 2> x, ip::view<float, 1> out, int64_t i) {
                 out(i) = ip::row_sum(x, i);
             },
             {"x", "out"})
        .at_position({"x", "out"});
}
"""


def main():
    rows, cols = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) > 2 else (2048, 4096)
    q.init("cpu")
    mod = q.compile_string("row_sums", SRC)
    q.wait_for_compiles()  # time the -O3 build, not the quick one it returned first
    x = np.random.default_rng(0).random((rows, cols), dtype=np.float32)
    exact = x.sum(axis=1, dtype=np.float64)
    out = {}
    for name in ("running_sum", "pairwise_sum"):
        y = np.zeros(rows, np.float32)
        q.parallel_do(rows, x, y, getattr(mod, name))
        out[name] = y
        err = float(np.max(np.abs(y - exact) / exact))
        ms = best_ms(lambda: q.parallel_do(rows, x, y, getattr(mod, name)))
        print(f"{name:13s} {ms:7.2f} ms   largest relative error {err:.2e}")
    ms = best_ms(lambda: np.sum(x, axis=1))
    print(f"{'numpy sum':13s} {ms:7.2f} ms")
    # the same bits for a column-major copy (a strided row) and on one thread
    y = np.zeros(rows, np.float32)
    q.parallel_do(rows, np.asfortranarray(x), y, mod.pairwise_sum)
    assert np.array_equal(y, out["pairwise_sum"]), "a strided row changed the bits"
    with q.deterministic():
        q.parallel_do(rows, x, y, mod.pairwise_sum)
    assert np.array_equal(y, out["pairwise_sum"]), "one thread changed the bits"
    np.testing.assert_allclose(out["pairwise_sum"], exact, rtol=1e-5)
    print("row_sums: OK")


if __name__ == "__main__":
    main()
