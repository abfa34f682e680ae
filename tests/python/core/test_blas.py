# The BLAS behind the CPU matmul: which library and kernels it runs (q.build_info()), its thread
# count beside the OpenMP pool, and results that match NumPy's after NumPy's own BLAS has run.
import json
import pathlib
import platform

import numpy as np
import pytest

import isthmus as q

# OpenBLAS kernel sets of CPUs without AVX2: what a library older than the CPU falls back to
# ("Prescott" is the generic x86-64 one; Debian 12's OpenBLAS picks it on Zen 4).
PRE_AVX2_CORES = {"prescott", "katmai", "coppermine", "northwood", "banias", "atom", "core2",
                  "penryn", "dunnington", "nehalem", "sandybridge", "opteron", "opteron_sse3",
                  "barcelona", "bobcat", "bulldozer", "piledriver", "steamroller", "nano",
                  "generic", "unknown"}


def cpu_has_avx2():
    if platform.machine() not in ("x86_64", "AMD64"):
        return False
    try:
        text = pathlib.Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    flags = next((line for line in text.splitlines() if line.startswith("flags")), "")
    return "avx2" in flags.split()


def blas():
    return q.build_info()["blas"]


def test_build_info_names_the_blas():
    info = q.build_info()
    assert info["version"] == q.__version__
    assert info["openmp_threads"] >= 1
    b = info["blas"]
    assert b["name"] in ("scipy-openblas32", "OpenBLAS (system)")
    assert b["version"][:1].isdigit() and b["version"] in b["config"]
    assert b["core"] and b["core"] in b["config"]
    assert b["threads"] >= 1


@pytest.mark.skipif(not cpu_has_avx2(), reason="needs an x86-64 CPU with AVX2")
def test_blas_kernels_know_this_cpu():
    b = blas()
    if b["name"] != "scipy-openblas32":
        pytest.skip(f"built against {b['name']} (ISTHMUS_BLAS=SYSTEM or scipy-openblas32 missing)")
    assert b["core"].lower() not in PRE_AVX2_CORES, b


def test_blas_is_the_one_in_the_process_maps():
    # The library actually mapped is the one build_info names (not a system libopenblas found
    # first on the loader's path).
    maps = pathlib.Path("/proc/self/maps")
    if not maps.exists():
        pytest.skip("no /proc/self/maps")
    q.matmul(q.ones(4, 4), q.ones(4, 4))
    text = maps.read_text()
    if blas()["name"] == "scipy-openblas32":
        assert "scipy_openblas32/lib/libscipy_openblas.so" in text
    else:
        assert "libopenblas" in text


@pytest.mark.parametrize("dtype,tol", [(np.float32, 2e-5), (np.float64, 1e-12),
                                       (np.complex64, 2e-5), (np.complex128, 1e-12)])
def test_matmul_after_numpy_matmul(dtype, tol):
    # NumPy's own OpenBLAS (scipy-openblas64) runs first; ours must still pick its kernels and
    # give NumPy's results, for sizes OpenBLAS threads (> 2^18 multiply-adds) and ones it does
    # not, plain and transposed.
    rng = np.random.default_rng(7)

    def rand(*shape):
        x = rng.standard_normal(shape)
        if np.issubdtype(dtype, np.complexfloating):
            x = x + 1j * rng.standard_normal(shape)
        return x.astype(dtype)

    core = blas()["core"]
    for m, k, n in [(384, 320, 352), (33, 17, 29), (1, 300, 257), (300, 257, 1)]:
        a, b = rand(m, k), rand(k, n)
        ref = a.astype(np.complex128) @ b.astype(np.complex128)
        np_result = a @ b  # NumPy's BLAS first, then ours
        for x, y in [(a, b), (a.T.copy().T, b), (a, b.T.copy().T)]:
            got = np.asarray(q.matmul(q.value(x), q.value(y)))
            assert got.dtype == dtype and got.shape == (m, n)
            scale = np.max(np.abs(ref)) * k
            assert np.max(np.abs(got - ref)) <= tol * scale
            assert np.max(np.abs(got - np_result)) <= tol * scale
    assert blas()["core"] == core


def test_batched_matmul_matches_numpy_between_numpy_calls():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((6, 96, 80)).astype(np.float32)
    b = rng.standard_normal((80, 64)).astype(np.float32)
    for _ in range(3):
        expected = a @ b
        got = np.asarray(q.matmul(q.value(a), q.value(b)))
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


