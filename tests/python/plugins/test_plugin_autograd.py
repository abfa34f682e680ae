"""Plugin code in isthmus's own autograd (Note [plugin calls in autograd]): a generic plugin
function called, or a generic kernel launched, on tensors that require grad records a node whose
backward is the derived one; gradients match torch's autograd of the same math; concrete plugin
code records a node that refuses backward by name; writing into a tensor that requires grad is
refused before the launch; no_grad records nothing."""
import numpy as np
import pytest

import isthmus as q

torch = pytest.importorskip("torch")

SRC = r"""
namespace ip = isthmus::plugin;

template <typename T>
static ip::tensor<T, 1> softplus_scaled(ip::view<const T, 1> x, ip::view<const T, 1> w, T s) {
    ip::tensor<T, 1> y({x.size(0)});
    for (int64_t i = 0; i < x.size(0); ++i) y(i) = s * log1p(exp(w(i) * x(i)));
    return y;
}

template <typename T>
static std::tuple<ip::tensor<T, 1>, ip::tensor<T, 1>> two_results(ip::view<const T, 1> x) {
    ip::tensor<T, 1> a({x.size(0)}), b({x.size(0)});
    for (int64_t i = 0; i < x.size(0); ++i) a(i) = x(i), b(i) = x(i) * x(i);
    return {a, b};
}

template <typename T>
struct smooth {  // y[i] = x[i-1] x[i] + sin(x[i+1]), clamped at the ends
    void operator()(ip::view<const T, 1, ip::access::clamped> x, ip::view<T, 1> y,
                    int64_t i) const {
        y(i) = x(i - 1) * x(i) + sin(x(i + 1));
    }
};

ISTHMUS_PLUGIN(plugin_autograd, m) {
    m.def("pa_softplus", ip::generic<float, double>(ISTHMUS_GENERIC(softplus_scaled)),
          {"x", "w", "s"});
    m.def("pa_two", ip::generic<double>(ISTHMUS_GENERIC(two_results)), {"x"});
    m.def("pa_concrete", [](ip::view<const double, 1> x) {
        ip::tensor<double, 1> y({x.size(0)});
        for (int64_t i = 0; i < x.size(0); ++i) y(i) = 2 * x(i);
        return y;
    }, {"x"});
    m.kernel("pa_smooth", ip::generic<double>([]<typename T>() { return smooth<T>{}; }),
             {"x", "y"}).at_position({"y"});
    m.kernel("pa_split", [](ip::view<const double, 1> x, ip::view<double, 1> a,
                            ip::view<double, 1> b, int64_t i) { a(i) = x(i); b(i) = -x(i); },
             {"x", "a", "b"});
}
"""


@pytest.fixture(scope="module")
def mod(worker_cache):
    with worker_cache("plugin_autograd"):
        yield q.compile_string("plugin_autograd", SRC)


def test_a_generic_function_is_recorded_and_matches_torch(mod):
    rng = np.random.default_rng(0)
    x_np, w_np = rng.standard_normal(7), rng.standard_normal(7)
    x = q.value(x_np, requires_grad=True)
    w = q.value(w_np, requires_grad=True)
    y = q.pa_softplus(x, w, 1.5)
    assert y.requires_grad and y.grad_fn.name() == "pa_softplus"
    (y * y).sum().backward()
    tx = torch.tensor(x_np, requires_grad=True)
    tw = torch.tensor(w_np, requires_grad=True)
    ty = 1.5 * torch.log1p(torch.exp(tw * tx))
    (ty * ty).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(w.grad), tw.grad.numpy(), rtol=1e-12)


def test_only_the_tensors_that_require_grad_get_gradients(mod):
    x = q.value(np.linspace(-1, 1, 5), requires_grad=True)
    w = q.value(np.ones(5))
    q.pa_softplus(x, w, 2.0).sum().backward()
    assert x.grad is not None and w.grad is None
    np.testing.assert_allclose(np.asarray(x.grad), 2 / (1 + np.exp(-np.linspace(-1, 1, 5))))


