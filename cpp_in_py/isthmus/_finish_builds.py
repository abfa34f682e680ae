"""The optimised plugin builds that were under way when the interpreter exited, finished by a
detached process (Note [compile tiers] in plugins/src/compile_tiers.cpp).

At exit, isthmus stops its background builds (hand_over, an atexit hook) and, when some were left,
starts `python -m isthmus._finish_builds` in a session of its own with their list on stdin. That
process compiles each one again with compile_string(tiered=False) into the cache it was meant for,
under the cache's usual locks, and exits; the next run of the script loads the optimised builds.
"""
import json
import os
import subprocess
import sys


def hand_over():
    """Stops the background builds; a detached process builds what was left (atexit hook)."""
    from . import _isthmus
    left = _isthmus._stop_background_builds()
    if not left:
        return
    env = dict(os.environ, ISTHMUS_VERBOSE="0")
    try:
        p = subprocess.Popen([sys.executable, "-m", "isthmus._finish_builds"], env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
        p.stdin.write(json.dumps(left).encode())
        p.stdin.close()
    except OSError:
        pass  # no process to hand them to: the next run compiles them again


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
