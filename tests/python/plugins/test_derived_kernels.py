"""Kernels derived from generic kernels (Note [derived kernels]): `<name>_vjp` adds the gradient of
each input given the gradient of each output; checked against central differences in float64
(the PyQuasar manual's color_temperature with respect to the image, temp, cold and hot; a
clamped 3x3 stencil with and without its stencil declaration; a gather), against a hand-written
backward kernel, on strided inputs and every thread count; bad input is a typed error with the
gradients unchanged."""
import numpy as np
import pytest

import isthmus as q
from generic_kernels import GENERIC_KERNELS

SRC = r"""
namespace ip = isthmus::plugin;

""" + GENERIC_KERNELS + r"""
// A gather through an index array, written twice and accumulated: y = 2 a[idx] + a[idx + 1]^2.
template <typename T>
struct gather {
    void operator()(ip::view<const T, 1, ip::access::circular> a, ip::view<const int64_t, 1> idx,
                    ip::view<T, 1> y, int64_t i) const {
        y(i) = a(idx(i));
        y(i) += a(idx(i));
        y(i) += a(idx(i) + 1) * a(idx(i) + 1);
    }
};

// The last write counts: an overwritten value gets no gradient.
template <typename T>
struct overwrite {
    void operator()(ip::view<const T, 1> x, ip::view<T, 1> y, int64_t i) const {
        y(i) = T(100) * x(i);
        y(i) = sin(x(i));
        y(i) -= x(i) * x(i);
    }
};

ISTHMUS_PLUGIN(derived_kernels, m) {
    m.kernel("dk_color",
             ip::generic<double>([]<typename T>() { return color_temperature<T>{}; }),
             {"x", "y", "temp", "cold", "hot"})
        .at_position({"x", "y"});
    m.kernel("dk_blur", ip::generic<double>([]<typename T>() { return blur<T>{}; }),
             {"x", "y", "s"})
        .stencil({"x"}, 1)
        .at_position({"y"});
    m.kernel("dk_blur_plain", ip::generic<double>([]<typename T>() { return blur<T>{}; }),
             {"x", "y", "s"});
    m.kernel("dk_blur32", ip::generic<float>([]<typename T>() { return blur<T>{}; }),
             {"x", "y", "s"});
    m.kernel("dk_gather", ip::generic<double>([]<typename T>() { return gather<T>{}; }),
             {"a", "idx", "y"});
    m.kernel("dk_overwrite", ip::generic<double>([]<typename T>() { return overwrite<T>{}; }),
             {"x", "y"});
    // the blur's backward by hand, for comparison
    m.kernel("dk_blur_by_hand",
             [](ip::view<const double, 2, ip::access::clamped> x, ip::view<const double, 2> dy,
                ip::view<double, 2> dx, double s, ip::ivec2 p) {
                 double acc = 0;
                 for (int di = -1; di <= 1; ++di)
                     for (int dj = -1; dj <= 1; ++dj)
                         acc += (3 * di + dj + 5) * x(p[0] + di, p[1] + dj);
                 const double d = 1 + acc * acc;
                 const double g = dy(p[0], p[1]) * s * 2 * acc / (d * d);
                 const int64_t h = x.size(0), w = x.size(1);
                 for (int di = -1; di <= 1; ++di)
                     for (int dj = -1; dj <= 1; ++dj) {
                         const int64_t a = std::min<int64_t>(std::max<int64_t>(p[0] + di, 0), h - 1);
                         const int64_t b = std::min<int64_t>(std::max<int64_t>(p[1] + dj, 0), w - 1);
                         std::atomic_ref<double>(dx(a, b)).fetch_add((3 * di + dj + 5) * g);
                     }
             },
             {"x", "dy", "dx", "s"});
    m.kernel("dk_concrete", [](ip::view<const double, 1> x, ip::view<double, 1> y, int64_t i) {
        y(i) = x(i);
    });
}
"""


@pytest.fixture(scope="module")
def mod(worker_cache):
    with worker_cache("derived_kernels"):
        yield q.compile_string("derived_kernels", SRC)


