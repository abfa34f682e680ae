"""The optimised plugin builds that were under way when the interpreter exited, finished by a
detached process (Note [compile tiers] in plugins/src/compile_tiers.cpp).

At exit, isthmus stops its background builds (hand_over, an atexit hook) and, when some were left,
starts `python -m isthmus._finish_builds` in a session of its own with their list on stdin. That
process compiles each one again with compile_string(tiered=False) into the cache it was meant for,
under the cache's usual locks, and exits; the next run of the script loads the optimised builds.

Note [finishing lock]
~~~~~~~~~~~~~~~~~~~~~
A detached build writes into its cache after the script that started it has exited, so whatever
comes next (the script's next run timing a cached load, a test harness removing a temporary cache)
has to be able to wait for it. The exiting process opens `<cache>/finishing.lock` (as the cache
opens a build lock: See Note [cache trust model]) and takes a shared flock on it before it starts
the detached process, which inherits the descriptor: the lock is held from before the exit until
the last build is done, with no gap between the two processes, and several finishers share it.
`python -m isthmus.cache wait` (isthmus.cache.wait_for_finishers) takes it exclusively. The name
matches no entry's stem, so `list`, `size` and `clear` never see it.
"""
import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path


def _hold_finishing_locks(dirs):
    """Shared locks on each cache's finishing.lock (See Note [finishing lock]); their fds."""
    from ._cache_files import FINISHING_LOCK, CacheError, _open_lock
    fds = []
    for d in sorted(set(dirs)):
        try:
            fd = _open_lock(Path(d) / FINISHING_LOCK)
        except (OSError, CacheError):
            continue  # no lock to hold: a waiter does not wait for this build
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
        except OSError:
            os.close(fd)
            continue
        fds.append(fd)
    return fds


def hand_over():
    """Stops the background builds; a detached process builds what was left (atexit hook)."""
    from . import _isthmus
    left = _isthmus._stop_background_builds()
    if not left:
        return
    env = dict(os.environ, ISTHMUS_VERBOSE="0")
    fds = _hold_finishing_locks(b["cache_dir"] for b in left)
    try:
        p = subprocess.Popen([sys.executable, "-m", "isthmus._finish_builds"], env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True,
                             pass_fds=fds)
        p.stdin.write(json.dumps(left).encode())
        p.stdin.close()
    except OSError:
        pass  # no process to hand them to: the next run compiles them again
    finally:
        for fd in fds:  # the child's copies hold the locks now
            os.close(fd)


def main():
    import isthmus as q
    builds = json.loads(sys.stdin.read())
    q.init("cpu")
    for b in builds:
        os.environ["ISTHMUS_CACHE_DIR"] = b["cache_dir"]
        try:
            q.compile_string(b["name"], b["source"], b["flags"], tiered=False)
        except Exception:  # noqa: BLE001  (the next run reports what fails)
            pass


if __name__ == "__main__":
    main()
