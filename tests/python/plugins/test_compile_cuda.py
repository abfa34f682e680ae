"""compile_string / compile_file of CUDA source (nvcc): CPU launchers, cache, errors, GPU runs.

nvcc compiles are slow, so the file compiles one module (cu_image) once and shares it; the only
other nvcc run is the compile-error test, which fails in nvcc's front end.
"""
import os
import shutil
import subprocess

import numpy as np
import pytest

import isthmus as q
from cuda_helpers import (HAVE_CUDA, NO_CUDA_REASON, check_gather_on_gpu, check_vignette,
                          cuda_session, on_gpu)


def _nvcc():
    for var in ("ISTHMUS_NVCC", "CUDACXX"):
        if os.environ.get(var):
            return shutil.which(os.environ[var])
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home and os.access(os.path.join(home, "bin", "nvcc"), os.X_OK):
            return os.path.join(home, "bin", "nvcc")
    return shutil.which("nvcc")


NVCC = _nvcc()
pytestmark = pytest.mark.skipif(NVCC is None, reason="no nvcc (CUDA toolkit) on this machine")

SOURCE = r"""namespace ip = isthmus::plugin;

// a kernel declared for NVRTC, which nvcc compiles too (a function object type)
ISTHMUS_KERNEL(cu_axpy, ip::view<const float, 1> x, ip::view<float, 1> y, float a, int64_t i) {
    y(i) += a * x(i);
}

// a generic kernel for the GPU: its derived backward (cu_sblur_vjp) and forward mode
// (cu_sblur_jvp) run there too
template <typename T>
struct cu_scaled_blur {
    using device_kernel = void;
    ISTHMUS_HD void operator()(ip::view<const T, 2, ip::access::clamped> x, ip::view<T, 2> y, T s,
                               ip::ivec2 p) const {
        T acc = 0;
        for (int di = -1; di <= 1; ++di)
            for (int dj = -1; dj <= 1; ++dj) acc += T(2 + di * dj) * x(p[0] + di, p[1] + dj);
        y(p[0], p[1]) = s * acc;
        y(p[0], p[1]) += sin(s) * x(p[0], p[1]);
    }
};

// a position that records 99 nodes: more than a GPU thread's tape holds
template <typename T>
struct cu_power_chain {
    using device_kernel = void;
    ISTHMUS_HD void operator()(ip::view<const T, 1> x, ip::view<T, 1> y, int64_t i) const {
        T acc = x(i);
        for (int k = 0; k < 99; ++k) acc = acc * x(i) * T(0.5) + acc;
        y(i) = acc;
    }
};

ISTHMUS_PLUGIN(cu_image, m) {
    // darkens an HxWx3 image towards its corners; one body for the CPU and the GPU
    m.kernel("cu_vignette",
             [] __host__ __device__(ip::view<const float, 3> x, ip::view<float, 3> y,
                                    float strength, ip::ivec2 p) {
                 const float dy = (p[0] + 0.5f) / x.size(0) - 0.5f;
                 const float dx = (p[1] + 0.5f) / x.size(1) - 0.5f;
                 const float g = 1.0f - strength * (dx * dx + dy * dy);
                 y.store(x.load<3>(p[0], p[1], 0) * g, p[0], p[1], 0);
             },
             {"x", "y", "strength"});
    m.kernel("cu_gather",
             [] __host__ __device__(ip::view<const float, 1, ip::access::checked> x,
                                    ip::view<const int64_t, 1> idx, ip::view<float, 1> y,
                                    int64_t i) { y(i) = x(idx(i)); },
             {"x", "idx", "y"});
    m.kernel("cu_axpy", cu_axpy{}, {"x", "y", "a"});
    m.kernel("cu_sblur",
             ip::generic<float>([]<typename T>() { return cu_scaled_blur<T>{}; }, ip::with_jvp),
             {"x", "y", "s"});
    m.kernel("cu_chain", ip::generic<float>([]<typename T>() { return cu_power_chain<T>{}; }),
             {"x", "y"});
}
"""


@pytest.fixture(scope="module")
def cu_cache(worker_cache):
    with worker_cache("cuda_cache") as d, pytest.MonkeyPatch.context() as mp:
        # the support object built in this cache (cu_image), not the library's prebuilt one
        mp.setenv("ISTHMUS_PLUGIN_LAYER_DIR", str(d / "no-prebuilt-layer"))
        yield d


GXX = shutil.which("g++")


