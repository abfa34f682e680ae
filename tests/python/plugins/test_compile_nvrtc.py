"""compile_string(lang="cuda") through NVRTC (Note [NVRTC plugins]): kernels declared with
ISTHMUS_KERNEL, their device code in the cache, its layout, the compiler choice, errors, GPU runs.

NVRTC compiles without a GPU, so everything but loading and launching runs here; the module is
compiled once and shared. Skipped when no NVRTC is found (scripts/deps installs PyPI's).
"""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import isthmus as q
from cuda_helpers import (HAVE_CUDA, NO_CUDA_REASON, check_gather_on_gpu, check_vignette,
                          cuda_session, on_gpu)

NVRTC = q.nvrtc_library()
pytestmark = pytest.mark.skipif(NVRTC is None, reason="no NVRTC (pip install nvidia-cuda-nvrtc)")

SOURCE = r"""namespace ip = isthmus::plugin;

// darkens an HxWx3 image towards its corners
ISTHMUS_KERNEL(rt_vignette, ip::view<const float, 3> x, ip::view<float, 3> y, float strength,
               ip::ivec2 p) {
    const float dy = (p[0] + 0.5f) / x.size(0) - 0.5f;
    const float dx = (p[1] + 0.5f) / x.size(1) - 0.5f;
    const float g = 1.0f - strength * (dx * dx + dy * dy);
    y.store(x.load<3>(p[0], p[1], 0) * g, p[0], p[1], 0);
}

ISTHMUS_KERNEL(rt_gather, ip::view<const float, 1, ip::access::checked> x,
               ip::view<const int64_t, 1> idx, ip::view<float, 1> y, int64_t i) {
    y(i) = x(idx(i));
}

// the parameter kinds of a device kernel, whose argument block must match NVRTC's layout
ISTHMUS_KERNEL(rt_kinds, ip::view<double, 2, ip::access::mirror> a, bool flag, int32_t k,
               ip::vec3 v, double d, ip::view<const float, 1> b, float c, ip::ivec2 p) {
    a(p[0], p[1]) = flag ? k * v[1] + d + b(p[1]) + c + p[0] : -1.0;
}

#ifndef ISTHMUS_DEVICE_PASS
#include <string>
// host-only code outside the plugin body, fenced from NVRTC
static std::string block_sizes() {
    return std::to_string(sizeof(ip::detail::kernel_parts<rt_vignette>::block)) + " " +
           std::to_string(sizeof(ip::detail::kernel_parts<rt_gather>::block)) + " " +
           std::to_string(sizeof(ip::detail::kernel_parts<rt_kinds>::block));
}
#endif

ISTHMUS_PLUGIN(rt_image, m) {
    m.kernel("rt_vignette", rt_vignette{}, {"x", "y", "strength"});
    m.kernel("rt_gather", rt_gather{}, {"x", "idx", "y"});
    m.kernel("rt_kinds", rt_kinds{}, {"a", "flag", "k", "v", "d", "b", "c"});
    m.def("rt_block_sizes", [] { return block_sizes(); });
}
"""


@pytest.fixture(scope="module")
def rt_cache(worker_cache):
    with worker_cache("nvrtc_cache") as d:
        yield d


@pytest.fixture(scope="module")
def rt_image(rt_cache):
    return q.compile_string("rt_image", SOURCE, lang="cuda")


def entry_files(cache, name):
    files = {p.suffixes[-1] if p.suffix != ".cubin" else "".join(p.suffixes[-2:]): p
             for p in cache.glob(name + "-*")}
    return files


rng = np.random.default_rng(12)


def test_nvrtc_module_runs_its_cpu_launchers_and_matches_numpy(rt_image):
    for shape in [(5, 7, 3), (64, 97, 3)]:
        check_vignette(q.rt_vignette, rng, shape, 0.8)
    x = rng.standard_normal(10).astype(np.float32)
    idx = np.array([3, 0, 9, 2], dtype=np.int64)
    y = q.zeros(4)
    q.parallel_do(4, x, idx, y, q.rt_gather)
    np.testing.assert_array_equal(np.asarray(y), x[idx])
    with pytest.raises(IndexError, match=r"rt_gather: index 10 is out of bounds for dimension 0 "
                                         r"with size 10 \('checked access\) in argument 1 \(x\)"):
        q.parallel_do(4, x, np.array([1, 10, 2, 3], dtype=np.int64), y, q.rt_gather)
    assert np.asarray(y)[0] == x[1]  # the process and the values are fine
    a = q.zeros(2, 3, dtype="float64")
    b = np.array([10, 20, 30], dtype=np.float32)
    q.parallel_do([2, 3], a, True, 2, [1.0, 2.0, 3.0], 0.5, b, 0.25, q.rt_kinds)
    np.testing.assert_array_equal(np.asarray(a), 4.75 + b[None, :] + np.arange(2)[:, None])


