"""Leak and thread stress: memory flat over 1e5 create/export cycles and 1e4 training steps,
threads running ops at once.

Leak check (Note [leak check]): each cycle creates values and moves them across the bridges
(q.zeros/q.value -> np.asarray / __dlpack__ / torch.from_dlpack and back, ops, an error path);
after a warm-up, the growth over ISTHMUS_STRESS_CYCLES cycles (default 1e5) must stay below
LIMIT_RSS of resident memory and LIMIT_HEAP of malloc'ed bytes (glibc mallinfo2, which sees
C++, NumPy and torch buffers but not Python's own arenas). A leak of one 1 KiB buffer per cycle
is 100 MB over 1e5 cycles, far past both limits; allocator noise (arenas, NumPy's small-buffer
cache, freelists) stays in the low megabytes once warm. Under AddressSanitizer (quarantine and
shadow memory hide the allocator's behaviour) the leak checks skip and the thread test runs.
"""

import ctypes
import gc
import os
import threading
import time

import numpy as np
import pytest

import isthmus as q

CYCLES = int(os.environ.get("ISTHMUS_STRESS_CYCLES", "100000"))
WARMUP = max(1000, CYCLES // 10)
LIMIT_RSS = 32 << 20
LIMIT_HEAP = 8 << 20
UNDER_ASAN = "asan" in os.environ.get("LD_PRELOAD", "")
PAGE = os.sysconf("SC_PAGE_SIZE")

try:
    import torch
except ImportError:
    torch = None

no_asan = pytest.mark.skipif(UNDER_ASAN, reason="RSS and malloc statistics are meaningless "
                             "under AddressSanitizer's quarantine; the normal build checks leaks")


class _MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                 "uordblks", "fordblks", "keepcost")]


def _mallinfo2():
    libc = ctypes.CDLL(None)
    if not hasattr(libc, "mallinfo2"):
        return None
    libc.mallinfo2.restype = _MallInfo2
    return libc.mallinfo2


MALLINFO2 = _mallinfo2()


def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def heap():
    """Bytes in use from malloc (small blocks plus mmapped ones); None without glibc's mallinfo2."""
    if MALLINFO2 is None:
        return None
    m = MALLINFO2()
    return m.uordblks + m.hblkhd


# Note [leak check]
# ~~~~~~~~~~~~~~~~~
# A cycle runs WARMUP times, then CYCLES times (ISTHMUS_STRESS_CYCLES, default 1e5), and the
# growth over the CYCLES runs must stay below LIMIT_RSS of resident memory and LIMIT_HEAP of
# malloc'ed bytes (glibc mallinfo2). A leak of one 1 KiB buffer per cycle is 100 MB over 1e5
# cycles, far past both limits; allocator noise stays in the low megabytes once warm.
def assert_flat(cycle, name):
    """Runs `cycle` WARMUP times, then CYCLES times, and bounds the growth (Note [leak check])."""
    for _ in range(WARMUP):
        cycle()
    gc.collect()
    r0, h0 = rss(), heap()
    for _ in range(CYCLES):
        cycle()
    gc.collect()
    r1, h1 = rss(), heap()
    grow_rss = r1 - r0
    grow_heap = None if h0 is None else h1 - h0
    print(f"{name}: {CYCLES} cycles, RSS {grow_rss / 2**20:+.1f} MiB, "
          f"heap {'n/a' if grow_heap is None else f'{grow_heap / 2**20:+.1f} MiB'}")
    assert grow_rss < LIMIT_RSS, f"{name}: RSS grew {grow_rss / 2**20:.1f} MiB over {CYCLES} cycles"
    if grow_heap is not None:
        assert grow_heap < LIMIT_HEAP, \
            f"{name}: malloc'ed bytes grew {grow_heap / 2**20:.1f} MiB over {CYCLES} cycles"


# ---- the cycles (each makes or moves a 1 KiB buffer at least once) ----

def cycle_numpy():
    v = q.zeros(256)  # 1 KiB of float32
    a = np.asarray(v)
    w = q.value(a)  # shares the exported memory back
    b = np.array(w)  # a copy
    q.value(b, dtype="float64")


