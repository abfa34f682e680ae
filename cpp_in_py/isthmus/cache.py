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
# The cache's files and their trust checks are read in isthmus/_cache_files.py (Note [cache
# layout, read from Python]), its entries listed in isthmus/_cache_entries.py, and what runs
# under the cache's locks (clear, wait) is in isthmus/_cache_locked.py (Note [clearing under the
# lock]).

import argparse
import json
import sys
import time
from pathlib import Path

from ._cache_entries import CacheEntry, cache_dir, entries
from ._cache_files import (META_MAGIC, CacheError, CacheKeyError, CacheMissingError,
                           CacheUsageError)
from ._cache_locked import clear, wait_for_finishers

__all__ = [
    "CacheError", "CacheMissingError", "CacheKeyError", "CacheUsageError", "CacheEntry",
    "META_MAGIC", "cache_dir", "entries", "clear", "wait_for_finishers", "main",
]


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
