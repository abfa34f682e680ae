"""`python -m isthmus.cache`: list, measure and clear the compile_string plugin cache."""

# Usage (docs/plugins.md, "Tooling"):
#
#     python -m isthmus.cache path
#     python -m isthmus.cache list [--json] [--verify]
#     python -m isthmus.cache size [--json]
#     python -m isthmus.cache clear [--older-than DAYS | KEY]
#     python -m isthmus.cache wait [--timeout SECONDS]
#
# Exit codes: 0 done; 1 `clear` left entries that a compile holds (they are named on stderr), or
# `wait` timed out;
# 2 an error (no cache directory, a bad key, bad arguments), with a one-line message on stderr.
#
# Note [cache layout, read from Python]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# This module reads the layout that plugins/src/compiler.cpp writes (Note [plugin cache] there);
# it does not load the native module, so it works without q.init and on a cache made by another
# build. Every file of an entry starts with its stem `<name>-<key>`, `key` 16 hex digits:
#   <stem>.cpp or .cu   the compiled source (its extension is the source kind)
#   <stem>.so           the plugin
#   <stem>.meta         "isthmus-plugin-cache-1 / size N / hash H": the .so's size and its
#                       64-bit FNV-1a hash; further "word value" lines are read if present
#                       (a `compiler` line is shown by `list`; the C++ side writes none yet)
#   <stem>.ptx, <stem>.sm_XY.cubin   an NVRTC-compiled CUDA plugin's device code (Note [NVRTC
#                       plugins] in plugins/src/nvrtc_compile.cpp): the .meta records their sizes
#                       as `ptx_size` and `cubin_sm_XY_size`, and the entry is complete only
#                       when they match
#   <stem>.lock         the flock that builds of this entry hold
#   <stem>.{so,cpp,cu,meta}.tmp.<random>, <stem>.log.<random>   a build's temporary files, each
#                       created under a fresh random name (the precompiled layer's also
#                       .o.log.<random> and its parts' .tmp.<random>; a log is unlinked as soon
#                       as it is open); older builds named them .tmp.<pid>, .log.<pid>
# The precompiled author layer (Note [precompiled plugin header] in
# plugins/src/precompiled_header.cpp) is an entry of the same shape named `isthmus-pch`: its
# artefacts are <stem>.hpp.gch in place of the .so, the support object <stem>.o and the kernel
# half's <stem>.lean.hpp.gch (complete when the .meta records the three sizes: `size`,
# `object_size` and `lean_size`), beside <stem>.hpp, <stem>.lean.hpp and <stem>.support.cpp, and <stem>.seen or <stem>.failed (an entry of those alone is "pending"
# or "failed"); `list` shows its source kind as "pch".
# An entry is complete when its .so and .meta exist and the .meta matches the .so's size (and,
# with `list --verify`, its hash: hashing a large .so byte by byte in Python takes a while, so
# it is asked for). It is refused, whatever else holds, when compile_string would refuse it
# (Note [cache trust model] in plugins/src/compile_cache.cpp): the directory is another user's
# or writable by group or others without the sticky bit, or a file compile_string reads (the
# .so, the .meta, the device code its .meta records; the precompiled layer's .hpp.gch, .o, .hpp,
# .lean.hpp.gch, .lean.hpp and .meta) is a symlink, not a regular file, another user's (not root's), writable by group or
# others, or hard-linked; the reason is given in the same words as the C++ side's. Files that
# match no stem are never listed, counted or removed.
#
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

import argparse
import dataclasses
import errno
import fcntl
import json
import os
import re
import stat
import sys
import time
from pathlib import Path

__all__ = [
    "CacheError", "CacheMissingError", "CacheKeyError", "CacheUsageError", "CacheEntry",
    "cache_dir", "entries", "clear", "main",
]

META_MAGIC = "isthmus-plugin-cache-1"

_FILE = re.compile(
    r"^(?P<stem>(?P<name>.+)-(?P<key>[0-9a-f]{16}))"
    r"\.(?P<part>cpp|cu|so|meta|lock|hpp|hpp\.gch|lean\.hpp|lean\.hpp\.gch|support\.cpp|o|seen"
    r"|failed|ptx|sm_\w+\.cubin"
    r"|(?:so|cpp|cu|meta|hpp|hpp\.gch|lean\.hpp|lean\.hpp\.gch|support\.cpp|o|seen|failed|ptx"
    r"|sm_\w+\.cubin)\.tmp\.[0-9A-Za-z]+"
    r"|(?:o\.|lean\.)?log\.[0-9A-Za-z]+)$")
