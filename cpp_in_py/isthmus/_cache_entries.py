"""The plugin cache's entries as `python -m isthmus.cache list` shows them: each entry's files,
size, age and state (See Note [cache layout, read from Python] in isthmus/_cache_files.py)."""

import dataclasses
import os
import stat
import time
from pathlib import Path

from ._cache_files import (_FILE, _KEY, CacheError, CacheKeyError, CacheMissingError,
                           _dir_distrust, _fnv1a_hex, _lock_held, _problem, _read_meta, _refusal)


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
