"""Kernel-only compiles (Note [kernel-only plugins]): a C++ source that registers kernels only is
compiled against the kernel half of the author layer, and behaves exactly as the same source
compiled against the full layer: the same results, signatures, shape rules and errors. A source
that needs the full layer gets it, and a failing source reports what the full layer says."""
import re

import numpy as np
import pytest

import isthmus as q

# Kernels of every basic parameter type: views (const, rank 1 and 2, 'clamped with a declared
# stencil), numbers (float, double, int8 for the overflow rule, bool), vec and ivec positions.
KERNELS = """
namespace ip = isthmus::plugin;
ISTHMUS_PLUGIN(NAME, m) {
    m.kernel("NAME_axpb", [](ip::view<const float, 1> x, ip::view<float, 1> y, float a, double b,
                             int64_t i) { y(i) = a * x(i) + float(b); }, {"x", "y", "a", "b"})
        .at_position({"x", "y"});
    m.kernel("NAME_blur", [](ip::view<const double, 2, ip::access::clamped> x,
                             ip::view<double, 2> y, ip::ivec2 p) {
        double s = 0;
        for (int di = -1; di <= 1; ++di)
            for (int dj = -1; dj <= 1; ++dj) s += x(p[0] + di, p[1] + dj);
        y(p[0], p[1]) = s / 9.0 + std::sqrt(std::abs(x(p[0], p[1])));
    }, {"x", "y"}).stencil({"x"}, 1);
    m.kernel("NAME_mix", [](ip::view<int32_t, 1> out, int8_t k, bool neg, ip::vec3 w, int64_t i) {
        const int32_t v = int32_t(k) * int32_t(i) + int32_t(w[0] + w[1] + w[2]);
        out(i) = neg ? -v : v;
    }, {"out", "k", "neg", "w"});
}
"""


def source(name, marker=""):
    # `marker` is a comment: "// .def(" makes the scan choose the full layer for the same kernels
    return KERNELS.replace("NAME", name) + marker + "\n"


def layer_of(cache, name):
    (meta,) = cache.glob(f"{name}-*.meta")
    m = re.search(r"^layer (\S+)$", meta.read_text(), re.M)
    return m.group(1) if m else None


@pytest.fixture
def cache(plugin_cache):
    """A fresh cache whose compiles have the precompiled layer: the library's prebuilt one, or,
    for another compiler ($CXX of the sanitizer gate), the cache's, which the second cold compile
    builds."""
    for k in range(3):
        name = f"ko_warm{k}"
        q.compile_string(name, f"ISTHMUS_PLUGIN({name}, m) {{ m.kernel(\"{name}_k\", "
                               "[](isthmus::plugin::view<float, 1> y, int64_t i) { y(i) = 1; }); }")
        if layer_of(plugin_cache, name) == "kernel-only":
            return plugin_cache
    pytest.skip("no precompiled layer for this compiler (a compiler other than GCC or Clang)")


def run_all(mod, name, rng):
    x = rng.standard_normal(1000).astype(np.float32)
    y = q.zeros(1000, dtype="float32")
    q.parallel_do(1000, x, y, 1.5, -0.25, getattr(mod, f"{name}_axpb"))
    img = rng.standard_normal((37, 53))
    out = q.zeros((37, 53), dtype="float64")
    q.parallel_do((37, 53), img, out, getattr(mod, f"{name}_blur"))
    ints = q.zeros(64, dtype="int32")
    q.parallel_do(64, ints, -3, True, np.array([1.0, 2.0, 3.5], dtype=np.float32),
                  getattr(mod, f"{name}_mix"))
    return np.asarray(y), np.asarray(out), np.asarray(ints), x, img


def test_a_kernel_only_source_uses_the_kernel_half_and_computes_what_the_full_layer_does(cache):
    lean = q.compile_string("ko_lean", source("ko_lean"))
    full = q.compile_string("ko_full", source("ko_full", "// .def( chooses the full layer"))
    assert layer_of(cache, "ko_lean") == "kernel-only"
    assert layer_of(cache, "ko_full") == "full"
    got = run_all(lean, "ko_lean", np.random.default_rng(5))
    ref = run_all(full, "ko_full", np.random.default_rng(5))
    for a, b in zip(got, ref):
        np.testing.assert_array_equal(a, b)  # the same code: bit-identical
    y, out, ints, x, img = got
    np.testing.assert_allclose(y, 1.5 * x.astype(np.float64) - 0.25, rtol=1e-6, atol=1e-7)
    padded = np.pad(img, 1, mode="edge")
    blur = sum(padded[1 + di:38 + di, 1 + dj:54 + dj] for di in (-1, 0, 1) for dj in (-1, 0, 1))
    np.testing.assert_allclose(out, blur / 9.0 + np.sqrt(np.abs(img)), rtol=1e-12)
    np.testing.assert_array_equal(ints, -(-3 * np.arange(64) + 6))
    # the same descriptors: signatures and parameter names
    for k in ("axpb", "blur", "mix"):
        a, b = getattr(lean, f"ko_lean_{k}"), getattr(full, f"ko_full_{k}")
        assert a.signature.replace("ko_lean", "") == b.signature.replace("ko_full", "")


