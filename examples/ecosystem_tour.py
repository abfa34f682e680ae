"""qvalues where NumPy arrays travel: NumPy's functions, pickling, copies and worker processes.

    python examples/ecosystem_tour.py

Each step prints what it shows and checks it against NumPy (docs/numpy-protocols.md,
docs/scaling-out.md).
"""
import copy
import multiprocessing as mp
import pickle

import numpy as np

import isthmus as q


def blur_rows(chunk):
    """A worker's job: a qvalue arrives pickled, isthmus computes, a qvalue goes back."""
    import isthmus as q  # a spawned worker starts the runtime when it unpickles (no q.init)
    return (chunk[:, :-2] + chunk[:, 1:-1] + chunk[:, 2:]) / 3.0


def main():
    q.init("cpu")
    rng = np.random.default_rng(0)
    a = q.value(rng.standard_normal((512, 256)).astype(np.float32))

    print("1. NumPy's functions compute in isthmus and return qvalues")
    total = np.sum(a, axis=0)
    e = np.exp(a[:2, :3])
    print(f"   np.sum(a, axis=0) -> {type(total).__name__} of shape {total.shape}")
    print(f"   np.exp(a[:2, :3]) -> {type(e).__name__}: {e[0, 0]:.4f} ...")
    np.testing.assert_allclose(np.asarray(total), np.asarray(a).astype(np.float64).sum(axis=0),
                               rtol=1e-5, atol=1e-4)  # float32 sums of 512 values
    med = np.median(a)  # no isthmus median: NumPy computes on a's memory (the host fallback)
    print(f"   np.median(a) = {med:.5f} (NumPy on the shared memory), a {type(med).__name__}")

    print("2. pickle: protocol 5 hands the tensor's memory out of band, without a copy")
    buffers = []
    data = pickle.dumps(a, protocol=5, buffer_callback=buffers.append)
    b = pickle.loads(data, buffers=buffers)
    print(f"   stream {len(data)} bytes + {len(buffers)} buffer of "
          f"{memoryview(buffers[0]).nbytes} bytes; b shares a's memory: "
          f"{np.shares_memory(np.asarray(a), np.asarray(b))}")
    small = a[10:12, 5:8]  # a view pickles only its own elements
    print(f"   a 2x3 view of a 512x256 tensor pickles to {len(pickle.dumps(small))} bytes")

    print("3. copies follow NumPy: copy.copy and deepcopy copy the data")
    c = copy.deepcopy(a)
    c[0, 0] = 100.0
    print(f"   after c[0, 0] = 100: a[0, 0] = {a[0, 0]:.4f}, c[0, 0] = {c[0, 0]:.1f}")

    print("4. worker processes (spawn): qvalue chunks in, qvalues out")
    chunks = [a[i:i + 128] for i in range(0, 512, 128)]
    with mp.get_context("spawn").Pool(2) as pool:
        parts = pool.map(blur_rows, chunks)
    out = q.concatenate(parts, axis=0)
    ref = np.asarray(a)
    ref = (ref[:, :-2] + ref[:, 1:-1] + ref[:, 2:]) / 3.0
    np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-5, atol=2e-5)
    print(f"   {len(parts)} chunks blurred in 2 processes -> {type(out).__name__} "
          f"{out.shape}, equal to NumPy's")


if __name__ == "__main__":
    main()
