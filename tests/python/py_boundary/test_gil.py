# The GIL is released around native work: two Python threads run large ops at the same time.
import threading

import numpy as np

import isthmus as q


def test_two_threads_are_inside_native_code_at_once():
    # See Note [native sections]: each binding counts the threads inside its GIL-free part; the
    # most seen at once proves the overlap without timing anything.
    a = q.value(np.random.default_rng(0).normal(size=4_000_000).astype(np.float32))
    start = threading.Barrier(2)
    errors = []

    def work():
        try:
            start.wait()
            for _ in range(40):  # until the overlap is seen (seconds under ASan otherwise)
                (a * 2.0).sum()
                a.sum()
                if q._native_stats()["max_active"] >= 2:
                    break
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    q._native_stats(reset=True)
    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stats = q._native_stats()
    assert not errors
    assert stats["entered"] >= 2 * 3
    assert stats["max_active"] >= 2, stats
    assert stats["active"] == 0


def test_one_thread_never_overlaps_itself():
    a = q.ones(1000)
    q._native_stats(reset=True)
    for _ in range(100):
        a + a
    stats = q._native_stats()
    assert stats["max_active"] == 1 and stats["entered"] >= 100
