"""The forward mode of generic kernels (Note [derived forward mode]): `<name>_jvp` adds the tangent
of each output given the tangent of each differentiable input; checked against central
differences in float64 and against the transpose identity <J v, u> = <v, J^T u> with the derived
backward kernel (<name>_vjp), for the PyQuasar manual's color_temperature (image, temp, cold, hot),
a clamped 3x3 stencil, a scatter with += and overwritten writes; bad input is a typed error with
the tangents unchanged."""
import numpy as np
import pytest

import isthmus as q
from generic_kernels import GENERIC_KERNELS

SRC = r"""
namespace ip = isthmus::plugin;

""" + GENERIC_KERNELS + r"""
// several positions add into one element: y[idx[i]] += a[i]^2; then an overwritten write
template <typename T>
struct scatter {
    void operator()(ip::view<const T, 1> a, ip::view<const int64_t, 1> idx, ip::view<T, 1> y,
                    ip::view<T, 1> z, int64_t i) const {
        y(idx(i)) += a(i) * a(i);
        z(i) = T(100) * a(i);
        z(i) = sin(a(i));
    }
};

ISTHMUS_PLUGIN(derived_kernel_forward, m) {
    m.kernel("dkf_color",
             ip::generic<double>([]<typename T>() { return color_temperature<T>{}; }, ip::with_jvp),
             {"x", "y", "temp", "cold", "hot"})
        .at_position({"x", "y"});
    m.kernel("dkf_blur", ip::generic<double>([]<typename T>() { return blur<T>{}; }, ip::with_jvp),
             {"x", "y", "s"})
        .stencil({"x"}, 1);
    m.kernel("dkf_blur32", ip::generic<float>([]<typename T>() { return blur<T>{}; }, ip::with_jvp),
             {"x", "y", "s"});
    m.kernel("dkf_scatter",
             ip::generic<double>([]<typename T>() { return scatter<T>{}; }, ip::with_jvp),
             {"a", "idx", "y", "z"});
    m.kernel("dkf_no_jvp", ip::generic<double>([]<typename T>() { return blur<T>{}; }),
             {"x", "y", "s"});
}
"""


@pytest.fixture(scope="module")
def mod():
    return q.compile_string("derived_kernel_forward", SRC)


def scalar(v):
    return q.value(np.array(v, dtype=np.float64))


def run_color(mod, x, temp, cold, hot):
    y = q.zeros(x.shape, dtype="float64")
    q.parallel_do(x.shape[:2], x, y, temp, cold, hot, mod.dkf_color)
    return np.asarray(y)


def jvp_color(mod, x, temp, cold, hot, dx, dtemp, dcold, dhot):
    y, dy = q.zeros(x.shape, dtype="float64"), q.zeros(x.shape, dtype="float64")
    q.parallel_do(x.shape[:2], x, y, temp, cold, hot, dx, scalar(dtemp), dcold, dhot, dy,
                  mod.dkf_color.jvp)
    return np.asarray(y), np.asarray(dy)


@pytest.mark.parametrize("temp", [-1.7, 2.3])
def test_color_temperature_against_central_differences(mod, temp):
    rng = np.random.default_rng(1)
    x = rng.random((5, 7, 3))
    cold, hot = rng.random(3), rng.random(3)
    dx, dtemp, dcold, dhot = rng.standard_normal(x.shape), 0.7, rng.standard_normal(3), \
        rng.standard_normal(3)
    assert mod.dkf_color.jvp.signature.startswith(
        "dkf_color_jvp(x: cube, y: cube, temp: float64, cold: vec3, hot: vec3, tangent_x: cube, "
        "tangent_temp: scalar, tangent_cold: vec, tangent_hot: vec, tangent_y: cube")
    y, dy = jvp_color(mod, x, temp, cold, hot, dx, dtemp, dcold, dhot)
    np.testing.assert_allclose(y, run_color(mod, x, temp, cold, hot), rtol=1e-15)
    h = 1e-6
    plus = run_color(mod, x + h * dx, temp + h * dtemp, cold + h * dcold, hot + h * dhot)
    minus = run_color(mod, x - h * dx, temp - h * dtemp, cold - h * dcold, hot - h * dhot)
    np.testing.assert_allclose(dy, (plus - minus) / (2 * h), rtol=1e-7, atol=1e-8)


def blur_jvp(kernel, x, s, dx, ds, dtype="float64"):
    y, dy = q.zeros(x.shape, dtype=dtype), q.zeros(x.shape, dtype=dtype)
    q.parallel_do(x.shape, x, y, s, dx, q.value(np.array(ds, dtype=dtype)), dy, kernel.jvp)
    return np.asarray(y), np.asarray(dy)