THREADS_SNIPPET = """
    import json, isthmus as q
    q.init("cpu")
    info = q.build_info()
    print(json.dumps({"blas": info["blas"]["threads"], "omp": info["openmp_threads"]}))
"""


def json_from_fresh_process(run_python, monkeypatch, snippet, **env):
    """The JSON the snippet prints last, run in a fresh process with exactly the thread
    settings in env (the others unset)."""
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS",
                 "ISTHMUS_BLAS_THREADS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return json.loads(run_python(snippet).stdout.strip().splitlines()[-1])


def threads_in_fresh_process(run_python, monkeypatch, **env):
    return json_from_fresh_process(run_python, monkeypatch, THREADS_SNIPPET, **env)


def test_blas_threads_follow_the_openmp_pool(run_python, monkeypatch):
    t = threads_in_fresh_process(run_python, monkeypatch)
    assert t["blas"] == t["omp"]
    t = threads_in_fresh_process(run_python, monkeypatch, OMP_NUM_THREADS="1")
    assert t == {"blas": 1, "omp": 1}


def test_openblas_num_threads_wins_for_blas(run_python, monkeypatch):
    t = threads_in_fresh_process(run_python, monkeypatch, OPENBLAS_NUM_THREADS="1",
                                 OMP_NUM_THREADS="2")
    assert t == {"blas": 1, "omp": 2}


# See Note [one BLAS pool for the process]: NumPy's own OpenBLAS (0.3.28 or newer, a pthread build)
# runs its threaded products on isthmus's OpenMP pool once isthmus is imported.
SHARED_SNIPPET = """
    import json, os, threading
    import numpy as np
    import isthmus as q
    q.init("cpu")
    before = q.build_info()["blas"]
    rng = np.random.default_rng(5)
    a = rng.standard_normal((512, 384)).astype(np.float32)
    b = rng.standard_normal((384, 448)).astype(np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    errors = []

    def check(got):
        errors.append(float(np.max(np.abs(got - ref)) / np.max(np.abs(ref))))

    check(a @ b)  # NumPy's threaded sgemm
    # NumPy's and isthmus's threaded products from four threads at once
    def work(i):
        for _ in range(5):
            check(a @ b if i % 2 else np.asarray(q.matmul(q.value(a), q.value(b))))
    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # a forked child: NumPy's jobs run on the child's own OpenMP pool
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        err = float(np.max(np.abs(a @ b - ref)) / np.max(np.abs(ref)))
        os.write(w, json.dumps(err).encode())
        os._exit(0)
    os.waitpid(pid, 0)
    errors.append(json.loads(os.read(r, 100)))
    after = q.build_info()["blas"]
    print(json.dumps({"pools": after["shared_pools"], "before": before["shared_calls"],
                      "after": after["shared_calls"], "worst": max(errors),
                      "count": len(errors)}))
"""


def numpy_openblas_shares():
    """Whether NumPy's BLAS is an OpenBLAS that takes a jobs callback (0.3.28+, pthreads)."""
    cfg = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    if "openblas" not in cfg.get("name", ""):
        return False
    parts = [int(p) for p in cfg.get("version", "0.0.0").split(".")[:3]]
    config = cfg.get("openblas configuration", "").lower()
    return tuple(parts) >= (0, 3, 28) and "openmp" not in config


def shared_run(run_python, monkeypatch, **env):
    return json_from_fresh_process(run_python, monkeypatch, SHARED_SNIPPET, **env)


def test_numpy_blas_runs_on_the_openmp_pool(run_python, monkeypatch):
    got = shared_run(run_python, monkeypatch, OMP_NUM_THREADS="2")
    assert got["count"] == 22 and got["worst"] < 1e-5
    if numpy_openblas_shares() and blas()["name"] == "scipy-openblas32":
        assert got["pools"] >= 1
        # NumPy's 11 threaded products in the parent ran their jobs on isthmus's pool
        assert got["after"] - got["before"] >= 11
    else:
        assert got["pools"] == 0 and got["after"] == got["before"] == 0


def test_isthmus_blas_threads_openblas_leaves_numpy_alone(run_python, monkeypatch):
    got = shared_run(run_python, monkeypatch, OMP_NUM_THREADS="2",
                     ISTHMUS_BLAS_THREADS="openblas")
    assert got["count"] == 22 and got["worst"] < 1e-5
    assert got["pools"] == 0 and got["after"] == got["before"] == 0
