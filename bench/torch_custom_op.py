"""Custom-op call overhead: a plugin function as a torch.library custom op (q.torch.custom_op)
beside a plain torch op, torch's own custom_op with a Python body, and the eager plugin call.

Usage (after a build):
    PYTHONPATH=build/python python3 bench/torch_custom_op.py [--reps N] [--calls N]

Every case calls an op on small tensors (16 float32 elements: the call, not the arithmetic, is
timed) `--calls` times in a loop; the figure is the median over `--reps` runs of the time per
call, the runs interleaved across cases. Ratios are over torch's own custom_op (the
target: isthmus's custom op at most as slow as it). CPU tensors: a plugin function runs on the
host. Not a test: timings never gate anything.
"""
import argparse
import statistics
import time

import torch

import isthmus as q

SRC = r"""
namespace ip = isthmus::plugin;
static ip::tensor<float, 1> affine(ip::view<const float, 1> x, double a) {
    ip::tensor<float, 1> y({x.size(0)});
    for (int64_t i = 0; i < x.size(0); ++i) y(i) = static_cast<float>(a * x(i) + 1);
    return y;
}
ISTHMUS_PLUGIN(bench_ops, m) { m.def("affine", &affine, {"x", "a"}); }
"""


def per_call(fn, calls):
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t) / calls


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--calls", type=int, default=2000)
    args = ap.parse_args()

    q.init("cpu")
    q.compile_string("bench_ops", SRC)
    affine_op = q.torch.custom_op(q.affine, fake="x")

    @torch.library.custom_op("bench_peer::affine", mutates_args=())
    def torch_affine(x: torch.Tensor, a: float) -> torch.Tensor:
        return x * a + 1

    @torch_affine.register_fake
    def _(x, a):
        return torch.empty_like(x)

    device = "cpu"
    x = torch.linspace(0, 1, 16)
    cases = {
        "torch op (x * a + 1)": lambda: torch.add(torch.mul(x, 2.0), 1),
        "torch custom_op, Python body": lambda: torch_affine(x, 2.0),
        "isthmus custom op (q.torch.custom_op)": lambda: affine_op(x, 2.0),
        "eager plugin call (q.affine -> qvalue)": lambda: q.affine(x, 2.0),
    }
    for fn in cases.values():  # warm-up, and the same result everywhere
        fn()
    torch.testing.assert_close(affine_op(x, 2.0), torch_affine(x, 2.0))
    times = {k: [] for k in cases}
    for _ in range(args.reps):
        for k, fn in cases.items():
            times[k].append(per_call(fn, args.calls))
    ref = statistics.median(times["torch custom_op, Python body"])
    print(f"call overhead on {device}, 16 float32 elements, median of {args.reps} x "
          f"{args.calls} calls (torch {torch.__version__})")
    print(f"{'case':42s} {'us/call':>9s} {'vs torch custom_op':>19s}")
    for k, ts in times.items():
        m = statistics.median(ts)
        print(f"{k:42s} {m * 1e6:9.2f} {m / ref:18.2f}x")


if __name__ == "__main__":
    main()
