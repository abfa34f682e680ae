"""The plugin cache's files as Python reads them: their names, the trust checks compile_string
applies to them, the .meta, and their locks (for isthmus.cache)."""

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
# `object_size` and `lean_size`), beside <stem>.hpp, <stem>.lean.hpp and <stem>.support.cpp,
# and <stem>.seen or <stem>.failed (an entry of those alone is "pending"
# or "failed"); `list` shows its source kind as "pch".
# An entry is complete when its .so and .meta exist and the .meta matches the .so's size (and,
# with `list --verify`, its hash: hashing a large .so byte by byte in Python takes a while, so
# it is asked for). It is refused, whatever else holds, when compile_string would refuse it
# (Note [cache trust model] in plugins/src/compile_cache.cpp): the directory is another user's
# or writable by group or others without the sticky bit, or a file compile_string reads (the
# .so, the .meta, the device code its .meta records; the precompiled layer's .hpp.gch, .o, .hpp,
# .lean.hpp.gch, .lean.hpp and .meta) is a symlink, not a regular file, another user's (not
# root's), writable by group or others, or hard-linked; the reason is given in the same words as
# the C++ side's. Files that match no stem are never listed, counted or removed.

import errno
import fcntl
import os
import re
import stat
from pathlib import Path

META_MAGIC = "isthmus-plugin-cache-1"
# The lock the detached builds of an exited script share (See Note [finishing lock] in
# isthmus/_finish_builds.py); its name matches no entry's stem.
FINISHING_LOCK = "finishing.lock"

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


def _try_lock(fd):
    """Takes an exclusive flock on `fd` without waiting: True when taken, False when another
    process holds one (other errors raise)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError as e:
        if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return False
        raise


def _lock_held(lock):
    """Whether another process holds the entry's lock now (tested without waiting)."""
    try:  # never creates one, never follows a symlink, never blocks on a FIFO
        fd = os.open(lock, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        return not _try_lock(fd)
    except OSError:
        return False
    finally:
        os.close(fd)  # closing releases a lock taken here