@pytest.fixture(scope="module")
def cu_image(cu_cache, worker_dir):
    """The shared module, compiled once from a .cu file (the extension selects CUDA). Where g++
    is there, a C++ plugin compiled first with g++ and no flags marks the author layer's key, so
    this compile builds the support object and links it (Note [support object in CUDA
    plugins]): every test of the module then runs on a CUDA plugin built that way."""
    if GXX:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("CXX", "g++")
            q.compile_string("cu_layer_mark", "ISTHMUS_PLUGIN(cu_layer_mark, m) { (void)m; }")
    f = worker_dir("cuda_src") / "cu_image.cu"
    f.write_text(SOURCE)
    return q.compile_file(str(f))


rng = np.random.default_rng(11)


def test_cuda_module_runs_its_cpu_launcher_and_matches_numpy(cu_image):
    assert "cu_vignette(x: cube, y: cube, strength: scalar, pos: ivec2)" in cu_image.cu_vignette.signature
    for shape in [(5, 7, 3), (240, 321, 3)]:
        check_vignette(q.cu_vignette, rng, shape, 0.8)
    # an empty space runs nothing
    y = q.zeros(0, 4, 3)
    q.parallel_do([0, 4], np.zeros((0, 4, 3), np.float32), y, 1.0, q.cu_vignette)
    assert np.asarray(y).shape == (0, 4, 3)


def test_kernels_say_where_they_run(cu_image, cu_cache):
    assert q.cu_vignette.devices == ("cpu", "cuda")
    assert q.cu_gather.devices == ("cpu", "cuda")
    # ISTHMUS_KERNEL in a source with lambda kernels: nvcc compiles it too (no device code files)
    assert q.cu_axpy.devices == ("cpu", "cuda")
    assert not list(cu_cache.glob("cu_image-*.ptx"))
    x, y = rng.standard_normal(7).astype(np.float32), np.ones(7, np.float32)
    q.parallel_do(7, x, y, 0.5, q.cu_axpy)
    np.testing.assert_allclose(y, 1 + 0.5 * x, rtol=1e-6)
    # `[] ISTHMUS_HD (...)` bodies: the same source built by g++ is an ordinary CPU plugin
    src = """namespace ip = isthmus::plugin;
    ISTHMUS_PLUGIN(cu_portable, m) {
        m.kernel("cu_portable_iota", [] ISTHMUS_HD(ip::view<double, 1> y, int64_t i) { y(i) = i; },
                 {"y"});
    }"""
    mod = q.compile_string("cu_portable", src, lang="c++")
    assert mod.cu_portable_iota.devices == ("cpu",)
    y = q.zeros(9, dtype="float64")
    q.parallel_do(9, y, mod.cu_portable_iota)
    np.testing.assert_array_equal(np.asarray(y), np.arange(9.0))
    # a generic device kernel's derived backward and forward mode run on the GPU too
    assert q.cu_sblur.devices == ("cpu", "cuda")
    assert q.cu_sblur.jvp.devices == ("cpu", "cuda")
    assert q.cu_sblur.vjp.devices == ("cpu", "cuda")


def sblur_reference(x, s, dx, ds):
    """cu_sblur's output and its forward-mode tangent, in float64 (edges clamped)."""
    h, w = x.shape
    xp = np.pad(x.astype(np.float64), 1, mode="edge")
    dp = np.pad(dx.astype(np.float64), 1, mode="edge")
    acc = sum((2 + di * dj) * xp[1 + di:1 + di + h, 1 + dj:1 + dj + w]
              for di in (-1, 0, 1) for dj in (-1, 0, 1))
    dacc = sum((2 + di * dj) * dp[1 + di:1 + di + h, 1 + dj:1 + dj + w]
               for di in (-1, 0, 1) for dj in (-1, 0, 1))
    y = s * acc + np.sin(s) * x
    dy = ds * acc + s * dacc + np.cos(s) * ds * x + np.sin(s) * dx
    return y, dy


def run_sblur_jvp(x, s, dx, ds, wrap=lambda a: a):
    y = q.value(np.zeros_like(x))
    ty = q.value(np.zeros_like(x))
    q.parallel_do(x.shape, wrap(x), y, s, wrap(dx), wrap(np.full((), ds, np.float32)), ty,
                  q.cu_sblur.jvp)
    return np.asarray(y), np.asarray(ty)


def run_sblur_vjp(x, s, gy, wrap=lambda a: a):
    gx = q.value(np.zeros_like(x))
    gs = q.value(np.zeros((), np.float32))
    q.parallel_do(x.shape, wrap(x), q.value(np.zeros_like(x)), s, wrap(gy), gx, gs,
                  q.cu_sblur.vjp)
    return np.asarray(gx), float(np.asarray(gs))


