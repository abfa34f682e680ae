"""What the plugin cache does under its locks: clearing entries (`python -m isthmus.cache
clear`) and waiting for the detached builds an exited script left (`wait`)."""

# Note [clearing under the lock]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A build holds an exclusive flock on <stem>.lock while it writes the entry. `clear` takes the
# same lock without waiting (fcntl.flock on the same file, LOCK_EX | LOCK_NB) before removing an
# entry's files; an entry whose lock is held is skipped and reported (exit code 1), so nothing a
# running compile writes is removed under it. The .lock file itself is kept (an empty file):
# removing it while a waiting compile has it open would let that compile lock the removed file
# while the next one locks a new file of the same name, and both would build at once. Lock-only
# stems are not entries (`list` and `size` skip them). The lock is opened as compile_string opens
# it (see Note [cache trust model]: O_NOFOLLOW, mode 0600, a planted symlink or another user's file
# removed first); clearing removes a planted symlink itself, never what it names. What the lock
# cannot cover: a process whose lock-free fast path has just validated a .so may find it gone
# when it opens it (it then raises); clear the cache when no compile is starting.

import os
import time

from ._cache_entries import _existing_dir, _parse_key, entries
from ._cache_files import (_FILE, FINISHING_LOCK, CacheError, CacheKeyError, CacheUsageError,
                           _open_lock, _try_lock)


def _remove_entry(d, entry):
    """Removes an entry's files (the lock kept) while holding its lock; False when a build
    holds it. See Note [clearing under the lock]."""
    fd = _open_lock(d / f"{entry.stem}.lock")
    try:
        if not _try_lock(fd):
            return False
        for p in d.iterdir():  # again, under the lock: a build may have added files
            m = _FILE.match(p.name)
            if m and m["stem"] == entry.stem and m["part"] != "lock":
                try:
                    if not p.is_dir() or p.is_symlink():
                        p.unlink(missing_ok=True)  # a symlink itself, never what it names
                except PermissionError as e:
                    raise CacheError(f"cannot remove {p}: {e.strerror} (another user's file in "
                                     "a shared cache directory)") from None
        return True
    finally:
        os.close(fd)


def clear(directory=None, *, older_than_days=None, key=None):
    """Removes cache entries: all of them, those last written more than `older_than_days` days
    ago, or the one(s) named by `key` (16 hex digits, or NAME-KEY). Returns (removed, busy):
    lists of CacheEntry; busy ones were being built and were left alone. Raises
    CacheMissingError, CacheKeyError (a malformed key, or one naming no entry) or
    CacheUsageError (a negative or non-finite age, or both filters)."""
    if older_than_days is not None and key is not None:
        raise CacheUsageError("clear takes --older-than or a KEY, not both")
    if older_than_days is not None:
        days = float(older_than_days)
        if not (0 <= days < float("inf")):
            raise CacheUsageError(f"--older-than needs a finite number of days >= 0, got "
                                  f"{older_than_days!r}")
    wanted = _parse_key(key) if key is not None else None
    d = _existing_dir(directory)
    now = time.time()
    chosen = []
    for e in entries(d):
        if wanted is not None and (e.key != wanted[1] or wanted[0] not in (None, e.name)):
            continue
        if older_than_days is not None and e.age(now) <= days * 86400:
            continue
        chosen.append(e)
    if wanted is not None and not chosen:
        raise CacheKeyError(f"no cache entry with key {key!r} in {d}")
    removed, busy = [], []
    for e in chosen:
        (removed if _remove_entry(d, e) else busy).append(e)
    return removed, busy


def wait_for_finishers(directory=None, *, timeout=None):
    """Waits until no detached process still builds into the cache what an exited script left
    (See Note [finishing lock] in isthmus/_finish_builds.py). Returns True when none does, False
    when `timeout` seconds (None: no limit) passed first. Raises CacheMissingError, or
    CacheUsageError for a negative or NaN timeout."""
    if timeout is not None and not (float(timeout) >= 0):
        raise CacheUsageError(f"--timeout needs a number of seconds >= 0, got {timeout!r}")
    d = _existing_dir(directory)
    lock = d / FINISHING_LOCK
    if not lock.exists():
        return True
    fd = _open_lock(lock)
    deadline = None if timeout is None else time.monotonic() + float(timeout)
    try:
        while True:
            if _try_lock(fd):
                return True
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.02)
    finally:
        os.close(fd)  # releases the lock taken here