def test_nvrtc_kernels_run_on_the_cpu_and_the_gpu(rt_image, rt_cache):
    assert q.rt_vignette.devices == ("cpu", "cuda")
    assert q.rt_kinds.devices == ("cpu", "cuda")
    # the same source as a C++ plugin has no device code: its kernels run on the CPU only
    mod = q.compile_string("rx_image", SOURCE.replace("rt_", "rx_"), lang="c++")
    assert mod.rx_vignette.devices == ("cpu",)
    assert not list(rt_cache.glob("rx_image-*.ptx"))


def test_the_device_code_is_in_the_cache(rt_image, rt_cache):
    files = entry_files(rt_cache, "rt_image")
    assert set(files) >= {".so", ".meta", ".cu", ".ptx", ".sm_90.cubin"}
    meta = files[".meta"].read_text()
    assert "compiler " in meta and "and NVRTC" in meta
    for field, suffix in (("ptx_size", ".ptx"), ("cubin_sm_90_size", ".sm_90.cubin")):
        size = int(re.search(field + r" (\d+)", meta).group(1))
        assert size == files[suffix].stat().st_size > 0
    assert files[".sm_90.cubin"].read_bytes()[:4] == b"\x7fELF"
    ptx = files[".ptx"].read_text()
    for entry in ("rt_vignette", "rt_gather", "rt_kinds"):
        assert f".entry isthmus_kernel_{entry}(" in ptx
        assert f".entry isthmus_kernel_{entry}_checked(" in ptx
    # the failure record the launcher reads (k_device_error_symbol in driver_launch.hpp)
    assert "_ZN7isthmus6plugin6detail20g_device_index_errorE" in ptx
    # the device pass saw no host code: the plugin body and the fenced helper are not in it
    assert "block_sizes" not in ptx


def test_argument_blocks_match_the_device_code(rt_image, rt_cache):
    """See Note [argument blocks]: the host's sizeof of each kernel's block (g++) is the size of the
    entry's second parameter in NVRTC's PTX."""
    ptx = entry_files(rt_cache, "rt_image")[".ptx"].read_text()
    device = {m.group(1): int(m.group(2)) for m in re.finditer(
        r"\.param \.align \d+ \.b8 isthmus_kernel_(\w+?)_param_1\[(\d+)\]", ptx)}
    host = [int(n) for n in q.rt_block_sizes().split()]
    assert host == [device["rt_vignette"], device["rt_gather"], device["rt_kinds"]]
    assert device["rt_kinds_checked"] == device["rt_kinds"]
    assert host[1] == 3 * 32 + 8  # three 1-d views (pointer, size, stride, tag), the empty tail


