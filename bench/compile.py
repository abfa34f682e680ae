"""Kernel compile times beside Quadrants and Numba, as ratios: how long a user waits.

Usage (after a build; the peers from `scripts/deps --bench-peers`, a missing one is left out):
    PYTHONPATH=build/python python3 bench/compile.py [--repeat N] [--libs isthmus,numba,...]
A --libs entry `isthmus+VAR=VALUE` runs isthmus with that environment variable, beside plain
isthmus (`isthmus+ISTHMUS_DIRECT_LINK=0`: the quick build linked by the compiler driver).

Each library runs the same script in a new Python process with fresh cache directories: import,
initialise (CPU), then compile and launch three small saxpy kernels, each a new kernel (another
constant, another name), on 4096 float32 elements, checking the result. Then the same script again
on the now warm caches (cached load in a new process). The libraries take turns in each of N
repeats (default 3); rows, the median of the N runs:
  - the whole script, fresh caches (process start to exit, as a user's `python script.py`);
  - import + init;
  - kernel 1, 2, 3: compile + first launch, fresh caches (kernel 1 is a new user's first kernel;
    2 and 3 are the edit loop: a new kernel in a running process);
  - cached load in a new process: compile (or cache lookup) + first launch of kernel 1;
  - isthmus alone: the compile_string call of that cached load.
isthmus's kernel rows time the quick -O1 build compile_string returns first; its -O3 build
replaces it in the background (Note [compile tiers] in plugins/src/compile_tiers.cpp), and the
builds left at exit are finished by a detached process, so the cached load of the next run is the
optimised build (the warm run starts after it: `python -m isthmus.cache wait`).
Ratios are isthmus's time over the peer's (below 1: isthmus is faster), the median of the
repeats' ratios. Not a test: timings never
gate CI.
"""
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
REPEAT = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 3
LIBS = (sys.argv[sys.argv.index("--libs") + 1].split(",") if "--libs" in sys.argv
        else ["isthmus", "quadrants", "numba"])

# The child scripts: each prints one JSON line of seconds. `K` kernels, distinct constants.
PRELUDE = """
import json, os, sys, time
t0 = time.perf_counter()
import numpy as np
"""

# A peer's three kernels (module `kernels`), each timed from its first call (CALL: `kernel`
# called on x and y, and whatever waits for it).
PEER_RUNS = """
out = {"init": t_init, "kernels": []}
x = np.arange(4096, dtype=np.float32)
for k in range(3):
    y = np.zeros(4096, dtype=np.float32)
    kernel = getattr(kernels, f"bench_saxpy{k}")
    t = time.perf_counter()
    CALL
    out["kernels"].append(time.perf_counter() - t)
    assert np.array_equal(y, 2 * x + (k + 1))
print(json.dumps(out))
"""

CHILD = {
    "isthmus": PRELUDE + """
import isthmus as q
q.init("cpu")
t_init = time.perf_counter() - t0
SRC = '''namespace ip = isthmus::plugin;
ISTHMUS_PLUGIN(NAME, m) {
    m.kernel("NAME", [](ip::view<const float, 1> x, ip::view<float, 1> y, float a, int64_t i) {
        y(i) = a * x(i) + CONSTf;
    }, {"x", "y", "a"});
}'''
out = {"init": t_init, "kernels": [], "compile_only": []}
x = np.arange(4096, dtype=np.float32)
for k in range(3):
    name = f"bench_saxpy{k}"
    y = q.value(np.zeros(4096, dtype=np.float32))
    t = time.perf_counter()
    mod = q.compile_string(name, SRC.replace("NAME", name).replace("CONST", f"{k + 1}.0"))
    out["compile_only"].append(time.perf_counter() - t)
    q.parallel_do(4096, q.value(x), y, 2.0, getattr(mod, name))
    out["kernels"].append(time.perf_counter() - t)
    assert np.array_equal(np.asarray(y), 2 * x + (k + 1))
print(json.dumps(out))
""",
    "quadrants": PRELUDE + """
import quadrants as qd
qd.init(arch=qd.cpu, offline_cache=True, offline_cache_file_path=os.environ["BENCH_CACHE"],
        log_level="error")
t_init = time.perf_counter() - t0
sys.path.insert(0, os.environ["BENCH_CACHE"])
import kernels_quadrants as kernels  # Quadrants reads a kernel's source from its file
""" + PEER_RUNS.replace("CALL", "kernel(x, y, 2.0); qd.sync()"),
    "numba": PRELUDE + """
import numba
t_init = time.perf_counter() - t0
sys.path.insert(0, os.environ["BENCH_CACHE"])
import kernels_numba as kernels  # cache=True needs a source file
""" + PEER_RUNS.replace("CALL", "kernel(x, y, np.float32(2.0))"),
}

# The peers' kernels, a module each: both read a kernel's source from its file.
MODULES = {
    "quadrants": "import quadrants as qd\nnd = qd.types.ndarray\n" + "".join(f"""
@qd.kernel
def bench_saxpy{k}(x: nd(dtype=qd.f32, ndim=1), y: nd(dtype=qd.f32, ndim=1), a: qd.f32):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + {k + 1}.0
""" for k in range(3)),
    "numba": "import numba\nimport numpy as np\n" + "".join(f"""
@numba.njit(cache=True)
def bench_saxpy{k}(x, y, a):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + np.float32({k + 1}.0)
""" for k in range(3)),
}


