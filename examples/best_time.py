"""The examples' clock: the best wall time of a few calls, in milliseconds."""
import time


def best_ms(f, repeats=7):
    """Calls f once to warm up, then `repeats` times; the fastest call in milliseconds."""
    f()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return 1e3 * min(times)