_KEY = re.compile(r"^(?:(?P<name>.+)-)?(?P<key>[0-9a-fA-F]{16})$")


class CacheError(Exception):
    """A cache command failed; `python -m isthmus.cache` prints it and exits with code 2."""


class CacheMissingError(CacheError, FileNotFoundError):
    """The cache directory does not exist (nothing was compiled with this cache yet)."""


class CacheKeyError(CacheError, LookupError):
    """A key that is malformed or names no entry."""

    def __str__(self):  # LookupError's str() quotes its argument
        return str(self.args[0]) if self.args else ""


class CacheUsageError(CacheError, ValueError):
    """Bad command-line arguments."""


def cache_dir():
    """The cache directory, resolved as q.plugin_cache_dir() does: $ISTHMUS_CACHE_DIR, else
    $XDG_CACHE_HOME/isthmus, else ~/.cache/isthmus (it may not exist yet)."""
    if os.environ.get("ISTHMUS_CACHE_DIR"):
        return Path(os.environ["ISTHMUS_CACHE_DIR"])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "isthmus"
    if not os.environ.get("HOME"):
        raise CacheError("no cache directory: set ISTHMUS_CACHE_DIR or HOME")
    return Path(os.environ["HOME"]) / ".cache" / "isthmus"


@dataclasses.dataclass
class CacheEntry:
    """One compiled plugin in the cache: the files sharing the stem `<name>-<key>`."""

    name: str
    key: str
    files: list  # Path objects, the .lock included
    size: int  # bytes of every file but the lock
    mtime: float  # the newest file's modification time (the lock excluded)
    source_kind: str | None  # "c++", "cuda", "pch", or None when the source file is gone
    compiler: str | None  # from the .meta's `compiler` line, when it has one
    state: str  # "complete", "corrupt" (the .meta does not match the artefact), "partial",
    # "refused" (compile_string would not trust it: `reason` says why); for the precompiled
    # header also "pending" (compiled once, not built yet) or "failed"
    busy: bool  # a build holds the lock now
    reason: str | None = None  # why a refused entry is refused, as ".so is a symlink"

    @property
    def stem(self):
        """`<name>-<key>`, the prefix of every file of the entry."""
        return f"{self.name}-{self.key}"

    @property
    def complete(self):
        """Whether the entry can be loaded: its .so and a matching .meta."""
        return self.state == "complete"

    def age(self, now=None):
        """Seconds since the entry was last written (the cache does not record loads)."""
        return max(0.0, (time.time() if now is None else now) - self.mtime)

    def as_json(self, now=None):
        """The entry as a JSON-ready dict (numbers unformatted)."""
        return {"name": self.name, "key": self.key, "stem": self.stem, "size": self.size,
                "mtime": self.mtime, "age_seconds": self.age(now), "source_kind": self.source_kind,
                "compiler": self.compiler, "complete": self.complete, "state": self.state,
                "reason": self.reason, "busy": self.busy,
                "files": sorted(p.name for p in self.files)}


_NOFOLLOW = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def _distrust(st):
    """Why compile_string refuses a file with this lstat ("" when it trusts it), in the C++
    side's words (distrust in plugins/src/compile_cache.cpp)."""
    if stat.S_ISLNK(st.st_mode):
        return "is a symlink"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    if st.st_uid not in (os.geteuid(), 0):
        return f"has a foreign owner (uid {st.st_uid})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "is writable by group or others"
    if st.st_nlink != 1:
        return f"has {st.st_nlink} hard links"
    return ""


def _dir_distrust(st):
    """Why compile_string refuses a cache directory with this stat ("" when it trusts it)."""
    if not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    if st.st_uid not in (os.geteuid(), 0):
        return f"has a foreign owner (uid {st.st_uid})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not st.st_mode & stat.S_ISVTX:
        return "is writable by group or others without the sticky bit"
    return ""


