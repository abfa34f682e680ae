"""qvalues on Dask (dask.array, a distributed LocalCluster) and Ray (docs/scaling-out.md)."""
import os
import pathlib
import pickle

import numpy as np
import pytest

import isthmus as q

# A plugin each worker compiles with q.compile_string (one cache directory for all processes).
PLUGIN = "scale_out_axpb"
SOURCE = """
namespace ip = isthmus::plugin;
ISTHMUS_PLUGIN(scale_out_axpb, m) {
    m.def("so_axpb", [](ip::view<const double, 2> x, double a, double b) {
        ip::tensor<double, 2> y({x.size(0), x.size(1)});
        for (int64_t i = 0; i < x.size(0); ++i)
            for (int64_t j = 0; j < x.size(1); ++j) y(i, j) = a * x(i, j) + b;
        return y;
    }, {"x", "a", "b"});
}
"""

rng = np.random.default_rng(7)


@pytest.fixture(scope="module")
def shared_env(tmp_path_factory):
    """ISTHMUS_CACHE_DIR (one compile cache for this process and every worker) and a PYTHONPATH
    that finds this isthmus and this test module, set before any worker process starts."""
    cache = tmp_path_factory.mktemp("scale_out_cache")
    here = pathlib.Path(__file__).resolve().parent
    package_parent = pathlib.Path(os.path.abspath(q.__file__)).parent.parent  # (no symlinks resolved)
    saved = {k: os.environ.get(k) for k in ("ISTHMUS_CACHE_DIR", "PYTHONPATH")}
    os.environ["ISTHMUS_CACHE_DIR"] = str(cache)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(package_parent), str(here)] + ([saved["PYTHONPATH"]] if saved["PYTHONPATH"] else []))
    q.compile_string(PLUGIN, SOURCE)  # compiled once, here; the workers load it from the cache
    yield cache
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def axpb_on_worker(x, a, b):
    """Runs in a worker: loads the plugin from the shared cache and applies it to a qvalue."""
    import isthmus as q  # the worker's session was started by unpickling x

    mod = q.compile_string(PLUGIN, SOURCE)
    y = mod.so_axpb(x, a, b)
    return {"y": y, "pid": os.getpid(), "cache": q.plugin_cache_dir(), "kind": type(x).__name__}


def cached_plugins(cache):
    return sorted(p.name for p in pathlib.Path(cache).glob(f"{PLUGIN}-*.so"))


# ---- dask.array with qvalue chunks (threads, no cluster) ------------------------------------

def test_dask_array_of_qvalue_chunks_against_numpy():
    da = pytest.importorskip("dask.array")
    x = rng.standard_normal((40, 30))
    A = q.value(x)
    d = da.from_array(A, chunks=(16, 12), asarray=False, meta=q.zeros(0, 0, dtype="float64"))
    seen = []

    def block(b):
        seen.append(type(b))
        return q.exp(b) * 2 - b

    e = d.map_blocks(block, meta=q.zeros(0, 0, dtype="float64"))
    got = e.compute(scheduler="threads")
    np.testing.assert_allclose(np.asarray(got), np.exp(x) * 2 - x, rtol=1e-12)
    assert seen and all(t is q.qvalue for t in seen)  # the blocks were qvalues
    s = da.reduction(e, chunk=lambda b, axis, keepdims: b.sum(axis=axis, keepdims=keepdims),
                     aggregate=lambda b, axis, keepdims: np.sum(np.asarray(b), axis=axis,
                                                                keepdims=keepdims),
                     axis=0, dtype="float64", meta=np.zeros(0))
    np.testing.assert_allclose(np.asarray(s.compute(scheduler="threads")),
                               (np.exp(x) * 2 - x).sum(axis=0), rtol=1e-12)


# ---- dask.distributed: two worker processes ------------------------------------------------