def test_a_float32_call_keeps_float32_gradients(mod):
    x = q.value(np.linspace(-1, 1, 4, dtype=np.float32), requires_grad=True)
    q.pa_softplus(x, np.ones(4, np.float32), 1.0).sum().backward()
    assert np.asarray(x.grad).dtype == np.float32


def test_no_grad_and_plain_arguments_record_nothing(mod):
    x = q.value(np.ones(3), requires_grad=True)
    with q.no_grad():
        assert not q.pa_softplus(x, np.ones(3), 1.0).requires_grad
    assert not q.pa_softplus(np.ones(3), np.ones(3), 1.0).requires_grad


def test_a_generic_kernel_launch_is_recorded_and_matches_torch(mod):
    rng = np.random.default_rng(1)
    x_np = rng.standard_normal(9)
    x = q.value(x_np, requires_grad=True)
    y = q.zeros(9, dtype="float64")
    q.parallel_do((9,), x, y, mod.pa_smooth)
    assert y.requires_grad and y.grad_fn.name() == "pa_smooth"
    (y * y).sum().backward()
    tx = torch.tensor(x_np, requires_grad=True)
    left = torch.cat([tx[:1], tx[:-1]])
    right = torch.cat([tx[1:], tx[-1:]])
    ty = left * tx + torch.sin(right)
    (ty * ty).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), tx.grad.numpy(), rtol=1e-12)
    # a broadcast gradient (a sum's) reaches the derived kernel too
    x2 = q.value(x_np, requires_grad=True)
    y2 = q.zeros(9, dtype="float64")
    q.parallel_do((9,), x2, y2, mod.pa_smooth)
    y2.sum().backward()
    tx2 = torch.tensor(x_np, requires_grad=True)
    (torch.cat([tx2[:1], tx2[:-1]]) * tx2 + torch.sin(torch.cat([tx2[1:], tx2[-1:]]))).sum() \
        .backward()
    np.testing.assert_allclose(np.asarray(x2.grad), tx2.grad.numpy(), rtol=1e-12)


# ---- refusals ----

def test_concrete_plugin_code_refuses_backward_by_name(mod):
    x = q.value(np.ones(3), requires_grad=True)
    y = q.pa_concrete(x)
    assert y.requires_grad
    with pytest.raises(RuntimeError, match="pa_concrete .a plugin function without a derived "
                                           "backward"):
        y.sum().backward()
    a, b = q.zeros(3, dtype="float64"), q.zeros(3, dtype="float64")
    q.parallel_do((3,), x, a, b, mod.pa_split)
    with pytest.raises(RuntimeError, match="pa_split .a kernel writing several tensors"):
        a.sum().backward()
    r1, r2 = q.pa_two(x)
    with pytest.raises(RuntimeError, match="pa_two .one of several results"):
        (r1 + r2).sum().backward()


def test_writing_into_a_tensor_that_requires_grad_is_refused_before_the_launch(mod):
    x = q.value(np.ones(4), requires_grad=True)
    y = q.value(np.full(4, 7.0), requires_grad=True)
    with pytest.raises(RuntimeError, match=r"in-place operation \(parallel_do\(pa_smooth\) "
                                           r"writing y\)"):
        q.parallel_do((4,), x, y, mod.pa_smooth)
    np.testing.assert_array_equal(np.asarray(y.detach()), 7.0)
    with q.no_grad():  # as optimizers do
        q.parallel_do((4,), x, y, mod.pa_smooth)
    np.testing.assert_allclose(np.asarray(y.detach()), 1.0 + np.sin(1.0))


def test_an_input_changed_in_place_before_backward_is_an_error(mod):
    x = q.value(np.ones(3), requires_grad=True)
    w = q.value(np.ones(3))
    y = q.pa_softplus(x, w, 1.0)
    w += 1
    with pytest.raises(RuntimeError, match="the input saved by pa_softplus .value 1"):
        y.sum().backward()


def test_the_derived_backward_has_no_derivative(mod):
    x = q.value(np.array([0.5, -0.3]), requires_grad=True)
    y = q.pa_softplus(x, np.ones(2), 1.0)
    (g,) = q.autograd.grad(y.sum(), [x], create_graph=True)
    with pytest.raises(RuntimeError, match="pa_softplus_vjp"):
        g.sum().backward()