def errors_of(mod, name):
    """The messages of bad launches (each a typed error; nothing written)."""
    axpb, mix, blur = (getattr(mod, f"{name}_{k}") for k in ("axpb", "mix", "blur"))
    x = np.ones(8, dtype=np.float32)
    y = q.zeros(8, dtype="float32")
    out = []
    for call, err in [
        (lambda: q.parallel_do(8, x, q.zeros(8, dtype="float64"), 1.0, 0.0, axpb), TypeError),
        (lambda: q.parallel_do(8, x, y, "a", 0.0, axpb), TypeError),
        (lambda: q.parallel_do(8, x, y, 1.0, axpb), TypeError),
        (lambda: q.parallel_do(9, x, y, 1.0, 0.0, axpb), ValueError),  # at_position
        (lambda: q.parallel_do(8, q.zeros(8, dtype="int32"), 300, False,
                               np.zeros(3, np.float32), mix), OverflowError),
        (lambda: q.parallel_do(8, q.zeros(8, dtype="int32"), 1, False,
                               np.zeros(4, np.float32), mix), TypeError),
        (lambda: q.parallel_do((2, 2), np.ones((2, 2, 1)), q.zeros((2, 2), dtype="float64"),
                               blur), TypeError),
    ]:
        with pytest.raises(err) as e:
            call()
        out.append(str(e.value).replace(name, "NAME"))
    np.testing.assert_array_equal(np.asarray(y), 0)
    return out


def test_errors_are_the_full_layers(cache):
    lean = q.compile_string("ko_errl", source("ko_errl"))
    full = q.compile_string("ko_errf", source("ko_errf", "// .def("))
    assert layer_of(cache, "ko_errl") == "kernel-only"
    got, ref = errors_of(lean, "ko_errl"), errors_of(full, "ko_errf")
    assert got == ref
    assert "argument 2 (y)" in got[0] and "float32" in got[0]
    assert "out of bounds for int8" in got[4]


def test_checked_mode_names_the_argument_as_the_full_layer_does(cache):
    src = """
    namespace ip = isthmus::plugin;
    ISTHMUS_PLUGIN(NAME, m) {
        m.kernel("NAME_shift", [](ip::view<const float, 1> x, ip::view<float, 1> y, int64_t i) {
            y(i) = x(i + 1);
        }, {"x", "y"});
    }
    """
    msgs = []
    for name, marker in (("ko_chkl", ""), ("ko_chkf", "// .def(")):
        mod = q.compile_string(name, src.replace("NAME", name) + marker)
        y = q.zeros(4, dtype="float32")
        with q.checked(), pytest.raises(IndexError) as e:
            q.parallel_do(4, np.ones(4, np.float32), y, getattr(mod, f"{name}_shift"))
        msgs.append(str(e.value).replace(name, "NAME"))
    assert layer_of(cache, "ko_chkl") == "kernel-only"
    assert msgs[0] == msgs[1]
    assert "index 4 is out of bounds for dimension 0 with size 4" in msgs[0]
    assert "argument 1 (x)" in msgs[0]


def test_what_only_the_full_layer_has_compiles_with_it(cache):
    # no marker: the scan tries the kernel half, which has no ip::tensor or std::string; the
    # compile falls back to the full layer
    src = """
    namespace ip = isthmus::plugin;
    static std::string label() { return "ok"; }
    ISTHMUS_PLUGIN(ko_fallback, m) {
        m.kernel("ko_fallback_k", [](ip::view<float, 1> y, int64_t i) {
            y(i) = float(label().size());
        }, {"y"});
    }
    """
    mod = q.compile_string("ko_fallback", src)
    assert layer_of(cache, "ko_fallback") == "full"
    y = q.zeros(5, dtype="float32")
    q.parallel_do(5, y, mod.ko_fallback_k)
    np.testing.assert_array_equal(np.asarray(y), 2.0)
    # functions and generic code: the full layer at once
    mod = q.compile_string("ko_funcs", """
    ISTHMUS_PLUGIN(ko_funcs, m) { m.def("ko_funcs_f", [](double x) { return 2 * x; }); }""")
    assert layer_of(cache, "ko_funcs") == "full" and mod.ko_funcs_f(2.0) == 4.0


def zeta(s, n=1000):
    """Riemann's zeta at s > 1: the first n terms and the Euler-Maclaurin tail (error ~n^-s-3)."""
    return (sum(k ** -s for k in range(1, n)) + n ** (1 - s) / (s - 1) + 0.5 * n ** -s
            + s / 12 * n ** (-s - 1))