def _problem(path):
    """Why compile_string would not use the cache file `path` ("" when it would; None when it
    does not exist), by lstat: it never follows a symlink."""
    try:
        return _distrust(os.lstat(path))
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"cannot be read ({e.strerror})"


def _open_checked(path):
    """A binary file object for a cache file that passes the trust checks, opened without
    following a symlink (O_NONBLOCK: a FIFO cannot block); None otherwise."""
    try:
        fd = os.open(path, _NOFOLLOW)
    except OSError:
        return None
    if _distrust(os.fstat(fd)):
        os.close(fd)
        return None
    return os.fdopen(fd, "rb")


def _fnv1a_hex(path):
    """The 64-bit FNV-1a hash of a file, as the .meta records it (16 hex digits)."""
    h = 1469598103934665603
    mask = (1 << 64) - 1
    f = _open_checked(path)
    if f is None:
        return ""  # never a hash: a refused or missing file matches no .meta
    with f:
        while chunk := f.read(1 << 16):
            for b in chunk:
                h = ((h ^ b) * 1099511628211) & mask
    return f"{h:016x}"


def _read_meta(path):
    """The .meta's words as a dict ({} when it is missing, refused, unreadable or has another
    magic line)."""
    f = _open_checked(path)
    if f is None:
        return {}
    try:
        with f:
            lines = f.read().decode(errors="replace").splitlines()
    except OSError:
        return {}
    if not lines or lines[0].strip() != META_MAGIC:
        return {}
    out = {}
    for line in lines[1:]:
        word, _, rest = line.strip().partition(" ")
        if word:
            out[word] = rest.strip()
    return out


def _refusal(base, suffixes):
    """The first of the files `base + suffix` that exists and would be refused, as
    ".so is a symlink"; "" when none."""
    for suffix in suffixes:
        why = _problem(Path(f"{base}{suffix}"))
        if why:
            return f"{suffix} {why}"
    return ""


def _state(so, meta, verify, kinds=()):
    """(state, reason) of an entry; reason is set for a refused one."""
    if "hpp.gch" in kinds or "hpp" in kinds or "seen" in kinds or "failed" in kinds:
        base = meta.with_suffix("")
        return _pch_state(base, meta, kinds)
    base = str(meta.with_suffix(""))
    why = _refusal(base, (".so", ".meta"))
    if why:
        return "refused", why
    if not so.is_file() or not meta.is_file():
        return "partial", None
    m = _read_meta(meta)
    why = _refusal(base, [s for s, _ in _device_files(base, m)])
    if why:
        return "refused", why
    try:
        size_ok = int(m.get("size", "-1")) == so.stat().st_size
    except (ValueError, OSError):
        size_ok = False
    if not size_ok or not _device_code_ok(base, m):
        return "corrupt", None
    if verify and m.get("hash", "").lower() != _fnv1a_hex(so):
        return "corrupt", None
    return "complete", None


def _device_files(base, m):
    """(suffix, recorded size) of each device code file an NVRTC entry's .meta records."""
    out = []
    for word, value in m.items():
        if word == "ptx_size":
            out.append((".ptx", value))
        elif word.startswith("cubin_") and word.endswith("_size"):
            out.append((f".{word[len('cubin_'):-len('_size')]}.cubin", value))
    return out


def _device_code_ok(base, m):
    """Whether the device code files an NVRTC entry's .meta records have those sizes."""
    for suffix, value in _device_files(base, m):
        try:
            if Path(base + suffix).stat().st_size != int(value):
                return False
        except (ValueError, OSError):
            return False
    return True


def _pch_state(base, meta, kinds):
    """A precompiled layer's (state, reason): only the sizes of its .gch files and .o are checked
    against the .meta (the C++ side does the same); a mark another user left counts as absent."""
    gch, obj, lean = Path(f"{base}.hpp.gch"), Path(f"{base}.o"), Path(f"{base}.lean.hpp.gch")
    if "failed" in kinds and _problem(Path(f"{base}.failed")) == "":
        return "failed", None
    why = _refusal(base, (".hpp.gch", ".o", ".meta", ".hpp", ".lean.hpp.gch", ".lean.hpp"))
    if why:
        return "refused", why
    if not all(p.is_file() for p in (gch, obj, lean, meta)):
        return ("pending" if kinds <= {"seen", "lock", "failed"} else "partial"), None
    try:
        m = _read_meta(meta)
        return ("complete" if int(m.get("size", "-1")) == gch.stat().st_size
                and int(m.get("object_size", "-1")) == obj.stat().st_size
                and int(m.get("lean_size", "-1")) == lean.stat().st_size else "corrupt"), None
    except (ValueError, OSError):
        return "corrupt", None