def test_the_generic_device_kernels_backward_on_the_cpu_is_the_transposed_forward(cu_image):
    # <J dx, gy> = <dx, J^T gy> for random directions: the derived backward against the forward
    x = rng.standard_normal((37, 53)).astype(np.float32)
    dx = rng.standard_normal((37, 53)).astype(np.float32)
    gy = rng.standard_normal((37, 53)).astype(np.float32)
    _, ty = sblur_reference(x, 0.7, dx, 0.4)
    gx, gs = run_sblur_vjp(x, 0.7, gy)
    np.testing.assert_allclose((ty * gy).sum(), (gx * dx).sum() + gs * 0.4, rtol=1e-4)


def test_the_generic_device_kernels_forward_mode_on_the_cpu(cu_image):
    x = rng.standard_normal((37, 53)).astype(np.float32)
    dx = rng.standard_normal((37, 53)).astype(np.float32)
    y, ty = run_sblur_jvp(x, 0.7, dx, 0.3)
    ry, rty = sblur_reference(x, 0.7, dx, 0.3)
    np.testing.assert_allclose(y, ry, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(ty, rty, rtol=1e-5, atol=1e-4)


@pytest.mark.skipif(GXX is None or shutil.which("nm") is None or
                    os.environ.get("ISTHMUS_PLUGIN_PCH") == "0", reason="needs g++ and nm")
def test_the_cuda_plugin_links_the_support_object(cu_image, cu_cache):
    (obj,) = cu_cache.glob("isthmus-pch-*.o")
    (so,) = cu_cache.glob("cu_image-*.so")
    # the whole support object is linked in: functions this plugin never calls are there too
    # (a header-only build would hold only what it uses; it takes no vec arguments)
    symbols = subprocess.run(["nm", "-C", str(so)], capture_output=True, text=True).stdout
    assert "isthmus::plugin::detail::vec_elements" in symbols
    assert obj.stat().st_size > 0


def test_cuda_source_is_cached(cu_image, cu_cache):
    # the same name and text through compile_string(lang="cuda") hits the cache of compile_file
    assert q.compile_string("cu_image", SOURCE, lang="cuda") is cu_image
    assert q.compile_string("cu_image", SOURCE, lang="CUDA") is cu_image
    assert len(list(cu_cache.glob("cu_image-*.so"))) == 1
    assert len(list(cu_cache.glob("cu_image-*.meta"))) == 1
    (src,) = cu_cache.glob("cu_image-*.cu")
    assert SOURCE in src.read_text()


def test_checked_access_out_of_bounds_is_an_index_error(cu_image):
    x = rng.standard_normal(10).astype(np.float32)
    idx = np.array([3, 0, 9, 2], dtype=np.int64)
    y = q.zeros(4)
    q.parallel_do(4, x, idx, y, q.cu_gather)
    np.testing.assert_array_equal(np.asarray(y), x[idx])
    bad = np.array([1, 10, 2, 3], dtype=np.int64)
    with pytest.raises(IndexError, match=r"cu_gather: index 10 is out of bounds for dimension 0 "
                                         r"with size 10 \('checked access\)"):
        q.parallel_do(4, x, bad, y, q.cu_gather)
    assert np.asarray(y)[0] == x[1]  # the process and the values are fine
    with pytest.raises(TypeError, match="argument 2"):
        q.parallel_do(4, x, bad.reshape(2, 2), y, q.cu_gather)


def test_cuda_compile_error_has_the_users_line_number(cu_cache):
    src = 'ISTHMUS_PLUGIN(cu_broken, m) {\n    m.kernel("k", [] __host__ __device__(\n' \
          '        isthmus::plugin::view<float, 1> y, int64_t i) {\n' \
          '        y(i) = not_declared; }, {"y"});\n}\n'
    with pytest.raises(q.CompileError) as e:
        q.compile_string("cu_broken", src, lang="cuda")
    assert "cu_broken.cu(4)" in e.value.diagnostics
    assert "not_declared" in e.value.diagnostics
    assert "the CUDA compiler" in str(e.value)
    assert not list(cu_cache.glob("cu_broken-*.so"))


def test_missing_nvcc_is_a_compile_error_naming_where_it_looked(cu_cache, monkeypatch):
    monkeypatch.setenv("ISTHMUS_NVCC", "/nonexistent/bin/nvcc")
    with pytest.raises(q.CompileError, match=r"ISTHMUS_NVCC \(/nonexistent/bin/nvcc\) was not found") as e:
        q.compile_string("cu_missing", SOURCE.replace("cu_image", "cu_missing"), lang="cuda")
    assert "/nonexistent/bin/nvcc" in e.value.diagnostics
    monkeypatch.delenv("ISTHMUS_NVCC")
    np.testing.assert_array_equal(np.asarray(q.value([1.0, 2.0]) * 2), [2.0, 4.0])  # alive


def test_bad_language_and_arch(cu_cache, monkeypatch):
    with pytest.raises(ValueError, match=r'unknown language "fortran" \(expected "c\+\+" or "cuda"\)'):
        q.compile_string("cu_lang", "", lang="fortran")
    monkeypatch.setenv("ISTHMUS_CUDA_ARCH", "hopper")
    with pytest.raises(ValueError, match="ISTHMUS_CUDA_ARCH"):
        q.compile_string("cu_arch", SOURCE, lang="cuda")
    with pytest.raises(TypeError):
        q.compile_string("cu_lang", "", lang=3)


# ---- on a GPU (skipped with the reason elsewhere) ----

@pytest.mark.skipif(not HAVE_CUDA, reason=NO_CUDA_REASON)
def test_the_derived_backward_on_the_gpu_matches_the_cpu(cu_image):
    x = rng.standard_normal((301, 203)).astype(np.float32)
    gy = rng.standard_normal((301, 203)).astype(np.float32)
    cgx, cgs = run_sblur_vjp(x, 0.7, gy)
    with cuda_session():
        ggx, ggs = run_sblur_vjp(x, 0.7, gy, wrap=on_gpu)
    np.testing.assert_allclose(ggx, cgx, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(ggs, cgs, rtol=1e-4)


@pytest.mark.skipif(not HAVE_CUDA, reason=NO_CUDA_REASON)
def test_a_gpu_threads_tape_that_overflows_is_a_value_error(cu_image):
    x = np.full(1000, 0.01, np.float32)
    gx = q.value(np.zeros(1000, np.float32))
    q.parallel_do(1000, x, q.value(np.zeros(1000, np.float32)), np.ones(1000, np.float32), gx,
                  q.cu_chain.vjp)  # on the CPU the tape grows
    assert np.isfinite(np.asarray(gx)).all() and (np.asarray(gx) > 0).all()
    with cuda_session():
        g = q.value(np.zeros(1000, np.float32))
        with pytest.raises(ValueError, match="needed 65 entries on its tape, and a GPU thread's "
                                             "tape holds 64"):
            q.parallel_do(1000, on_gpu(x), q.value(np.zeros(1000, np.float32)),
                          on_gpu(np.ones(1000, np.float32)), g, q.cu_chain.vjp)


@pytest.mark.skipif(not HAVE_CUDA, reason=NO_CUDA_REASON)
def test_the_forward_mode_on_the_gpu_matches_the_cpu(cu_image):
    x = rng.standard_normal((301, 203)).astype(np.float32)
    dx = rng.standard_normal((301, 203)).astype(np.float32)
    cy, cty = run_sblur_jvp(x, 0.7, dx, 0.3)
    with cuda_session():
        gy, gty = run_sblur_jvp(x, 0.7, dx, 0.3, wrap=on_gpu)
    np.testing.assert_allclose(gy, cy, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gty, cty, rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(not HAVE_CUDA, reason=NO_CUDA_REASON)
def test_cuda_module_on_gpu_values_matches_cpu(cu_image):
    with cuda_session():
        check_vignette(q.cu_vignette, rng, (97, 131, 3), 0.5, gpu=True)
        x, _, _ = check_gather_on_gpu(q.cu_gather, "cu_gather", rng)
        y = q.value(np.ones(1000, np.float32))
        q.parallel_do(1000, on_gpu(x), y, 2.0, q.cu_axpy)
        np.testing.assert_allclose(np.asarray(y), 1 + 2 * x, rtol=1e-6)


@pytest.mark.skipif(not HAVE_CUDA, reason=NO_CUDA_REASON)
def test_kernel_op_on_torch_tensors_is_ordered_on_torchs_stream(cu_image):
    # See Note [import hand-back]: a plugin kernel writing a torch CUDA tensor is ordered on torch's
    # current stream both ways by events: it waits for torch's pending work on its operands,
    # and torch's later work on that stream waits for it, with no host wait in between.
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    axpy = q.torch.kernel_op(q.cu_axpy)
    n = 1 << 22
    with cuda_session():
        ours = torch.cuda.ExternalStream(q.cuda_stream())
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            x = torch.full((n,), 2.0, device="cuda")
            y = torch.ones(n, device="cuda")
            torch.cuda._sleep(50_000_000)  # torch's stream busy: the kernel must wait for it
            x.fill_(3.0)
            with torch.cuda.stream(ours):
                torch.cuda._sleep(100_000_000)  # isthmus's stream busy after that
            axpy([n], x, y, 0.5)  # y += 0.5 * x on isthmus's stream
            assert not ours.query()  # the host did not wait for it
            total = y.sum()  # torch's stream, after the kernel (an event), no synchronize
        side.synchronize()
        assert float(total) == n * 2.5
        x.record_stream(side)
        y.record_stream(side)
