# Worker functions for test_processes.py: importable by spawned and forkserver children.
import isthmus as q

N = 1 << 22


def init_worker():
    """Pool initializer: starts the runtime in a spawned worker (a forked one has it already)."""
    q.init("cpu")


def work(seed):
    """Parallel creation, elementwise, reduction, matmul and random ops; plain results."""
    a = q.arange(N, dtype="float64")
    total = q.sum(a * 2.0 - a).item()
    m = q.ones(256, 256, dtype="float64")
    prod = (m @ m).sum().item()
    q.manual_seed(seed)
    r = q.rand(N)
    return total, prod, float(q.min(r).item()) >= 0.0, r.shape[0]