def _lock_held(lock):
    """Whether another process holds the entry's lock now (tested without waiting)."""
    try:  # never creates one, never follows a symlink, never blocks on a FIFO
        fd = os.open(lock, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        return e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES)
    finally:
        os.close(fd)  # closing releases a lock taken here
    return False


def _existing_dir(directory):
    d = Path(directory) if directory is not None else cache_dir()
    if not d.exists():
        raise CacheMissingError(f"no plugin cache at {d} (nothing has been compiled into it yet; "
                                "set ISTHMUS_CACHE_DIR to choose another)")
    if not d.is_dir():
        raise CacheError(f"the plugin cache path {d} is not a directory")
    return d


def entries(directory=None, *, verify=False):
    """The cache's entries, sorted by name then key. `directory` defaults to cache_dir();
    verify=True also checks each .so's hash against its .meta. Raises CacheMissingError when
    the directory does not exist. See Note [cache layout, read from Python]."""
    d = _existing_dir(directory)
    dir_why = _dir_distrust(d.stat())
    groups = {}
    for p in d.iterdir():
        m = _FILE.match(p.name)
        if not m:
            continue
        try:
            st = p.lstat()
        except OSError:
            continue  # removed meanwhile
        if not stat.S_ISDIR(st.st_mode):  # a symlink or a FIFO planted there is listed too
            groups.setdefault((m["name"], m["key"]), []).append((m["part"], p, st))
    out = []
    for (name, key), parts in groups.items():
        kinds = {part for part, _, _ in parts}
        if kinds == {"lock"}:
            continue  # See Note [clearing under the lock]
        stem = d / f"{name}-{key}"
        stats = [st for part, _, st in parts if part != "lock"]
        meta = _read_meta(Path(f"{stem}.meta"))
        if dir_why:
            state, reason = "refused", f"the cache directory {dir_why}"
        else:
            state, reason = _state(Path(f"{stem}.so"), Path(f"{stem}.meta"), verify, kinds)
        out.append(CacheEntry(
            name=name, key=key, files=[p for _, p, _ in parts],
            size=sum(st.st_size for st in stats), mtime=max(st.st_mtime for st in stats),
            source_kind=("cuda" if "cu" in kinds else "c++" if "cpp" in kinds
                         else "pch" if kinds & {"hpp", "hpp.gch", "seen", "failed"} else None),
            compiler=meta.get("compiler") or None,
            state=state, reason=reason,
            busy=_lock_held(Path(f"{stem}.lock"))))
    return sorted(out, key=lambda e: (e.name, e.key))


def _parse_key(text):
    m = _KEY.match(text)
    if not m:
        raise CacheKeyError(f"not a cache key: {text!r} (expected the 16 hex digits of a key, or "
                            "NAME-KEY as `list` shows it)")
    return m["name"], m["key"].lower()


def _remove_entry(d, entry):
    """Removes an entry's files (the lock kept) while holding its lock; False when a build
    holds it. See Note [clearing under the lock]."""
    fd = _open_lock(d / f"{entry.stem}.lock")
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                return False
            raise
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


def _open_lock(lock):
    """The entry's lock file, opened as compile_string opens it (See Note [cache trust model]: no
    symlink followed, mode 0600); a planted one (a symlink, a FIFO, another user's file) is
    removed first."""
    for attempt in (0, 1):
        why = ""
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
                         | os.O_NONBLOCK, 0o600)
        except OSError as e:
            if e.errno not in (errno.ELOOP, errno.EISDIR):
                raise
            fd, why = None, "is a symlink" if e.errno == errno.ELOOP else "is not a regular file"
        if fd is not None:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                why = "is not a regular file"
            elif st.st_uid not in (os.geteuid(), 0):
                why = f"has a foreign owner (uid {st.st_uid})"
            if not why:
                return fd
            os.close(fd)
        try:
            if attempt:
                raise PermissionError(errno.EPERM, "planted twice")
            os.unlink(lock)
        except OSError as e:
            raise CacheError(f"the lock file {lock} {why} and cannot be removed: "
                             f"{e.strerror}") from None
    raise AssertionError("not reached")


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
    lock = d / "finishing.lock"
    if not lock.exists():
        return True
    fd = _open_lock(lock)
    deadline = None if timeout is None else time.monotonic() + float(timeout)
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except OSError as e:
                if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.02)
    finally:
        os.close(fd)  # releases the lock taken here


