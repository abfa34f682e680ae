"""Compile times of compile_string beside the compiler itself, as ratios, with their targets.

Usage (after a build):
    PYTHONPATH=build/python python3 bench/compile_times.py [--repeat N]
Rows, each the best of N (default 3) in fresh cache directories, wall time of the call:
  - the PyQuasar manual's color_temperature kernel, cold, without the precompiled header (the first
    compile into an empty cache, or ISTHMUS_PLUGIN_PCH=0);
  - the compile that builds the precompiled header (the second cold one with the same flags);
  - cold with the precompiled header present (every later edit of a kernel);
  - a cached load in a new process (the compile_string call, after q.init);
beside `g++ -O2 -shared` of an empty C++ file and of a file that only includes
<isthmus/plugin.hpp> (the header's parse), and CuPy's RawModule compile of an equivalent CUDA
kernel when CuPy and a GPU are there; the same kernel as CUDA source through NVRTC (the device
pass alone, the whole compile, a cached load); and examples/plugins/unsharp.cu through nvcc cold,
without and with the support object. Not a test: timings never gate CI.
"""
import os
import pathlib
import subprocess
import sys
import tempfile
import textwrap
import time

import isthmus as q

ROOT = pathlib.Path(__file__).resolve().parents[1]
REPEAT = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 3
KERNEL = (ROOT / "examples" / "color_temperature.py").read_text().split('KERNEL_SRC = r"""')[1]
KERNEL = KERNEL.split('"""')[0]


def wall(f):
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def compile_in(cache, name, pch=True):
    os.environ["ISTHMUS_CACHE_DIR"] = str(cache)
    os.environ["ISTHMUS_PLUGIN_PCH"] = "1" if pch else "0"
    # the plugin and kernel renamed: a process imports each kernel name once
    return wall(lambda: q.compile_string(name, KERNEL.replace("color_temperature", name)))


def new_process(cache, code):
    env = dict(os.environ, ISTHMUS_CACHE_DIR=str(cache))
    out = subprocess.check_output([sys.executable, "-c", textwrap.dedent(code)], env=env,
                                  text=True)
    return float(out.split()[-1])


def gxx(tmp, text):
    src = pathlib.Path(tmp) / "probe.cpp"
    src.write_text(text)
    cmd = [os.environ.get("CXX", "g++"), "-std=c++20", "-O2", "-shared", "-fPIC",
           f"-I{q.plugin_include_dir()}", str(src), "-o", str(src.with_suffix(".so"))]
    return wall(lambda: subprocess.run(cmd, check=True))


def cupy_rawmodule():
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
    except Exception:  # not installed, or no GPU: the row is left out
        return None
    src = r"""
    extern "C" __global__ void color_temperature(const float* x, float* y, int n, float temp,
                                                 float3 cold, float3 hot) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= n) return;
        float3 v = make_float3(x[3 * i], x[3 * i + 1], x[3 * i + 2]);
        float3 t = temp < 0 ? cold : hot;
        float c = temp < 0 ? -0.25f * temp : 0.25f * temp;
        y[3 * i] = v.x * c + t.x * (1 - c);
        y[3 * i + 1] = v.y * c + t.y * (1 - c);
        y[3 * i + 2] = v.z * c + t.z * (1 - c);
    }"""
    best = None
    for i in range(REPEAT):  # a distinct source each time: CuPy caches compiled modules
        m = cupy.RawModule(code=src + f"\n// {time.time()} {i}\n")
        t = wall(lambda: m.get_function("color_temperature"))
        best = t if best is None else min(best, t)
    return best


CUDA_KERNEL = KERNEL.replace(
    "static inline ip::vec3 lerp", "ISTHMUS_HD inline ip::vec3 lerp").replace(
    """ISTHMUS_PLUGIN(color_temperature, m) {
    m.kernel("color_temperature",
             [](ip::view<const float, 3> x, ip::view<float, 3> y, float temp, ip::vec3 cold,
                ip::vec3 hot, ip::ivec2 pos) {""",
    """ISTHMUS_KERNEL(color_temperature, ip::view<const float, 3> x, ip::view<float, 3> y,
               float temp, ip::vec3 cold, ip::vec3 hot, ip::ivec2 pos) {""").replace(
    """             },
             {"x", "y", "temp", "cold", "hot"},""",
    """}
ISTHMUS_PLUGIN(color_temperature, m) {
    m.kernel("color_temperature", color_temperature{}, {"x", "y", "temp", "cold", "hot"},""")


