"""Autograd costs beside torch's, in CPU time of the calling thread, printed as ratios.

Usage (after a build):  PYTHONPATH=build/python python3 bench/autograd.py
Rows: a 1k-element a * b + c with recording on and off (the cost of recording, and of carrying
autograd state when nothing requires grad), the best of 200 interleaved rounds; and one training
step (forward, backward, SGD) of small MLPs, isthmus beside torch on the same data (float32), best
of 7 runs. Not a test.
"""
import time

import numpy as np

import isthmus as q
from small_ops_cpu import best_us  # the same clock and method as the small-op table

try:
    import torch
except ImportError:  # PyTorch is optional: its rows are skipped
    torch = None


def interleaved_best_us(fs, inner=2000, rounds=200):
    """Best per-call thread CPU time of each f in `fs`, in microseconds, over `rounds` rounds that
    run every f in turn (`inner` calls each): a slow stretch of the machine hits all of them
    alike, so their ratios hold where separate best-of-7 runs drift apart."""
    for f in fs:
        f()
    best = [float("inf")] * len(fs)
    for _ in range(rounds):
        for i, f in enumerate(fs):
            t0 = time.thread_time()
            for _ in range(inner):
                f()
            best[i] = min(best[i], (time.thread_time() - t0) / inner)
    return [b * 1e6 for b in best]


def small_op_rows():
    rng = np.random.default_rng(0)
    a_np, b_np, c_np = (rng.random(1000, dtype=np.float32) for _ in range(3))
    a, b, c = q.value(a_np), q.value(b_np), q.value(c_np)
    ag = q.value(a_np, requires_grad=True)

    def no_grad_call():
        with q.no_grad():
            return ag * b + c

    off, on, under_no_grad = interleaved_best_us(
        [lambda: a * b + c, lambda: ag * b + c, no_grad_call])
    print(f"{'a * b + c, 1k float32, plain':48s} {off:8.2f} us")
    print(f"{'a * b + c, a requires grad (recording)':48s} {on:8.2f} us  {on / off:5.2f}x plain")
    print(f"{'  the same under q.no_grad()':48s} {under_no_grad:8.2f} us  "
          f"{under_no_grad / off:5.2f}x plain")
    if torch is not None:
        ta, tb, tc = (torch.from_numpy(x.copy()) for x in (a_np, b_np, c_np))
        tag = ta.clone().requires_grad_()
        t_off, t_on = interleaved_best_us([lambda: ta * tb + tc, lambda: tag * tb + tc])
        print(f"{'torch a * b + c, plain / recording':48s} {t_off:8.2f} / {t_on:.2f} us  "
              f"{t_on / t_off:5.2f}x plain")


def training_rows(n, sizes):
    rng = np.random.default_rng(1)
    x_np = rng.normal(size=(n, sizes[0])).astype(np.float32)
    y_np = rng.normal(size=(n, sizes[-1])).astype(np.float32)

    def q_model():
        layers = []
        for i in range(len(sizes) - 1):
            layers.append(q.nn.Linear(sizes[i], sizes[i + 1]))
            if i < len(sizes) - 2:
                layers.append(q.nn.ReLU())
        return q.nn.Sequential(*layers)

    model = q_model()
    opt = q.optim.SGD(model.parameters(), lr=1e-3)
    loss_fn = q.nn.MSELoss()
    x, y = q.value(x_np), q.value(y_np)

    def q_step():
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

    name = f"training step N={n}, " + " -> ".join(map(str, sizes))
    tq = best_us(q_step, inner=200)
    line = f"{name:48s} {tq:8.1f} us"
    if torch is not None:
        layers = []
        for i in range(len(sizes) - 1):
            layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
            if i < len(sizes) - 2:
                layers.append(torch.nn.ReLU())
        tmodel = torch.nn.Sequential(*layers)
        topt = torch.optim.SGD(tmodel.parameters(), lr=1e-3)
        tx, ty = torch.from_numpy(x_np), torch.from_numpy(y_np)
        tloss = torch.nn.MSELoss()

        def t_step():
            topt.zero_grad()
            tloss(tmodel(tx), ty).backward()
            topt.step()

        tt = best_us(t_step, inner=200)
        line += f"  torch {tt:8.1f} us  isthmus/torch {tq / tt:5.2f}x"
    print(line)


def main():
    q.init("cpu")
    print("CPU time per call (small ops: best of 200 interleaved rounds; training: best of 7); "
          "machine: see bench/README.md")
    small_op_rows()
    training_rows(64, (1, 10, 1))
    training_rows(64, (1000, 100, 10))


if __name__ == "__main__":
    main()