# ---- the command line ---------------------------------------------------------------------------

def _human_size(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"  # not reached


def _human_age(seconds):
    for size, unit in ((86400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size:
            return f"{seconds / size:.1f}{unit}"
    return f"{seconds:.0f}s"


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # a typed error instead of SystemExit (main() maps it to 2)
        raise CacheUsageError(f"{self.prog}: {message}")


def _parser():
    p = _Parser(prog="python -m isthmus.cache",
                description="List, measure and clear the isthmus compile_string plugin cache.")
    p.add_argument("--dir", help="the cache directory (default: as q.plugin_cache_dir())")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    sub.add_parser("path", help="print the cache directory")
    ls = sub.add_parser("list", help="list the entries")
    ls.add_argument("--json", action="store_true", help="one JSON array")
    ls.add_argument("--verify", action="store_true", help="also check each .so's hash")
    sz = sub.add_parser("size", help="total bytes and number of entries")
    sz.add_argument("--json", action="store_true", help="one JSON object")
    cl = sub.add_parser("clear", help="remove entries (all, --older-than DAYS, or KEY)")
    cl.add_argument("key", nargs="?", help="16 hex digits, or NAME-KEY as `list` shows")
    cl.add_argument("--older-than", type=float, metavar="DAYS",
                    help="only entries last written more than DAYS days ago")
    wt = sub.add_parser("wait", help="wait for the optimised builds an exited script left")
    wt.add_argument("--timeout", type=float, metavar="SECONDS",
                    help="give up after SECONDS (exit code 1)")
    return p


def main(argv=None, *, stdout=None, stderr=None):
    """Runs the command line (argv without the program name; default sys.argv[1:]) and returns
    the exit code: 0 done, 1 `clear` skipped busy entries or `wait` timed out, 2 an error."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    try:
        try:
            args = _parser().parse_args(sys.argv[1:] if argv is None else list(argv))
        except SystemExit as e:  # --help
            return e.code if isinstance(e.code, int) else 0
        if args.command == "path":
            print(Path(args.dir) if args.dir else cache_dir(), file=out)
            return 0
        if args.command == "list":
            es = entries(args.dir, verify=args.verify)
            now = time.time()
            if args.json:
                print(json.dumps([e.as_json(now) for e in es], indent=1), file=out)
                return 0
            rows = [("ENTRY", "SIZE", "AGE", "SOURCE", "COMPILER", "STATE")]
            for e in es:
                state = e.state + (f": {e.reason}" if e.reason else "") + (
                    ", building" if e.busy else "")
                rows.append((e.stem, _human_size(e.size), _human_age(e.age(now)),
                             e.source_kind or "-", e.compiler or "-", state))
            widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
            for r in rows:
                print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip(), file=out)
            return 0
        if args.command == "size":
            es = entries(args.dir)
            total = sum(e.size for e in es)
            if args.json:
                print(json.dumps({"bytes": total, "entries": len(es)}), file=out)
            else:
                print(f"{total} bytes ({_human_size(total)}) in {len(es)} entries", file=out)
            return 0
        if args.command == "wait":
            if wait_for_finishers(args.dir, timeout=args.timeout):
                return 0
            print(f"isthmus.cache: a detached build still runs after {args.timeout:g} s",
                  file=err)
            return 1
        removed, busy = clear(args.dir, older_than_days=args.older_than, key=args.key)
        freed = sum(e.size for e in removed)
        print(f"removed {len(removed)} entries ({_human_size(freed)})", file=out)
        for e in busy:
            print(f"isthmus.cache: skipped {e.stem}: a compile holds its lock", file=err)
        return 1 if busy else 0
    except CacheError as e:
        print(f"isthmus.cache: error: {e}", file=err)
        return 2


if __name__ == "__main__":
    sys.exit(main())