def numeric_grad(f, x, eps=1e-6):
    """Central differences of the scalar f at x (an array, changed and restored in place)."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        keep = x[i]
        x[i] = keep + eps
        up = f()
        x[i] = keep - eps
        down = f()
        x[i] = keep
        g[i] = (up - down) / (2 * eps)
    return g


def test_color_temperature_gradients_of_every_input(mod):
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 255, (5, 4, 3))
    cold, hot = np.array([0.5, 0.7, 1.0]), np.array([1.0, 0.6, 0.3])
    for temp in (-1.3, 2.1):
        t = np.array(temp)
        dy = rng.standard_normal(x.shape)

        def loss():
            y = np.zeros_like(x)
            q.parallel_do((5, 4), x, y, float(t), cold, hot, mod.dk_color)
            return float((y * dy).sum())

        gx, gt, gc, gh = np.zeros_like(x), np.zeros(()), np.zeros(3), np.zeros(3)
        q.parallel_do((5, 4), x, np.zeros_like(x), temp, cold, hot, dy, gx, gt, gc, gh,
                      mod.dk_color.vjp)
        np.testing.assert_allclose(gx, numeric_grad(loss, x), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(gt, numeric_grad(loss, t), rtol=1e-6)
        np.testing.assert_allclose(gc, numeric_grad(loss, cold), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(gh, numeric_grad(loss, hot), rtol=1e-6, atol=1e-6)
        # the side not taken gets nothing
        assert not (gh if temp < 0 else gc).any()


@pytest.mark.parametrize("shape", [(1, 1), (2, 3), (6, 5), (17, 33)])
def test_the_clamped_stencil_matches_differences_and_the_hand_written_backward(mod, shape):
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape) * 0.1
    s = 1.7
    dy = rng.standard_normal(shape)
    ref = np.zeros(shape)
    q.parallel_do(shape, x, dy, ref, s, mod.dk_blur_by_hand)
    for kernel in (mod.dk_blur, mod.dk_blur_plain):  # with and without the stencil interior
        gx, gs = np.zeros(shape), np.zeros(())
        q.parallel_do(shape, x, np.zeros(shape), s, dy, gx, gs, kernel.vjp)
        np.testing.assert_allclose(gx, ref, rtol=1e-12, atol=1e-14)
        if shape == (6, 5):
            def loss():
                y = np.zeros(shape)
                q.parallel_do(shape, x, y, s, kernel)
                return float((y * dy).sum())
            np.testing.assert_allclose(gx, numeric_grad(loss, x), rtol=1e-5, atol=1e-7)
            sv = np.array(s)
            s_loss = lambda: (q.parallel_do(shape, x, y := np.zeros(shape), float(sv), kernel),  # noqa: E731
                              float((y * dy).sum()))[1]
            np.testing.assert_allclose(gs, numeric_grad(s_loss, sv), rtol=1e-6)


def test_gradients_accumulate_and_layouts_do_not_matter(mod):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((40, 30)) * 0.2
    dy = rng.standard_normal((40, 30))
    ref = np.zeros((40, 30))
    q.parallel_do(x.shape, x, dy, ref, 0.5, mod.dk_blur_by_hand)
    xt = np.ascontiguousarray(x.T).T  # column-major
    dyt = np.asarray(dy[:, ::-1])[:, ::-1]  # negative strides twice: the same values
    gx = np.full((40, 30), 1.0)  # gradients add to what is there
    q.parallel_do(x.shape, xt, np.zeros((40, 30)), 0.5, dyt, gx, np.zeros(()), mod.dk_blur.vjp)
    np.testing.assert_allclose(gx, ref + 1.0, rtol=1e-10, atol=1e-13)
    gx_strided = np.zeros((40, 60))[:, ::2]
    q.parallel_do(x.shape, x, np.zeros((40, 30)), 0.5, dy, gx_strided, np.zeros(()),
                  mod.dk_blur.vjp)
    np.testing.assert_allclose(gx_strided, ref, rtol=1e-10, atol=1e-13)


def test_every_thread_count_gives_the_same_gradient_and_deterministic_mode_the_same_bits(
        mod, run_python, tmp_path):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((300, 200)) * 0.1
    dy = rng.standard_normal(x.shape)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "dy.npy", dy)
    ref = np.zeros(x.shape)
    q.parallel_do(x.shape, x, dy, ref, 1.0, mod.dk_blur_by_hand)
    code = f"""
        import numpy as np, isthmus as q
        q.init("cpu")
        m = q.compile_string("derived_kernels", {SRC!r})  # a cache hit
        x, dy = np.load({str(tmp_path / "x.npy")!r}), np.load({str(tmp_path / "dy.npy")!r})
        n = str(q.build_info()["openmp_threads"])
        gx = np.zeros(x.shape)
        q.parallel_do(x.shape, x, np.zeros(x.shape), 1.0, dy, gx, np.zeros(()), m.dk_blur.vjp)
        np.save({str(tmp_path)!r} + "/g" + n + ".npy", gx)
        gd = np.zeros(x.shape)
        with q.deterministic():
            assert q.deterministic.active()
            q.parallel_do(x.shape, x, np.zeros(x.shape), 1.0, dy, gd, np.zeros(()),
                          m.dk_blur.vjp)
        assert not q.deterministic.active()
        np.save({str(tmp_path)!r} + "/d" + n + ".npy", gd)
    """
    for n in (1, 2, 3):
        run_python(code.replace("import numpy", f"import os; os.environ['OMP_NUM_THREADS'] = "
                                                f"'{n}'\n        import numpy"))
        g = np.load(tmp_path / f"g{n}.npy")
        np.testing.assert_allclose(g, ref, rtol=1e-10, atol=1e-13, err_msg=f"{n} thread(s)")
    # deterministic mode: the same bits on every thread count (Note [deterministic launches])
    d1 = np.load(tmp_path / "d1.npy")
    np.testing.assert_allclose(d1, ref, rtol=1e-10, atol=1e-13)
    for n in (2, 3):
        assert np.array_equal(np.load(tmp_path / f"d{n}.npy"), d1), f"{n} threads"


def test_float32_kernels_derive_too(mod):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((9, 8)) * 0.1).astype(np.float32)
    dy = rng.standard_normal((9, 8)).astype(np.float32)
    ref = np.zeros((9, 8))
    q.parallel_do(x.shape, x.astype(np.float64), dy.astype(np.float64), ref, 1.0,
                  mod.dk_blur_by_hand)
    gx = np.zeros((9, 8), np.float32)
    q.parallel_do(x.shape, x, np.zeros_like(x), 1.0, dy, gx, np.zeros((), np.float32),
                  mod.dk_blur32.vjp)
    np.testing.assert_allclose(gx, ref, rtol=1e-4, atol=1e-5)


def test_a_gather_scatters_and_the_circular_map_wraps(mod):
    a = np.array([1.0, 2.0, 3.0, 4.0])
    idx = np.array([0, 3, 3, 1, 7])  # 3 + 1 wraps to 0; 7 wraps to 3
    dy = np.array([1.0, 10.0, 100.0, 1000.0, 10000.0])
    ga = np.zeros(4)
    q.parallel_do((5,), a, idx, np.zeros(5), dy, ga, mod.dk_gather.vjp)
    ref = np.zeros(4)
    for i, d in zip(idx, dy):
        ref[i % 4] += 2 * d
        ref[(i + 1) % 4] += 2 * a[(i + 1) % 4] * d
    np.testing.assert_allclose(ga, ref)


def test_only_the_last_write_of_an_element_counts(mod):
    x = np.array([0.3, -1.2, 2.0])
    gx = np.zeros(3)
    q.parallel_do((3,), x, np.zeros(3), np.ones(3), gx, mod.dk_overwrite.vjp)
    np.testing.assert_allclose(gx, np.cos(x) - 2 * x)


def test_the_derived_kernel_lists_its_gradients(mod):
    assert mod.dk_blur.vjp.name == "dk_blur_vjp"
    assert "grad_y: mat, grad_x: mat, grad_s: scalar" in mod.dk_blur.vjp.signature
    assert "grad_cold: vec, grad_hot: vec" in mod.dk_color.vjp.signature
    assert mod.dk_concrete.vjp is None
    assert mod.dk_blur.vjp.vjp is None  # first derivatives only


# ---- refusals: typed errors, gradients unchanged ----

def test_mismatched_gradients_are_value_errors(mod):
    x = np.zeros((4, 5))
    gx = np.full((4, 5), 7.0)
    with pytest.raises(ValueError, match="a gradient has size 6 along dimension 1 where its "
                                         "input has 5"):
        q.parallel_do((4, 5), x, np.zeros((4, 5)), 1.0, np.ones((4, 5)), np.zeros((4, 6)),
                      np.zeros(()), mod.dk_blur_plain.vjp)
    with pytest.raises(ValueError, match="an output gradient has size 3 along dimension 0 where "
                                         "its output has 4"):
        q.parallel_do((3, 5), x, np.zeros((4, 5)), 1.0, np.ones((3, 5)), gx, np.zeros(()),
                      mod.dk_blur_plain.vjp)
    np.testing.assert_array_equal(gx, 7.0)
    with pytest.raises(ValueError, match="the gradient of a vec3 has 2 elements"):
        q.parallel_do((1, 1), np.zeros((1, 1, 3)), np.zeros((1, 1, 3)), 1.0, np.ones(3),
                      np.ones(3), np.ones((1, 1, 3)), np.zeros((1, 1, 3)), np.zeros(()),
                      np.zeros(2), np.zeros(3), mod.dk_color.vjp)
    with pytest.raises(TypeError):
        q.parallel_do((4, 5), x, np.zeros((4, 5)), 1.0, mod.dk_blur.vjp)  # no gradients


def test_an_output_passed_as_a_differentiable_input_is_refused(mod):
    x = np.ones((3, 4))
    gx = np.zeros((3, 4))
    with pytest.raises(ValueError, match="an output view is also passed as a differentiable "
                                         "input"):
        q.parallel_do((3, 4), x, x, 1.0, np.ones((3, 4)), gx, np.zeros(()), mod.dk_blur.vjp)
    np.testing.assert_array_equal(gx, 0.0)
    np.testing.assert_array_equal(x, 1.0)


def test_an_index_outside_a_view_is_an_index_error_in_checked_mode(mod):
    gx = np.zeros(2)
    with q.checked():
        with pytest.raises(IndexError):  # x has 2 elements, the launch 3 positions
            q.parallel_do((3,), np.zeros(2), np.zeros(3), np.ones(3), gx, mod.dk_overwrite.vjp)
