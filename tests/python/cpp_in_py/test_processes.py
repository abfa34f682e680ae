# isthmus in several processes: fork after init (Note [OpenMP after fork]), spawn and forkserver.
import json
import pathlib

import pytest

TESTS = pathlib.Path(__file__).resolve().parent  # processes_worker.py beside this file

# Big enough that every op below runs as a parallel region (far above the parallel grain).
N = 1 << 22

# Snippet prelude: the runtime started and its thread pool used before any fork.
PRELUDE = f"""
import json, multiprocessing as mp, os, signal, sys
sys.path.insert(0, {str(TESTS)!r})  # processes_worker, for this process and its children
import numpy as np
import isthmus as q
q.init("cpu")
N = {N}
EXPECTED = N * (N - 1) / 2
signal.alarm(90)  # a hang fails the test instead of stopping the suite
base = q.arange(N, dtype="float64")
assert q.sum(base).item() == EXPECTED  # the parent's OpenMP pool now exists
"""


def check_results(results, seeds):
    assert len(results) == len(seeds)
    for total, prod, in_range, n in results:
        assert total == N * (N - 1) / 2
        assert prod == 256.0 ** 3
        assert in_range and n == N


def test_fork_after_init_runs_parallel_ops_in_the_child(run_python):
    """os.fork() after parallel work: the child computes with a full team and exits cleanly."""
    res = run_python(PRELUDE + """
import threading
from processes_worker import work
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    try:
        out = work(1)
        # the values the parent made before the fork are readable in the child
        out = list(out) + [q.sum(base).item(), threading.active_count()]
        os.write(w, json.dumps(out).encode())
        os._exit(0)
    except BaseException as e:
        os.write(w, json.dumps(repr(e)).encode())
        os._exit(3)
os.close(w)
data = b""
while chunk := os.read(r, 65536):
    data += chunk
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status), data.decode())
""")
    code, data = res.stdout.split(" ", 1)
    assert code == "0", data
    total, prod, in_range, n, base_sum, _ = json.loads(data)
    assert total == N * (N - 1) / 2 and prod == 256.0 ** 3 and in_range and n == N
    assert base_sum == N * (N - 1) / 2


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_pool_workers_compute(run_python, method):
    """A multiprocessing pool of each start method runs isthmus ops in its workers."""
    res = run_python(PRELUDE + f"""
from processes_worker import work, init_worker
ctx = mp.get_context("{method}")
with ctx.Pool(2, initializer=init_worker) as pool:
    results = pool.map_async(work, [1, 2, 3, 4]).get(timeout=80)
print(json.dumps(results))
""")
    results = json.loads(res.stdout.strip().splitlines()[-1])
    check_results(results, [1, 2, 3, 4])
