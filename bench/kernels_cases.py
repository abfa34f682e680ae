"""bench/kernels.py's cases: each kernel's inputs, NumPy reference and per-library calls."""
import numpy as np

import isthmus as q
from kernels_sources import LIBS, peers

try:
    import torch
except ImportError:  # the torch rows are skipped
    torch = None


def close(rtol, atol=0.0):
    def make(ref):
        return lambda got: np.testing.assert_allclose(np.asarray(got), ref, rtol=rtol, atol=atol)
    return make


def as_np(x):
    return x.numpy() if torch is not None and isinstance(x, torch.Tensor) else np.asarray(x)


def run_case(b, name, inputs, make_out, ref, check, kernels, launches=1):
    """inputs: NumPy arrays; make_out(): a fresh output of each library (NumPy array);
    kernels: {lib: f(ins, out, mode) -> call}, mode "numpy" or "torch"."""
    for mode in ("numpy", "torch"):
        if mode == "torch" and torch is None:
            continue
        fns = {}
        for lib in LIBS:
            k = kernels.get(lib)
            if k is None or (lib != "numpy" and lib != "isthmus" and lib not in peers):
                continue
            if mode == "torch" and lib == "numba":
                continue  # Numba's kernels take NumPy arrays, not torch tensors
            out = make_out()
            ins = inputs
            if mode == "torch":
                ins = [torch.from_numpy(a) for a in inputs]
                out = torch.from_numpy(out)
            call = k(ins, out, mode)
            if call is None:
                continue
            if launches > 1:
                one = call
                call = (lambda one=one: [one() for _ in range(launches)])
            fns[lib] = (call, (lambda out=out: as_np(out)))
        b.row(name, mode, fns, check(ref), per=launches)



def peer_kernels(name, dim):
    """The numba, quadrants and warp entries of a kernel name(x, out) over dim positions."""
    def numba_k(ins, out, mode):
        f, xx = getattr(peers["numba"], name), ins[0]
        return lambda: f(xx, out)

    def quadrants_k(ins, out, mode):
        p = peers["quadrants"]
        f, xx = getattr(p, name), ins[0]
        return lambda: (f(xx, out), p.sync())

    def warp_k(ins, out, mode):
        p = peers["warp"]
        k = getattr(p, name)
        xx, y = (ins[0], out) if mode == "torch" else (p.wrap(ins[0]), p.wrap(out))
        return lambda: p.launch(k, dim, xx, y)

    return {"numba": numba_k, "quadrants": quadrants_k, "warp": warp_k}

def kernel_saxpy(b, n, name, launches=1):
    rng = np.random.default_rng(1)
    x = rng.random(n, dtype=np.float32)
    a = 2.0
    ref = a * x + np.float32(1.0)

    def isthmus_k(ins, out, mode):
        xx = ins[0]
        return lambda: q.parallel_do(n, xx, out, a, q.bk_saxpy)

    def numba_k(ins, out, mode):
        f, xx, aa = peers["numba"].saxpy, ins[0], np.float32(a)
        return lambda: f(xx, out, aa)

    def quadrants_k(ins, out, mode):
        p = peers["quadrants"]
        f, xx = p.saxpy, ins[0]
        if launches > 1:
            return lambda: f(xx, out, a)
        return lambda: (f(xx, out, a), p.sync())

    def warp_k(ins, out, mode):
        p = peers["warp"]
        xx, yy = (ins[0], out) if mode == "torch" else (p.wrap(ins[0]), p.wrap(out))
        return lambda: p.launch(p.saxpy, n, xx, yy, a)

    def numpy_k(ins, out, mode):
        xx = ins[0]
        if mode == "torch":
            return lambda: (torch.mul(xx, a, out=out), out.add_(1.0))
        a32, one = np.float32(a), np.float32(1)
        return lambda: (np.multiply(xx, a32, out=out), np.add(out, one, out=out))

    run_case(b, name, [x], lambda: np.full(n, np.nan, np.float32), ref, close(1e-6),
             {"isthmus": isthmus_k, "numba": numba_k, "quadrants": quadrants_k, "warp": warp_k,
              "numpy": numpy_k}, launches=launches)
    if launches > 1 and "warp" in peers:
        peers["warp"].sync()