def test_stencil_against_differences_and_the_derived_backward(mod):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((9, 11))
    dx, ds, u = rng.standard_normal(x.shape), -0.4, rng.standard_normal(x.shape)

    def f(x, s):
        y = q.zeros(x.shape, dtype="float64")
        q.parallel_do(x.shape, x, y, s, mod.dkf_blur)
        return np.asarray(y)

    y, dy = blur_jvp(mod.dkf_blur, x, 1.3, dx, ds)
    np.testing.assert_allclose(y, f(x, 1.3), rtol=1e-14)  # up to contraction
    h = 1e-6
    np.testing.assert_allclose(dy, (f(x + h * dx, 1.3 + h * ds) - f(x - h * dx, 1.3 - h * ds))
                               / (2 * h), rtol=1e-6, atol=1e-7)
    # <J v, u> = <v, J^T u>: the forward mode and the derived backward agree
    gx, gs = q.zeros(x.shape, dtype="float64"), q.zeros((), dtype="float64")
    q.parallel_do(x.shape, x, q.zeros(x.shape, dtype="float64"), 1.3, u, gx, gs, mod.dkf_blur.vjp)
    lhs = np.sum(dy * u)
    rhs = np.sum(dx * np.asarray(gx)) + ds * float(np.asarray(gs))
    assert lhs == pytest.approx(rhs, rel=1e-12)
    # strided and transposed inputs and tangents: the same tangents
    xs, dxs = np.asfortranarray(x), dx.T.copy().T
    np.testing.assert_allclose(blur_jvp(mod.dkf_blur, xs, 1.3, dxs, ds)[1], dy, rtol=1e-14)


def test_float32_and_deterministic_mode(mod):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((33, 17)).astype(np.float32)
    dx = rng.standard_normal(x.shape).astype(np.float32)
    ref64 = blur_jvp(mod.dkf_blur, x.astype(np.float64), 0.8, dx.astype(np.float64), 0.5)[1]
    _, d32 = blur_jvp(mod.dkf_blur32, x, np.float32(0.8), dx, 0.5, dtype="float32")
    np.testing.assert_allclose(d32, ref64, rtol=2e-4, atol=2e-4)
    with q.deterministic():
        _, again = blur_jvp(mod.dkf_blur32, x, np.float32(0.8), dx, 0.5, dtype="float32")
    np.testing.assert_array_equal(again, d32)  # each element is written by its own position


def test_scatter_adds_and_an_overwritten_write_counts_once(mod):
    a = np.array([0.5, -1.0, 2.0, 3.0, 0.25])
    idx = np.array([1, 0, 1, 1, 2], dtype=np.int64)
    da = np.array([1.0, 2.0, -1.0, 0.5, 4.0])
    y, z = q.zeros(3, dtype="float64"), q.zeros(5, dtype="float64")
    ty, tz = q.zeros(3, dtype="float64"), q.zeros(5, dtype="float64")
    q.parallel_do(5, a, idx, y, z, da, ty, tz, mod.dkf_scatter.jvp)
    expect_ty = np.zeros(3)
    np.add.at(expect_ty, idx, 2 * a * da)
    np.testing.assert_allclose(np.asarray(ty), expect_ty, rtol=1e-15)
    np.testing.assert_allclose(np.asarray(tz), np.cos(a) * da, rtol=1e-15)  # not 100 * da
    expect_y = np.zeros(3)
    np.add.at(expect_y, idx, a * a)
    np.testing.assert_allclose(np.asarray(y), expect_y, rtol=1e-15)


def test_opt_in_and_names(mod):
    assert mod.dkf_no_jvp.jvp is None and mod.dkf_no_jvp.vjp is not None
    assert mod.dkf_blur.jvp.name == "dkf_blur_jvp"
    params = str(mod.dkf_blur.jvp.__signature__)
    assert "tangent_x" in params and "tangent_s" in params and "tangent_y" in params
    assert "derived_kernel_forward" == mod.dkf_blur.jvp.plugin


def test_bad_tangents_are_typed_errors_with_the_tangents_unchanged(mod):
    x = np.ones((4, 4))
    y, dy = q.zeros((4, 4), dtype="float64"), q.zeros((4, 4), dtype="float64")
    with pytest.raises(ValueError, match="tangent has size 3 along dimension 1"):
        q.parallel_do((4, 4), x, y, 1.0, np.ones((4, 3)), scalar(0.0), dy, mod.dkf_blur.jvp)
    with pytest.raises(TypeError):
        q.parallel_do((4, 4), x, y, 1.0, np.ones((4, 4)), scalar(0.0), mod.dkf_blur.jvp)
    with pytest.raises(ValueError, match="an output view is also passed as a differentiable"):
        xx = q.value(np.ones((4, 4)))
        q.parallel_do((4, 4), xx, xx, 1.0, np.ones((4, 4)), scalar(0.0), dy, mod.dkf_blur.jvp)
    np.testing.assert_array_equal(np.asarray(dy), 0)


def test_a_kernel_with_jvp_needs_a_floating_type():
    src = """
    namespace ip = isthmus::plugin;
    template <typename T>
    struct k { void operator()(ip::view<T, 1> y, int64_t i) const { y(i) = T(1); } };
    ISTHMUS_PLUGIN(dkf_int, m) {
        m.kernel("dkf_int_k", ip::generic<int32_t>([]<typename T>() { return k<T>{}; },
                                                    ip::with_jvp));
    }"""
    with pytest.raises(q.CompileError) as e:
        q.compile_string("dkf_int", src)
    assert "needs a floating element type" in e.value.diagnostics
