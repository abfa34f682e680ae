"""The compile tests' shared parts: which C++ compiler compile_string runs ($CXX, default g++),
asked once, and a one-function plugin to compile under many names."""
import functools
import os
import shutil
import subprocess

import isthmus as q

SCALED_SOURCE = """
ISTHMUS_PLUGIN({name}, m) {{
    m.def("{name}_f", [](double x) {{ return x * {k}; }}, {{"x"}});
}}
"""


def compile_scaled(name, k):
    """Compiles SCALED_SOURCE as plugin `name` (its function `<name>_f` multiplies by k), checks
    the function and returns the module."""
    mod = q.compile_string(name, SCALED_SOURCE.format(name=name, k=k))
    assert getattr(mod, f"{name}_f")(2.0) == 2.0 * k
    return mod


def layer_files(cache, part):
    """The precompiled layer's files in `cache` whose name ends in exactly `.part` after the stem
    ("hpp" is the full header, not the kernel half's "lean.hpp")."""
    return sorted(p for p in cache.glob("isthmus-pch-*") if p.name.split(".", 1)[1] == part)


@functools.cache
def cxx_is_gcc():
    """True when $CXX (default g++) is GCC, for whose compiles alone the precompiled author layer
    is built; $CXX may be a wrapper script (the sanitizer gate's tests/sanitizer/cxx runs clang)."""
    cmd = os.environ.get("CXX", "g++").split()
    if not cmd or shutil.which(cmd[0]) is None:
        return False
    try:
        out = subprocess.run(cmd + ["--version"], capture_output=True, text=True,
                             timeout=60).stdout.lower()
    except (OSError, subprocess.SubprocessError):
        return False
    return "clang" not in out and ("gcc" in out or "free software foundation" in out)


@functools.cache
def clang_command():
    """A Clang to compile plugins with: $CXX when it is Clang (the sanitizer gate's wrapper), else
    clang++ or clang++-16 on PATH; None without one."""
    cmd = os.environ.get("CXX", "").split()
    if cmd and shutil.which(cmd[0]):
        try:
            out = subprocess.run(cmd + ["--version"], capture_output=True, text=True,
                                 timeout=60).stdout
        except (OSError, subprocess.SubprocessError):
            out = ""
        if "clang version" in out:
            return os.environ["CXX"]
    for name in ("clang++", "clang++-16"):
        if shutil.which(name):
            return name
    return None