def test_nvrtc_entries_are_cached_in_and_across_processes(rt_image, rt_cache):
    assert q.compile_string("rt_image", SOURCE, lang="cuda") is rt_image
    assert len(list(rt_cache.glob("rt_image-*.so"))) == 1
    script = ("import isthmus as q; q.init('cpu'); "
              "m = q.compile_string('rt_image', open(0).read(), lang='cuda'); "
              "print(m.rt_vignette.devices)")
    env = dict(os.environ, ISTHMUS_CACHE_DIR=str(rt_cache), ISTHMUS_COMPILE_NOTICE_SECONDS="0")
    r = subprocess.run([sys.executable, "-c", script], input=SOURCE, capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "('cpu', 'cuda')" in r.stdout
    assert "compiling plugin" not in r.stderr  # loaded from the cache, nothing compiled


def test_damaged_device_code_is_rebuilt(rt_cache, tmp_path):
    src = SOURCE.replace("rt_", "rd_")
    script = ("import isthmus as q; q.init('cpu'); "
              "m = q.compile_string('rd_image', open(0).read(), lang='cuda'); "
              "print(m.rd_gather.devices)")
    env = dict(os.environ, ISTHMUS_CACHE_DIR=str(tmp_path), ISTHMUS_COMPILE_NOTICE_SECONDS="0")

    def run():
        r = subprocess.run([sys.executable, "-c", script], input=src, capture_output=True,
                           text=True, env=env, timeout=300)
        assert r.returncode == 0, r.stderr
        return r.stderr

    assert "compiling plugin 'rd_image' (CUDA, " in run()
    (ptx,) = tmp_path.glob("rd_image-*.ptx")
    (cubin,) = tmp_path.glob("rd_image-*.sm_90.cubin")
    good_ptx, good_cubin = ptx.read_bytes(), cubin.read_bytes()
    ptx.write_bytes(good_ptx[: len(good_ptx) // 2])  # truncated
    cubin.unlink()  # missing
    assert "compiling plugin" in run()
    assert ptx.read_bytes() == good_ptx
    assert cubin.read_bytes() == good_cubin
    assert "compiling plugin" not in run()
    ptx.write_bytes(good_ptx + b"\n")  # longer than the .meta says
    assert "compiling plugin" in run()


def test_two_processes_compiling_the_same_cuda_source_both_succeed(tmp_path):
    src = SOURCE.replace("rt_", "rc_")
    script = ("import isthmus as q; q.init('cpu'); "
              "m = q.compile_string('rc_image', open(0).read(), lang='cuda'); "
              "print(m.rc_gather.devices)")
    env = dict(os.environ, ISTHMUS_CACHE_DIR=str(tmp_path))
    procs = [subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for _ in range(2)]
    outs = [p.communicate(src, timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert out.strip() == "('cpu', 'cuda')"
    for pattern in ("rc_image-*.so", "rc_image-*.ptx", "rc_image-*.sm_90.cubin"):
        assert len(list(tmp_path.glob(pattern))) == 1
    assert not list(tmp_path.glob("*.tmp.*"))


def test_flags_reach_both_passes(rt_cache):
    src = """namespace ip = isthmus::plugin;
    ISTHMUS_KERNEL(rt_scaled, ip::view<float, 1> y, int64_t i) { y(i) = SCALE * i; }
    ISTHMUS_PLUGIN(rt_flags, m) { m.kernel("rt_scaled", rt_scaled{}, {"y"}); }"""
    mod = q.compile_string("rt_flags", src, ["-DSCALE=2.5f"], lang="cuda")
    y = q.zeros(4)
    q.parallel_do(4, y, mod.rt_scaled)
    np.testing.assert_array_equal(np.asarray(y), [0, 2.5, 5, 7.5])
    (ptx,) = rt_cache.glob("rt_flags-*.ptx")
    assert "isthmus_kernel_rt_scaled" in ptx.read_text()


def test_nvrtc_errors_keep_the_users_line_numbers(rt_cache):
    src = ('namespace ip = isthmus::plugin;\n'
           'ISTHMUS_KERNEL(rt_bad, ip::view<float, 1> y, int64_t i) {\n'
           '    y(i) = 1.0f;\n'
           '    y(i) += not_declared;\n'
           '}\n'
           'ISTHMUS_PLUGIN(rt_broken, m) { m.kernel("rt_bad", rt_bad{}, {"y"}); }\n')
    with pytest.raises(q.CompileError, match="NVRTC failed to compile the device code") as e:
        q.compile_string("rt_broken", src, lang="cuda")
    assert "rt_broken.cu(4)" in e.value.diagnostics
    assert "not_declared" in e.value.diagnostics
    assert not list(rt_cache.glob("rt_broken-*.so"))
    assert not list(rt_cache.glob("rt_broken-*.ptx"))
    np.testing.assert_array_equal(np.asarray(q.value([1.0, 2.0]) * 2), [2.0, 4.0])  # alive


def test_unfenced_host_code_gets_a_hint(rt_cache):
    src = ('#include <vector>\n'
           'namespace ip = isthmus::plugin;\n'
           'ISTHMUS_KERNEL(rt_h, ip::view<float, 1> y, int64_t i) { y(i) = 1.0f; }\n'
           'ISTHMUS_PLUGIN(rt_host, m) { m.kernel("rt_h", rt_h{}, {"y"}); }\n')
    with pytest.raises(q.CompileError, match=r"#ifndef ISTHMUS_DEVICE_PASS") as e:
        q.compile_string("rt_host", src, lang="cuda")
    assert "rt_host.cu(1)" in e.value.diagnostics
    # a host function outside the plugin body (NVRTC compiles no host code)
    src = src.replace("#include <vector>", "static int helper(int k) { return k + 1; }")
    with pytest.raises(q.CompileError, match=r"#ifndef ISTHMUS_DEVICE_PASS") as e:
        q.compile_string("rt_host", src, lang="cuda")
    assert "host functions are not allowed" in e.value.diagnostics
    # fenced, it compiles
    src = "#ifndef ISTHMUS_DEVICE_PASS\n" + src.replace("\n", "\n#endif\n", 1)
    mod = q.compile_string("rt_host", src, lang="cuda")
    assert mod.rt_h.devices == ("cpu", "cuda")


def test_choosing_the_cuda_compiler(rt_cache):
    lam = ('ISTHMUS_PLUGIN(rt_lambda, m) {\n'
           '    m.kernel("rt_l", [] ISTHMUS_HD(isthmus::plugin::view<float, 1> y, int64_t i) {\n'
           '        y(i) = 1.0f; }, {"y"});\n}\n')
    with pytest.raises(q.CompileError, match="NVRTC cannot compile extended lambda kernels"):
        q.compile_string("rt_lambda", lam, lang="cuda", cuda_compiler="nvrtc")
    with pytest.raises(ValueError, match=r'unknown CUDA compiler "clang" \(expected "auto", '
                                         r'"nvrtc" or "nvcc"\)'):
        q.compile_string("rt_lambda", lam, lang="cuda", cuda_compiler="clang")
    with pytest.raises(TypeError):
        q.compile_string("rt_lambda", lam, lang="cuda", cuda_compiler=3)
    # without NVRTC: "nvrtc" is an error naming where it looked, "auto" goes to nvcc (a missing
    # one here, to keep the test fast); a new process, since the found library is kept
    script = r"""
import isthmus as q
q.init("cpu")
src = open(0).read()
for choice in ("nvrtc", "auto"):
    try:
        q.compile_string("rt_none", src, lang="cuda", cuda_compiler=choice)
    except q.CompileError as e:
        print(choice, "|", str(e).replace("\n", " "), "|", e.diagnostics.replace("\n", " "))
"""
    env = dict(os.environ, ISTHMUS_CACHE_DIR=str(rt_cache),
               ISTHMUS_NVRTC="/nonexistent/libnvrtc.so", ISTHMUS_NVCC="/nonexistent/bin/nvcc")
    r = subprocess.run([sys.executable, "-c", script], input=SOURCE.replace("rt_image", "rt_none"),
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = dict(line.split(" | ", 1) for line in r.stdout.splitlines())
    assert "NVRTC was not found" in lines["nvrtc"]
    assert "$ISTHMUS_NVRTC=/nonexistent/libnvrtc.so: not found" in lines["nvrtc"]
    assert "ISTHMUS_NVCC (/nonexistent/bin/nvcc) was not found" in lines["auto"]


def test_the_cache_cli_knows_device_code(rt_image, rt_cache):
    r = subprocess.run([sys.executable, "-m", "isthmus.cache", "list"], capture_output=True,
                       text=True, env=dict(os.environ, ISTHMUS_CACHE_DIR=str(rt_cache)), timeout=60)
    assert r.returncode == 0, r.stderr
    line = next(line for line in r.stdout.splitlines() if "rt_image-" in line)
    assert "corrupt" not in line


# ---- on a GPU (skipped with the reason elsewhere) ----

@pytest.mark.skipif(not HAVE_CUDA, reason=NO_CUDA_REASON)
def test_nvrtc_kernels_on_gpu_values_match_the_cpu(rt_image):
    with cuda_session():
        check_vignette(q.rt_vignette, rng, (97, 131, 3), 0.5, gpu=True)
        b = rng.standard_normal(5).astype(np.float32)
        a = on_gpu(np.zeros((3, 5)))
        q.parallel_do([3, 5], a, True, 3, [1.0, 2.0, 3.0], 0.5, on_gpu(b), 0.25, q.rt_kinds)
        np.testing.assert_allclose(np.asarray(a), 6.75 + b[None, :] + np.arange(3)[:, None],
                                   rtol=1e-6)
        x, idx, y = check_gather_on_gpu(q.rt_gather, "rt_gather", rng)
        with q.checked():  # the _checked entry
            q.parallel_do(5000, on_gpu(x), on_gpu(idx % 1000), y, q.rt_gather)
        np.testing.assert_array_equal(np.asarray(y), x[idx % 1000])