def child_env(cache):
    # The child runs in the cache folder: a relative PYTHONPATH (build/python) is made absolute.
    pythonpath = os.pathsep.join(str(pathlib.Path(d).resolve()) for d in
                                 os.environ.get("PYTHONPATH", "").split(os.pathsep) if d)
    return dict(os.environ, BENCH_CACHE=str(cache), ISTHMUS_CACHE_DIR=str(cache / "isthmus"),
                NUMBA_CACHE_DIR=str(cache / "numba"), ISTHMUS_VERBOSE="0", PYTHONPATH=pythonpath)


def variant(lib):
    """(library, extra environment) of a --libs entry: `isthmus+VAR=VALUE[+...]` is isthmus run
    with those variables (`isthmus+ISTHMUS_DIRECT_LINK=0`: the quick build linked by the driver),
    timed beside plain isthmus."""
    base, *settings = lib.split("+")
    return base, dict(s.split("=", 1) for s in settings)


def run_child(lib, cache):
    base, extra = variant(lib)
    if base in MODULES:
        (cache / f"kernels_{base}.py").write_text(MODULES[base])
    env = dict(child_env(cache), **extra)
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(CHILD[base])], env=env,
                       capture_output=True, text=True, cwd=cache)
    wall = time.perf_counter() - t
    if r.returncode != 0:
        raise RuntimeError(f"{lib}: {r.stderr.strip().splitlines()[-1:]}")
    out = json.loads(r.stdout.strip().splitlines()[-1])
    out["wall"] = wall
    return out


def available(lib):
    try:
        __import__(variant(lib)[0])
        return True
    except ImportError:
        return False


def measure_once(lib):
    """One fresh run and one warm run of `lib`'s script: {row: seconds}."""
    with tempfile.TemporaryDirectory(prefix=f"bench-compile-{lib}-") as tmp:
        cache = pathlib.Path(tmp)
        fresh = run_child(lib, cache)
        isthmus = variant(lib)[0] == "isthmus"
        if isthmus:  # the detached process that finishes the optimised builds
            wait_for_finishers(cache)
        warm = run_child(lib, cache)
        if isthmus:
            wait_for_finishers(cache)
    got = {"script, fresh caches": fresh["wall"], "import + init": fresh["init"],
           "kernel 1 (first, fresh cache)": fresh["kernels"][0],
           "kernel 2 (new kernel, running process)": fresh["kernels"][1],
           "kernel 3 (new kernel, running process)": fresh["kernels"][2],
           "cached load in a new process": warm["kernels"][0]}
    if "compile_only" in warm:
        got["isthmus: compile_string of a cached load"] = warm["compile_only"][0]
    return got


def wait_for_finishers(cache):
    subprocess.run([sys.executable, "-m", "isthmus.cache", "--dir", str(cache / "isthmus"),
                    "wait", "--timeout", "300"], env=child_env(cache), check=True)


def measure(libs):
    """{lib: {row: median seconds}} and {peer: {row: median of isthmus/peer}}: the libraries
    take turns within each repeat, so a ratio compares runs minutes apart at most (a VM's speed
    drifts more than that over a whole benchmark)."""
    runs = {lib: [] for lib in libs}
    for _ in range(REPEAT):
        for lib in libs:
            runs[lib].append(measure_once(lib))
    medians = {lib: {row: statistics.median(r[row] for r in rs) for row in rs[0]}
               for lib, rs in runs.items()}
    ratios = {}
    if "isthmus" in runs:
        for p in libs:
            if p != "isthmus":
                ratios[p] = {row: statistics.median(a[row] / b[row] for a, b in
                                                    zip(runs["isthmus"], runs[p]))
                             for row in runs[p][0]}
    return medians, ratios


def fmt(t):
    return f"{t * 1e3:8.1f} ms" if t < 1 else f"{t:8.2f} s "


def main():
    libs = [lib for lib in LIBS if available(lib)]
    print(f"machine: {os.uname().machine}, {os.cpu_count()} cores; median of {REPEAT}, "
          f"fresh cache directories; {', '.join(libs)}; ratios: the median of each repeat's")
    results, ratios = measure(libs)
    width = {lib: max(12, len(lib) + 1) for lib in libs}  # a variant's name is long
    rwidth = {p: max(12, len(p) + 3) for p in ratios}
    header = f"{'':44s}" + "".join(f"{lib:>{width[lib]}s}" for lib in libs)
    header += "".join(f"{'/ ' + p:>{rwidth[p]}s}" for p in ratios)
    print(header)
    for row in results[libs[0]]:
        line = f"{row:44s}"
        for lib in libs:
            v = results[lib].get(row)
            line += f"{fmt(v) if v is not None else '':>{width[lib]}s}"
        for p in ratios:
            r = ratios[p].get(row)
            line += f"{f'{r:.2f}x' if r is not None else '':>{rwidth[p]}s}"
        print(line)


if __name__ == "__main__":
    main()