def test_cmath_in_kernels_and_the_special_functions(cache):
    # See Note [cmath in kernel-only compiles]: <cmath>'s everyday functions are in the kernel
    # half; a special function (C++17's std::riemann_zeta) makes the compile take the full layer,
    # with the same result
    src = """
    namespace ip = isthmus::plugin;
    ISTHMUS_PLUGIN({name}, m) {{
        m.kernel("{name}_k", [](ip::view<const double, 1> x, ip::view<double, 1> y, int64_t i) {{
            y(i) = {expr};
        }}, {{"x", "y"}});
    }}
    """
    x = np.linspace(2.0, 4.0, 7)
    for name, expr, layer, want in [
            ("ko_math", "std::exp(x(i)) + std::hypot(x(i), 1.0)", "kernel-only",
             np.exp(x) + np.hypot(x, 1.0)),
            ("ko_zeta", "std::riemann_zeta(x(i))", "full",
             [zeta(v) for v in x])]:
        mod = q.compile_string(name, src.format(name=name, expr=expr))
        assert layer_of(cache, name) == layer
        y = np.zeros(7)
        q.parallel_do(7, x, y, getattr(mod, f"{name}_k"))
        np.testing.assert_allclose(y, want, rtol=1e-9)


def test_a_failing_kernel_reports_the_users_line_from_the_full_layer(cache):
    src = "namespace ip = isthmus::plugin;\nISTHMUS_PLUGIN(ko_bad, m) {\n" \
          "    m.kernel(\"ko_bad_k\", [](ip::view<float, 1> y, int64_t i) {\n" \
          "        y(i) = undefined_name;\n    });\n}\n"
    with pytest.raises(q.CompileError) as e:
        q.compile_string("ko_bad", src)
    assert "ko_bad.cpp:4" in e.value.diagnostics and "undefined_name" in e.value.diagnostics
    assert list(cache.glob("ko_bad-*.so")) == []


def test_a_name_list_of_the_wrong_length_fails_the_load_naming_it(cache):
    src = """
    ISTHMUS_PLUGIN(ko_names, m) {
        m.kernel("ko_names_k", [](isthmus::plugin::view<float, 1> y, float a, int64_t i) {
            y(i) = a;
        }, {"y"});
    }"""
    with pytest.raises(RuntimeError, match=r'"ko_names_k" names 1 parameter\(s\) but has 2'):
        q.compile_string("ko_names", src)
    assert layer_of(cache, "ko_names") == "kernel-only"


def test_without_the_precompiled_layer_it_compiles_as_before(plugin_cache, monkeypatch):
    monkeypatch.setenv("ISTHMUS_PLUGIN_PCH", "0")
    mod = q.compile_string("ko_nolayer", source("ko_nolayer"))
    assert layer_of(plugin_cache, "ko_nolayer") == "none"
    y, *_ = run_all(mod, "ko_nolayer", np.random.default_rng(1))
    assert y.shape == (1000,)


CUDA_SOURCE = r"""namespace ip = isthmus::plugin;
ISTHMUS_KERNEL(NAME_scale, ip::view<const float, 2> x, ip::view<float, 2> y, float s, ip::ivec2 p) {
    y(p[0], p[1]) = s * x(p[0], p[1]) + sqrtf(float(p[1]));
}
ISTHMUS_PLUGIN(NAME, m) { m.kernel("NAME_scale", NAME_scale{}, {"x", "y", "s"}); }
"""


@pytest.mark.skipif(q.nvrtc_library() is None, reason="no NVRTC (pip install nvidia-cuda-nvrtc)")
def test_the_host_pass_of_nvrtc_source_uses_the_kernel_half(cache):
    # NVRTC compiles the device pass; the host pass (the CPU launcher and the NVRTC launcher of
    # the ISTHMUS_KERNEL entry) is C++ against the kernel half, and means what the full layer's
    # does: the same CUDA launcher is registered
    lean = q.compile_string("ko_cu", CUDA_SOURCE.replace("NAME", "ko_cu"), lang="cuda")
    full = q.compile_string("ko_cuf", CUDA_SOURCE.replace("NAME", "ko_cuf") + "// .def(\n",
                            lang="cuda")
    assert layer_of(cache, "ko_cu") == "kernel-only" and layer_of(cache, "ko_cuf") == "full"
    assert lean.ko_cu_scale.devices == full.ko_cuf_scale.devices
    assert "cuda" in " ".join(lean.ko_cu_scale.devices)
    x = np.random.default_rng(3).random((6, 9), dtype=np.float32)
    ys = []
    for k in (lean.ko_cu_scale, full.ko_cuf_scale):
        y = q.zeros((6, 9), dtype="float32")
        q.parallel_do((6, 9), x, y, 3.0, k)
        ys.append(np.asarray(y))
    np.testing.assert_array_equal(ys[0], ys[1])
    np.testing.assert_allclose(ys[0], 3 * x + np.sqrt(np.arange(9, dtype=np.float32)), rtol=1e-6)
