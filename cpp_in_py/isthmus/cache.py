"""`python -m isthmus.cache`: list, measure and clear the compile_string plugin cache."""

# Usage (docs/plugins.md, "Tooling"):
#
#     python -m isthmus.cache path
#     python -m isthmus.cache list [--json] [--verify]
#     python -m isthmus.cache size [--json]
#     python -m isthmus.cache clear [--older-than DAYS | KEY]
#
# Exit codes: 0 done; 1 `clear` left entries that a compile holds (they are named on stderr);
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
#   <stem>.{so,cpp,cu,meta}.tmp.<pid>, <stem>.log.<pid>   a build's temporary files (the
#                       precompiled layer's also .o.log.<pid> and its parts' .tmp.<pid>)
# The precompiled author layer (Note [precompiled plugin header] in
# plugins/src/precompiled_header.cpp) is an entry of the same shape named `isthmus-pch`: its
# artefacts are <stem>.hpp.gch in place of the .so and the support object <stem>.o (complete
# when the .meta records both sizes: `size` and `object_size`), beside <stem>.hpp and
# <stem>.support.cpp, and <stem>.seen or <stem>.failed (an entry of those alone is "pending"
# or "failed"); `list` shows its source kind as "pch".
# An entry is complete when its .so and .meta exist and the .meta matches the .so's size (and,
# with `list --verify`, its hash: hashing a large .so byte by byte in Python takes a while, so
# it is asked for). Files that match no stem are never listed, counted or removed.
#
# Note [clearing under the lock]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A build holds an exclusive flock on <stem>.lock while it writes the entry. `clear` takes the
# same lock without waiting (fcntl.flock on the same file, LOCK_EX | LOCK_NB) before removing an
# entry's files; an entry whose lock is held is skipped and reported (exit code 1), so nothing a
# running compile writes is removed under it. The .lock file itself is kept (an empty file):
# removing it while a waiting compile has it open would let that compile lock the removed file
# while the next one locks a new file of the same name, and both would build at once. Lock-only
# stems are not entries (`list` and `size` skip them). What the lock cannot cover: a process
# whose lock-free fast path has just validated a .so may find it gone when it opens it (it then
# raises); clear the cache when no compile is starting.

import argparse
import dataclasses
import errno
import fcntl
import json
import os
import re
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
    r"\.(?P<part>cpp|cu|so|meta|lock|hpp|hpp\.gch|support\.cpp|o|seen|failed|ptx|sm_\w+\.cubin"
    r"|(?:so|cpp|cu|meta|hpp|hpp\.gch|support\.cpp|o|seen|failed|ptx|sm_\w+\.cubin)\.tmp\.\d+"
    r"|(?:o\.)?log\.\d+)$")
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
    state: str  # "complete", "corrupt" (the .meta does not match the artefact), "partial";
    # for the precompiled header also "pending" (compiled once, not built yet) or "failed"
    busy: bool  # a build holds the lock now

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
                "busy": self.busy, "files": sorted(p.name for p in self.files)}


def _fnv1a_hex(path):
    """The 64-bit FNV-1a hash of a file, as the .meta records it (16 hex digits)."""
    h = 1469598103934665603
    mask = (1 << 64) - 1
    with open(path, "rb") as f:
        while chunk := f.read(1 << 16):
            for b in chunk:
                h = ((h ^ b) * 1099511628211) & mask
    return f"{h:016x}"


def _read_meta(path):
    """The .meta's words as a dict ({} when it is unreadable or has another magic line)."""
    try:
        lines = path.read_text(errors="replace").splitlines()
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


def _state(so, meta, verify, kinds=()):
    if "hpp.gch" in kinds or "hpp" in kinds or "seen" in kinds or "failed" in kinds:
        base = meta.with_suffix("")
        return _pch_state(Path(f"{base}.hpp.gch"), Path(f"{base}.o"), meta, kinds)
    if not so.is_file() or not meta.is_file():
        return "partial"
    m = _read_meta(meta)
    try:
        size_ok = int(m.get("size", "-1")) == so.stat().st_size
    except (ValueError, OSError):
        size_ok = False
    if not size_ok or not _device_code_ok(meta, m):
        return "corrupt"
    if verify and m.get("hash", "").lower() != _fnv1a_hex(so):
        return "corrupt"
    return "complete"


def _device_code_ok(meta, m):
    """Whether the device code files an NVRTC entry's .meta records have those sizes."""
    base = str(meta.with_suffix(""))
    for word, value in m.items():
        if word == "ptx_size":
            path = Path(base + ".ptx")
        elif word.startswith("cubin_") and word.endswith("_size"):
            path = Path(f"{base}.{word[len('cubin_'):-len('_size')]}.cubin")
        else:
            continue
        try:
            if path.stat().st_size != int(value):
                return False
        except (ValueError, OSError):
            return False
    return True


def _pch_state(gch, obj, meta, kinds):
    """A precompiled layer's state: only the sizes of its .gch and .o are checked against the
    .meta (the C++ side does the same)."""
    if "failed" in kinds:
        return "failed"
    if not gch.is_file() or not obj.is_file() or not meta.is_file():
        return "pending" if kinds <= {"seen", "lock"} else "partial"
    try:
        m = _read_meta(meta)
        return ("complete" if int(m.get("size", "-1")) == gch.stat().st_size
                and int(m.get("object_size", "-1")) == obj.stat().st_size else "corrupt")
    except (ValueError, OSError):
        return "corrupt"


def _lock_held(lock):
    """Whether another process holds the entry's lock now (tested without waiting)."""
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CLOEXEC)  # never creates one
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
    groups = {}
    for p in d.iterdir():
        m = _FILE.match(p.name)
        if m and p.is_file():
            groups.setdefault((m["name"], m["key"]), []).append((m["part"], p))
    out = []
    for (name, key), parts in groups.items():
        kinds = {part for part, _ in parts}
        if kinds == {"lock"}:
            continue  # See Note [clearing under the lock]
        stem = d / f"{name}-{key}"
        data = [p for part, p in parts if part != "lock"]
        stats = [p.stat() for p in data]
        meta = _read_meta(Path(f"{stem}.meta"))
        out.append(CacheEntry(
            name=name, key=key, files=[p for _, p in parts],
            size=sum(s.st_size for s in stats), mtime=max(s.st_mtime for s in stats),
            source_kind=("cuda" if "cu" in kinds else "c++" if "cpp" in kinds
                         else "pch" if kinds & {"hpp", "hpp.gch", "seen", "failed"} else None),
            compiler=meta.get("compiler") or None,
            state=_state(Path(f"{stem}.so"), Path(f"{stem}.meta"), verify, kinds),
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
    fd = os.open(d / f"{entry.stem}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
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
                p.unlink(missing_ok=True)
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
    return p


def main(argv=None, *, stdout=None, stderr=None):
    """Runs the command line (argv without the program name; default sys.argv[1:]) and returns
    the exit code: 0 done, 1 `clear` skipped busy entries, 2 an error."""
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
                state = e.state + (", building" if e.busy else "")
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