def nvrtc_device_pass(src):
    """NVRTC alone on the device pass of `src` (what compile_string runs beside g++): the
    library the plugin driver found, the text cut before ISTHMUS_PLUGIN, -arch=sm_90."""
    import ctypes
    path = pathlib.Path(q.nvrtc_library())
    for builtins in path.parent.glob("libnvrtc-builtins.so.*"):  # opened by soname: load first
        if ".alt." not in builtins.name:
            ctypes.CDLL(str(builtins), mode=ctypes.RTLD_GLOBAL)
    lib = ctypes.CDLL(str(path))
    text = ("#include <isthmus/plugin.hpp>\n#line 1 \"k.cu\"\n" +
            src.split("ISTHMUS_PLUGIN(")[0]).encode()
    opts = [b"-arch=sm_90", b"-std=c++20", f"-I{q.plugin_include_dir()}".encode(),
            b"-DISTHMUS_DEVICE_PASS=1"]
    prog = ctypes.c_void_p()
    t0 = time.perf_counter()
    assert lib.nvrtcCreateProgram(ctypes.byref(prog), text, b"k.cu", 0, None, None) == 0
    rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    size = ctypes.c_size_t()
    lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
    cubin = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetCUBIN(prog, cubin)
    t = time.perf_counter() - t0
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    assert rc == 0 and size.value > 0
    return t


def cuda_rows(tmp):
    """CUDA source through compile_string(lang="cuda"): the color_temperature kernel declared
    with ISTHMUS_KERNEL through NVRTC (the device pass alone, the whole compile with the C++
    layer present, a cached load in a new process), and examples/plugins/unsharp.cu through
    nvcc cold, without and with the support object (Note [support object in CUDA plugins]).
    Rows whose compiler is missing are left out."""
    rows = {}
    if q.nvrtc_library():
        rows["CUDA: NVRTC device pass alone"] = min(nvrtc_device_pass(CUDA_KERNEL)
                                                   for _ in range(REPEAT))
        whole = []
        for i in range(REPEAT):
            cache = tmp / f"nvrtc{i}"
            os.environ["ISTHMUS_CACHE_DIR"] = str(cache)
            os.environ["ISTHMUS_PLUGIN_PCH"] = "1"
            for j in range(2):  # the second C++ compile builds the layer
                mark = f"rt_mark{i}_{j}"
                q.compile_string(mark, f"ISTHMUS_PLUGIN({mark}, m) {{ (void)m; }}")
            name = f"rt_ct{i}"
            whole.append(wall(lambda: q.compile_string(
                name, CUDA_KERNEL.replace("color_temperature", name), lang="cuda")))
        rows["CUDA: NVRTC + g++, layer present"] = min(whole)
        load_code = f"""
            import time, isthmus as q
            q.init("cpu")
            t0 = time.perf_counter()
            q.compile_string("rt_ct0", {CUDA_KERNEL.replace("color_temperature", "rt_ct0")!r},
                             lang="cuda")
            print(time.perf_counter() - t0)
        """
        rows["CUDA: NVRTC cached load, new process"] = min(new_process(tmp / "nvrtc0", load_code)
                                                          for _ in range(REPEAT))
    src = (ROOT / "examples" / "plugins" / "unsharp.cu").read_text()
    without, with_layer = [], []
    for i in range(REPEAT):
        cache = tmp / f"cuda{i}"
        os.environ["ISTHMUS_CACHE_DIR"] = str(cache)
        os.environ["ISTHMUS_PLUGIN_PCH"] = "0"
        try:  # the library's own search for nvcc decides whether there are nvcc rows
            without.append(wall(lambda: q.compile_string(f"cu_plain{i}",
                                                         src.replace("unsharp", f"cu_plain{i}"),
                                                         lang="cuda", cuda_compiler="nvcc")))
        except q.CompileError as e:
            if e.diagnostics.startswith("looked at:"):  # no nvcc found where it looks
                return rows
            raise
        os.environ["ISTHMUS_PLUGIN_PCH"] = "1"
        q.compile_string(f"cu_mark{i}", "ISTHMUS_PLUGIN(cu_mark, m) { (void)m; }".replace(
            "cu_mark", f"cu_mark{i}"))  # marks the g++ layer key: the next compile builds it
        q.compile_string(f"cu_build{i}", src.replace("unsharp", f"cu_build{i}"), lang="cuda",
                         cuda_compiler="nvcc")
        with_layer.append(wall(lambda: q.compile_string(f"cu_warm{i}",
                                                        src.replace("unsharp", f"cu_warm{i}"),
                                                        lang="cuda", cuda_compiler="nvcc")))
    rows["unsharp.cu (nvcc), cold"] = min(without)
    rows["unsharp.cu (nvcc), support object"] = min(with_layer)
    return rows