def cycle_dlpack():
    v = q.ones(256)
    a = np.from_dlpack(v)
    w = q.from_dlpack(a)
    cap = w.__dlpack__()
    x = q.from_dlpack(cap)
    q.from_dlpack(np.ones(256, dtype=np.float32))
    del a, x


def cycle_ops():
    v = q.value(np.arange(256, dtype=np.float32))
    w = (v + 1) * v - v[::2].sum()
    w[w > 3] = 0
    q.sum(w, 0)
    v.reshape(16, 16).T.copy()
    try:
        v.reshape(7)  # an error path
    except ValueError:
        pass
    try:
        v[1000]
    except IndexError:
        pass


def cycle_torch():
    v = q.zeros(256)
    t = torch.from_dlpack(v)
    w = q.from_dlpack(t)
    u = torch.from_dlpack(w)
    q.value(torch.ones(256))
    del t, u


TRAINING_STEPS = 10_000


@no_asan
def test_training_steps_leave_memory_flat():
    """10,000 steps of a small MLP with autograd (forward, backward, SGD with momentum): each
    step's graph is freed with its loss, so memory stays flat (Note [leak check]'s limits)."""
    from isthmus import nn, optim
    rng = np.random.default_rng(0)
    x = q.value(rng.normal(size=(8, 4)))
    y = q.value(rng.normal(size=(8, 1)))
    model = nn.Sequential(nn.Linear(4, 16, dtype="float64"), nn.Tanh(),
                          nn.Linear(16, 1, dtype="float64"))
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.MSELoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return float(loss)

    first = [step() for _ in range(1000)][0]
    gc.collect()
    r0, h0 = rss(), heap()
    last = [step() for _ in range(TRAINING_STEPS)][-1]
    gc.collect()
    r1, h1 = rss(), heap()
    assert last < first  # it trained
    print(f"training: {TRAINING_STEPS} steps, RSS {(r1 - r0) / 2**20:+.1f} MiB")
    assert r1 - r0 < LIMIT_RSS, f"RSS grew {(r1 - r0) / 2**20:.1f} MiB over {TRAINING_STEPS} steps"
    if h0 is not None:
        assert h1 - h0 < LIMIT_HEAP, \
            f"malloc'ed bytes grew {(h1 - h0) / 2**20:.1f} MiB over {TRAINING_STEPS} steps"


@no_asan
@pytest.mark.parametrize("name", ["numpy", "dlpack", "ops", "torch"])
def test_memory_flat(name):
    if name == "torch" and torch is None:
        pytest.skip("torch is not installed")
    assert_flat(globals()[f"cycle_{name}"], name)


# ---- threads ----

THREADS = 4
SECONDS = float(os.environ.get("ISTHMUS_STRESS_SECONDS", "5"))


def test_threads_run_ops_at_once():
    """Threads share one read-only value and each works on its own: every result checked."""
    shared = q.value(np.arange(4096, dtype=np.float64).reshape(64, 64))
    expect_sum = float(np.arange(4096).sum())
    errors = []
    stop = time.monotonic() + SECONDS
    counts = [0] * THREADS

    def work(k):
        try:
            rng = np.random.default_rng(k)
            while time.monotonic() < stop:
                own = q.value(rng.random((32, 32)))
                ref = np.asarray(own).copy()
                assert float(q.sum(shared)) == expect_sum
                r = np.asarray((own + shared[:32, :32]) * 2)
                assert np.allclose(r, (ref + np.arange(4096.0).reshape(64, 64)[:32, :32]) * 2)
                own[own > 0.5] = 0
                ref[ref > 0.5] = 0
                assert np.array_equal(np.asarray(own), ref)
                t = q.from_dlpack(np.asarray(shared[k::THREADS]))
                assert t.shape == (len(range(k, 64, THREADS)), 64)
                m = own @ own
                assert np.allclose(np.asarray(m), ref @ ref)
                if torch is not None:
                    tt = torch.from_dlpack(own)
                    assert float(tt.sum()) == pytest.approx(float(ref.sum()))
                counts[k] += 1
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    assert all(counts), counts
    print(f"iterations per thread: {counts}")