def kernel_color_temperature(b, h, w):
    rng = np.random.default_rng(2)
    img = (rng.random((h, w, 3), dtype=np.float32) * 255).astype(np.float32)
    temp = 1.0
    hot = np.array([1, 0.2, 0], np.float32) * 255
    cold = np.array([0.3, 0.4, 1], np.float32) * 255
    # examples/color_temperature.py's reference
    c, target = (np.float32(-0.25 * temp), cold) if temp < 0 else (np.float32(0.25 * temp), hot)
    ref = img * c + target * (1 - c)
    shift = (target * (1 - c)).astype(np.float32)
    q_cold, q_hot = q.asvalue(cold), q.asvalue(hot)

    def isthmus_k(ins, out, mode):
        x = ins[0]
        return lambda: q.parallel_do((h, w), x, out, temp, q_cold, q_hot, q.color_temperature)

    def numba_k(ins, out, mode):
        f, x, t = peers["numba"].color_temperature, ins[0], np.float32(temp)
        return lambda: f(x, out, t, cold, hot)

    def quadrants_k(ins, out, mode):
        p = peers["quadrants"]
        f, x, vc, vh = p.color_temperature, ins[0], p.vec(cold), p.vec(hot)
        return lambda: (f(x, out, temp, vc, vh), p.sync())

    def warp_k(ins, out, mode):
        p = peers["warp"]
        x, y = (ins[0], out) if mode == "torch" else (p.wrap(ins[0]), p.wrap(out))
        vc, vh = p.vec(cold), p.vec(hot)
        return lambda: p.launch(p.color_temperature, (h, w), x, y, temp, vc, vh)

    def numpy_k(ins, out, mode):
        x = ins[0]
        if mode == "torch":
            s = torch.from_numpy(shift)
            return lambda: (torch.mul(x, float(c), out=out), out.add_(s))
        return lambda: (np.multiply(x, c, out=out), np.add(out, shift, out=out))

    run_case(b, f"color_temperature {h}x{w}x3", [img],
             lambda: np.full((h, w, 3), np.nan, np.float32), ref, close(1e-5, 1e-3),
             {"isthmus": isthmus_k, "numba": numba_k, "quadrants": quadrants_k, "warp": warp_k,
              "numpy": numpy_k})


def kernel_box_blur(b, h, w):
    rng = np.random.default_rng(3)
    x = rng.random((h, w), dtype=np.float32)
    offsets = [(di, dj) for di in (-1, 0, 1) for dj in (-1, 0, 1)]

    def blur_np(x, out):
        p = np.pad(x, 1, mode="edge")
        np.copyto(out, p[0:h, 0:w])
        for di, dj in offsets[1:]:
            np.add(out, p[1 + di:1 + di + h, 1 + dj:1 + dj + w], out=out)
        np.divide(out, np.float32(9), out=out)

    ref = np.empty_like(x)
    blur_np(x, ref)

    def isthmus_k(ins, out, mode):
        xx = ins[0]
        return lambda: q.parallel_do((h, w), xx, out, q.bk_box_blur)

    def numpy_k(ins, out, mode):
        xx = ins[0]
        if mode == "torch":
            F = torch.nn.functional
            x4 = xx[None, None]
            return lambda: out.copy_(F.avg_pool2d(F.pad(x4, (1, 1, 1, 1), mode="replicate"),
                                                  3, stride=1)[0, 0])
        return lambda: blur_np(xx, out)

    run_case(b, f"box_blur 3x3 {h}x{w}", [x], lambda: np.full((h, w), np.nan, np.float32),
             ref, close(1e-5, 1e-6),
             {"isthmus": isthmus_k, **peer_kernels("box_blur", (h, w)), "numpy": numpy_k})


def kernel_row_sum(b, r, c, fast_math=False, helper=False):
    """helper: isthmus sums with ip::row_sum (its fixed pairwise order vectorises without fast
    math); the peers run the same running-sum kernels as in the plain row."""
    rng = np.random.default_rng(4)
    x = rng.random((r, c), dtype=np.float32)
    ref = x.sum(axis=1, dtype=np.float64).astype(np.float32)
    kernel = q.bk_row_sum_fast if fast_math else q.bk_row_sum_pairwise if helper else q.bk_row_sum

    def isthmus_k(ins, out, mode):
        xx = ins[0]
        return lambda: q.parallel_do(r, xx, out, kernel)
    peers_of = peer_kernels("row_sum_fast" if fast_math else "row_sum", r)
    if fast_math:  # Quadrants compiles with fast math anyway; Warp has no such switch
        peers_of = {"numba": peers_of["numba"], "quadrants": peer_kernels("row_sum", r)["quadrants"]}

    def numpy_k(ins, out, mode):
        xx = ins[0]
        if mode == "torch":
            return lambda: torch.sum(xx, dim=1, out=out)
        return lambda: np.sum(xx, axis=1, out=out)

    # A float32 running sum of 4096 values in [0, 1) is off by up to ~1e-4 relative.
    run_case(b, f"row_sum {r}x{c}" + (", fast math" if fast_math else "") +
             (", ip::row_sum" if helper else ""), [x],
             lambda: np.full(r, np.nan, np.float32), ref, close(1e-3),
             {"isthmus": isthmus_k, **peers_of, "numpy": numpy_k})