def main():
    q.init("cpu")
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        cold, build, warm, prebuilt = [], [], [], []
        for i in range(REPEAT):
            # the lazy layer in the cache: without the library's prebuilt one
            os.environ["ISTHMUS_PLUGIN_LAYER_DIR"] = str(tmp / "no-prebuilt-layer")
            cache = tmp / f"cache{i}"
            cold.append(compile_in(cache, f"ct_cold{i}"))       # first: no header yet
            build.append(compile_in(cache, f"ct_build{i}"))     # second: builds the header
            warm.append(compile_in(cache, f"ct_warm{i}"))       # later: uses it
            del os.environ["ISTHMUS_PLUGIN_LAYER_DIR"]
            # the first compile into a fresh cache with the prebuilt layer (Note [prebuilt
            # plugin layer]): what a new user gets
            prebuilt.append(compile_in(tmp / f"fresh{i}", f"ct_pre{i}"))
        rows["cold, no precompiled header"] = min(cold)
        rows["cold, building the header (2nd)"] = min(build)
        rows["cold, header present"] = min(warm)
        rows["first compile, prebuilt layer"] = min(prebuilt)
        cache = tmp / "cache0"
        load_code = f"""
            import time, isthmus as q
            q.init("cpu")
            t0 = time.perf_counter()
            q.compile_string("ct_warm0", {KERNEL.replace("color_temperature", "ct_warm0")!r})
            print(time.perf_counter() - t0)
        """
        rows["cached load, new process"] = min(new_process(cache, load_code)
                                               for _ in range(REPEAT))
        empty = min(gxx(tmp, "int isthmus_probe;\n") for _ in range(REPEAT))
        header = min(gxx(tmp, "#include <isthmus/plugin.hpp>\n") for _ in range(REPEAT))
        cuda = cuda_rows(tmp)
    raw = cupy_rawmodule()
    print(f"{'color_temperature (C++)':36}{'seconds':>10}{'/ g++ empty':>13}")
    for name, t in rows.items():
        print(f"{name:36}{t:10.4f}{t / empty:12.1f}x")
    print(f"{'g++ -O2 -shared, empty file':36}{empty:10.3f}{1.0:12.1f}x")
    print(f"{'g++ -O2 -shared, plugin.hpp only':36}{header:10.3f}{header / empty:12.1f}x")
    for name, t in cuda.items():
        print(f"{name:36}{t:10.4f}{t / empty:12.1f}x")
    if raw is not None:
        print(f"{'CuPy RawModule compile (CUDA)':36}{raw:10.3f}{raw / empty:12.1f}x")
    else:
        print("CuPy RawModule: not measured (CuPy or a GPU missing)")
    print("targets: header present <= 1.0 s, the header's build <= 3 s, "
          "cached load < 5 ms; CUDA: NVRTC device compile <= 1.0 s, cached load < 5 ms")


if __name__ == "__main__":
    main()