@pytest.fixture(scope="module")
def dask_client(request):
    pytest.importorskip("dask")
    distributed = pytest.importorskip("distributed")
    request.getfixturevalue("shared_env")  # (after the skips: no compile when they skip)
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       host="127.0.0.1", dashboard_address=None)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def test_dask_workers_compile_a_plugin_and_run_it_on_qvalues(dask_client, shared_env):
    workers = sorted(dask_client.scheduler_info()["workers"])
    assert len(workers) == 2
    before = cached_plugins(shared_env)
    xs = [q.value(rng.standard_normal((5, 3 + i))) for i in range(len(workers))]
    futures = [dask_client.submit(axpb_on_worker, x, 2.0, -1.0, workers=[w], pure=False)
               for x, w in zip(xs, workers)]
    results = dask_client.gather(futures)
    assert len({r["pid"] for r in results}) == 2 and os.getpid() not in {r["pid"] for r in results}
    for x, r in zip(xs, results):
        assert r["kind"] == "qvalue" and r["cache"] == str(shared_env)
        assert isinstance(r["y"], q.qvalue) and r["y"].dtype == np.float64
        np.testing.assert_array_equal(np.asarray(r["y"]), 2.0 * np.asarray(x) - 1.0)
    assert cached_plugins(shared_env) == before  # both workers loaded the cached build


def test_dask_array_computed_on_the_cluster(dask_client):
    da = pytest.importorskip("dask.array")
    x = rng.standard_normal((30, 20)).astype(np.float32)
    d = da.from_array(q.value(x), chunks=(10, 10), asarray=False,
                      meta=q.zeros(0, 0, dtype="float32"))
    e = d.map_blocks(lambda b: q.sqrt(q.abs(b)) + b, meta=q.zeros(0, 0, dtype="float32"))
    blocks = dask_client.compute(e.to_delayed().ravel().tolist(), sync=True)
    assert all(isinstance(b, q.qvalue) for b in blocks)  # the results came back as qvalues
    got = e.compute(scheduler=dask_client.get)
    np.testing.assert_allclose(np.asarray(got), np.sqrt(np.abs(x)) + x, rtol=1e-6)
    total = dask_client.submit(lambda b: b.sum(), q.value(x)).result()
    assert total.kind == "scalar" and total.dtype == np.float32
    np.testing.assert_allclose(total.item(), x.sum(dtype=np.float64), rtol=1e-4)


def test_dask_moves_cells_and_views(dask_client):
    t = q.value(rng.standard_normal((6, 6)))
    c = q.value(["text", t[::2, 1:], 3.5])
    back = dask_client.submit(lambda v: v, c, pure=False).result()
    assert back.kind == "cell" and back[0].to_py() == "text" and back[2].item() == 3.5
    np.testing.assert_array_equal(np.asarray(back[1]), np.asarray(t)[::2, 1:])


# ---- Ray ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ray_session(request):
    ray = pytest.importorskip("ray")
    request.getfixturevalue("shared_env")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             object_store_memory=80 * 1024 * 1024, configure_logging=False)
    yield ray
    ray.shutdown()


def test_ray_put_get_and_a_remote_task(ray_session, shared_env):
    ray = ray_session
    x = rng.standard_normal((8, 5))
    A = q.value(x)
    ref = ray.put(A)
    B = ray.get(ref)
    assert isinstance(B, q.qvalue) and B.dtype == np.float64
    np.testing.assert_array_equal(np.asarray(B), x)
    B[0, 0] = 123.0  # writable, its own memory (the object store's is read-only)
    assert A[0, 0].item() == x[0, 0]

    remote_axpb = ray.remote(axpb_on_worker)
    r = ray.get(remote_axpb.remote(ref, 0.5, 3.0))
    assert r["pid"] != os.getpid() and r["cache"] == str(shared_env) and r["kind"] == "qvalue"
    np.testing.assert_array_equal(np.asarray(r["y"]), 0.5 * x + 3.0)

    matmul = ray.remote(lambda a, b: (a @ b, q.value("done")))
    y, tag = ray.get(matmul.remote(A, A.T))
    np.testing.assert_allclose(np.asarray(y), x @ x.T, rtol=1e-12)
    assert tag.to_py() == "done"


def test_pickles_are_what_cross_the_wire():
    # What Dask and Ray send: the protocol-5 pickle with the tensor's bytes as a separate frame.
    A = q.value(rng.standard_normal((100, 10)))
    frames = []
    header = pickle.dumps(A, protocol=5, buffer_callback=frames.append)
    assert len(header) < 400 and [memoryview(f).nbytes for f in frames] == [8000]
