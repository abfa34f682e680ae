"""Backward passes derived from generic plugin functions (Note [derived backward]): `<name>_vjp`
equals torch's autograd of the same math in float64, on every math function of the active type,
strided, broadcast, empty and 0-d inputs, tuple results, loops with data-dependent branches and
NaN; q.autograd.function and q.torch.custom_op use it when no backward is given; the hand-written
backward of the PyQuasar manual's mapping layer gives the same gradients; bad input is a typed
error before anything runs."""
import numpy as np
import pytest

import isthmus as q

torch = pytest.importorskip("torch")

SRC = r"""
#include <cmath>
#include <tuple>
namespace ip = isthmus::plugin;

template <typename T>
using table = ip::view<const T, 1, ip::access::clamped>;

// The PyQuasar manual's mapping layer: written once, backward derived.
template <typename T>
static ip::tensor<T, 2> lookup(table<T> a, ip::view<const T, 2> x) {
    ip::tensor<T, 2> y({x.size(0), x.size(1)});
    for (int64_t m = 0; m < x.size(0); ++m)
        for (int64_t n = 0; n < x.size(1); ++n)
            y(m, n) = a(static_cast<int64_t>(std::floor(ip::value_of(x(m, n)))));
    return y;
}

// Its hand-written backward, for comparison.
template <typename T>
static ip::tensor<T, 1> lookup_by_hand(table<T> a, ip::view<const T, 2> x,
                                       ip::view<const T, 2> dy) {
    const int64_t k = a.size(0);
    ip::tensor<T, 1> da({k});
    for (int64_t i = 0; i < k; ++i) da(i) = 0;
    for (int64_t m = 0; m < x.size(0); ++m)
        for (int64_t n = 0; n < x.size(1); ++n) {
            int64_t i = static_cast<int64_t>(std::floor(x(m, n)));
            i = i < 0 ? 0 : (i >= k ? k - 1 : i);
            da(i) += dy(m, n);
        }
    return da;
}

// Every math function of the active type, elementwise on x in (-0.9, 0.9), y anywhere.
template <typename T>
static ip::tensor<T, 1> math(ip::view<const T, 1> x, ip::view<const T, 1> y, T s) {
    ip::tensor<T, 1> r({x.size(0)});
    for (int64_t i = 0; i < x.size(0); ++i) {
        const T a = x(i), b = y(i), b2 = b * b + 1;
        T v = sin(a) * cos(b) + tan(0.5 * a) + exp(0.5 * a) / b2 + log(b2) + sqrt(b2);
        v += tanh(a) + ip::pow(b2, s) + ip::pow(b2, 0.5) + ip::pow(2.0, a) + atan2(a, b2);
        v += ip::hypot(a, b) + 2 * ip::fmin(a, b) - ip::fmax(a, b) + fabs(a - b) + ip::abs(b);
        v += cbrt(b2) + erf(a) + log1p(b * b) + expm1(0.1 * a) + sinh(0.3 * a) + cosh(0.2 * b);
        v += asin(0.9 * a) + acos(0.8 * a) + atan(b) + exp2(a) + log2(b2) + log10(b2);
        v += floor(b) + ceil(a) + round(b) + trunc(a) - (-a) + (+b);
        v /= s;
        v -= a / b2;
        v *= 1.5;
        r(i) = v;
    }
    return r;
}

// A loop with a data-dependent branch and a data-dependent trip count.
template <typename T>
static T branchy(ip::view<const T, 1> x, T t) {
    T acc = 0;
    for (int64_t i = 0; i < x.size(0); ++i) {
        if (x(i) > t)
            acc += x(i) * x(i);
        else
            acc -= t * x(i);
        T v = x(i);
        for (int k = 0; k < 40 && fabs(v) > 0.1; ++k) v = v * 0.5 + t * 0.01;
        acc += v;
    }
    return acc;
}

// Two differentiable tensors, a tuple result, an integer and a string parameter.
template <typename T>
static std::tuple<ip::tensor<T, 1>, T> affine(ip::view<const T, 1> w, ip::view<const T, 2> x,
                                               int64_t power, std::string tag) {
    ip::tensor<T, 1> y({x.size(0)});
    T reg = 0;
    for (int64_t j = 0; j < w.size(0); ++j) reg += ip::pow(w(j), T(power));
    for (int64_t i = 0; i < x.size(0); ++i) {
        T s = tag == "negated" ? T(-1) : T(0);
        for (int64_t j = 0; j < x.size(1); ++j) s += x(i, j) * w(j);
        y(i) = s;
    }
    return {y, reg};
}

// A 0-d view and a number.
template <typename T>
static T scalar_fn(ip::view<const T, 0> x, T b) {
    return x() * x() * b + sin(b);
}

// A result too large for memory: 2^62 elements for an x of 1, 2^66 (past int64) for 4.
template <typename T>
static ip::tensor<T, 2> huge(ip::view<const T, 1> x) {
    ip::tensor<T, 2> y({x.size(0) << 31, x.size(0) << 31});
    return y;
}

// Does not compile with active numbers (std::floor of a T): overloads only.
template <typename T>
static T floor_sum(ip::view<const T, 1> x) {
    T s = 0;
    for (int64_t i = 0; i < x.size(0); ++i) s += std::floor(x(i));
    return s;
}

ISTHMUS_PLUGIN(derived_tests, m) {
    m.def("dv_floor_sum", ip::overloads<float, double>(ISTHMUS_GENERIC(floor_sum)), {"x"});
    // with_jvp: also the forward mode, tested in test_derived_forward.py
    m.def("dv_lookup", ip::generic<float, double>(ISTHMUS_GENERIC(lookup), ip::with_jvp),
          {"a", "x"});
    m.def("dv_lookup_by_hand", &lookup_by_hand<double>, {"a", "x", "dy"});
    m.def("dv_math", ip::generic<double>(ISTHMUS_GENERIC(math), ip::with_jvp), {"x", "y", "s"});
    m.def("dv_branchy", ip::generic<float, double>(ISTHMUS_GENERIC(branchy), ip::with_jvp),
          {"x", "t"});
    m.def("dv_branchy_reverse_only", ip::generic<double>(ISTHMUS_GENERIC(branchy)), {"x", "t"});
    m.def("dv_affine", ip::generic<double>(ISTHMUS_GENERIC(affine), ip::with_jvp),
          {"w", "x", "power", "tag"});
    m.def("dv_scalar", ip::generic<double>(ISTHMUS_GENERIC(scalar_fn), ip::with_jvp),
          {"x", "b"});
    m.def("dv_concrete", &lookup<double>, {"a", "x"});
    m.def("dv_huge", ip::generic<double>(ISTHMUS_GENERIC(huge)), {"x"});
}
"""


@pytest.fixture(scope="module")
def mod(worker_cache):
    with worker_cache("derived_backward"):
        yield q.compile_string("derived_tests", SRC)


def arr(v):
    return np.asarray(v)


def torch_math(x, y, s):
    """dv_math in torch (float64)."""
    a, b = x, y
    b2 = b * b + 1
    v = (torch.sin(a) * torch.cos(b) + torch.tan(0.5 * a) + torch.exp(0.5 * a) / b2
         + torch.log(b2) + torch.sqrt(b2))
    v = v + torch.tanh(a) + b2 ** s + b2 ** 0.5 + 2.0 ** a + torch.atan2(a, b2)
    v = v + torch.hypot(a, b) + 2 * torch.fmin(a, b) - torch.fmax(a, b) + torch.abs(a - b)
    v = v + torch.abs(b)
    v = v + b2 ** (1 / 3) + torch.erf(a) + torch.log1p(b * b) + torch.expm1(0.1 * a)
    v = v + torch.sinh(0.3 * a) + torch.cosh(0.2 * b)
    v = v + torch.asin(0.9 * a) + torch.acos(0.8 * a) + torch.atan(b) + torch.exp2(a)
    v = v + torch.log2(b2) + torch.log10(b2)
    v = v + torch.floor(b) + torch.ceil(a) + torch.round(b) + torch.trunc(a) + a + b
    v = v / s
    v = v - a / b2
    return v * 1.5


def test_the_math_functions_match_torch_autograd(mod):
    rng = np.random.default_rng(1)
    for n in (1, 7, 64):
        x = rng.uniform(-0.9, 0.9, n)
        y = rng.uniform(-3, 3, n)
        s = 1.3
        dy = rng.standard_normal(n)
        gx, gy, gs = q.dv_math_vjp(x, y, s, dy)
        tx, ty = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
        ts = torch.tensor(s, dtype=torch.float64, requires_grad=True)
        out = torch_math(tx, ty, ts)
        np.testing.assert_allclose(arr(q.dv_math(x, y, s)), out.detach().numpy(), rtol=1e-12)
        out.backward(torch.tensor(dy))
        np.testing.assert_allclose(arr(gx), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(arr(gy), ty.grad.numpy(), rtol=1e-10, atol=1e-12)
        assert gs == pytest.approx(ts.grad.item(), rel=1e-10)


def test_the_mapping_layer_matches_its_hand_written_backward(mod):
    rng = np.random.default_rng(2)
    a = rng.standard_normal(256)
    x = np.floor(rng.uniform(-20, 300, (3, 40)))  # some indices clamped onto the ends
    dy = rng.standard_normal((3, 40))
    ga, gx = q.dv_lookup_vjp(a, x, dy)
    np.testing.assert_allclose(arr(ga), arr(q.dv_lookup_by_hand(a, x, dy)), rtol=1e-14)
    # the index comes from value_of: x gets a zero gradient, not a missing one
    assert arr(gx).shape == x.shape and not arr(gx).any()
    # float32: the other overload
    ga32, _ = q.dv_lookup_vjp(a.astype(np.float32), x.astype(np.float32),
                              dy.astype(np.float32))
    assert arr(ga32).dtype == np.float32
    np.testing.assert_allclose(arr(ga32), arr(ga), rtol=1e-5, atol=1e-5)


def test_strided_broadcast_and_empty_inputs(mod):
    rng = np.random.default_rng(3)
    a = rng.standard_normal(256)
    x = np.floor(rng.uniform(0, 256, (40, 3)))
    dy = rng.standard_normal((3, 40))
    xt = x.T  # transposed: no unit stride
    ga, gx = q.dv_lookup_vjp(a[::-1], xt, dy[:, :])
    np.testing.assert_allclose(arr(ga), arr(q.dv_lookup_by_hand(a[::-1].copy(), xt.copy(), dy)))
    # a grad_output that is not C-contiguous: every element read through its strides
    dyt = np.ascontiguousarray(dy.T).T
    ga_t, _ = q.dv_lookup_vjp(a[::-1], xt, dyt)
    np.testing.assert_array_equal(arr(ga_t), arr(ga))
    ga_s, _ = q.dv_lookup_vjp(a[::-1], xt, np.repeat(dy, 2, axis=1)[:, ::2])
    np.testing.assert_array_equal(arr(ga_s), arr(ga))
    # a broadcast table: every read lands in the one stored element's gradient, per position
    ab = np.broadcast_to(np.float64(2.0), (256,))
    ga, _ = q.dv_lookup_vjp(ab, xt, dy)
    assert arr(ga).shape == (256,)
    np.testing.assert_allclose(arr(ga).sum(), dy.sum())
    # empty dimensions
    ga, gx = q.dv_lookup_vjp(a, np.zeros((0, 5)), np.zeros((0, 5)))
    assert not arr(ga).any() and arr(gx).shape == (0, 5)
    gx, gt = q.dv_branchy_vjp(np.zeros(0), 0.5, 1.0)
    assert arr(gx).shape == (0,) and gt == 0.0


def test_a_0d_view_and_a_number(mod):
    gx, gb = q.dv_scalar_vjp(np.array(3.0), 0.5, 2.0)
    assert arr(gx).shape == ()
    assert float(arr(gx)) == pytest.approx(2 * (2 * 3.0 * 0.5))
    assert gb == pytest.approx(2 * (9.0 + np.cos(0.5)))


def branchy_reference(x, t):
    acc = torch.zeros((), dtype=torch.float64)
    for i in range(x.shape[0]):
        acc = acc + (x[i] * x[i] if x[i] > t else -t * x[i])
        v = x[i]
        k = 0
        while k < 40 and abs(v.item()) > 0.1:
            v = v * 0.5 + t * 0.01
            k += 1
        acc = acc + v
    return acc


def test_a_loop_with_data_dependent_branches_matches_torch(mod):
    rng = np.random.default_rng(4)
    x = rng.uniform(-3, 3, 25)
    t = 0.25
    gx, gt = q.dv_branchy_vjp(x, t, 1.0)
    tx = torch.tensor(x, requires_grad=True)
    tt = torch.tensor(t, dtype=torch.float64, requires_grad=True)
    out = branchy_reference(tx, tt)
    assert q.dv_branchy(x, t) == pytest.approx(out.item(), rel=1e-12)
    out.backward()
    np.testing.assert_allclose(arr(gx), tx.grad.numpy(), rtol=1e-12, atol=1e-14)
    assert gt == pytest.approx(tt.grad.item(), rel=1e-12)


def test_tuple_results_and_parameters_without_gradients(mod):
    rng = np.random.default_rng(5)
    w, x = rng.standard_normal(4), rng.standard_normal((6, 4))
    dy, dreg = rng.standard_normal(6), 0.7
    gw, gx, gp, gtag = q.dv_affine_vjp(w, x, 3, "plain", dy, dreg)
    assert gp is None and gtag is None
    np.testing.assert_allclose(arr(gw), x.T @ dy + dreg * 3 * w ** 2, rtol=1e-12)
    np.testing.assert_allclose(arr(gx), np.outer(dy, w), rtol=1e-12)


def test_nan_propagates_as_in_torch(mod):
    x = np.array([0.1, np.nan, 0.3])
    y = np.array([1.0, 2.0, np.nan])
    gx, gy, _ = q.dv_math_vjp(x, y, 1.0, np.ones(3))
    tx, ty = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    torch_math(tx, ty, torch.tensor(1.0, dtype=torch.float64)).backward(torch.ones(3))
    np.testing.assert_array_equal(np.isnan(arr(gx)), np.isnan(tx.grad.numpy()))
    np.testing.assert_array_equal(np.isnan(arr(gy)), np.isnan(ty.grad.numpy()))
    assert np.isfinite(arr(gx)[0])


def test_autograd_function_without_backward_passes_gradcheck(mod):
    Lookup = q.autograd.function(q.dv_lookup, differentiable=("a",))
    a = torch.randn(256, dtype=torch.float64, requires_grad=True)
    x = torch.floor(torch.rand(3, 40, dtype=torch.float64) * 300) - 20
    assert torch.autograd.gradcheck(Lookup.apply, (a, x), eps=1e-6, atol=1e-6)
    Affine = q.autograd.function(lambda w, x: q.dv_affine(w, x, 2, "plain")[0],
                                 backward=lambda w, x, g: q.dv_affine_vjp(w, x, 2, "plain", g,
                                                                         0.0)[:2],
                                 differentiable=(0, 1))
    w = torch.randn(4, dtype=torch.float64, requires_grad=True)
    xx = torch.randn(5, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(Affine.apply, (w, xx))
    Two = q.autograd.function(q.dv_math, differentiable=("x", "y"))
    xs = (torch.rand(6, dtype=torch.float64) * 1.6 - 0.8).requires_grad_()
    ys = (torch.rand(6, dtype=torch.float64) * 0.3 + 0.1).requires_grad_()  # away from the steps
    assert torch.autograd.gradcheck(Two.apply, (xs, ys, 1.2), eps=1e-7, atol=1e-5)


def test_custom_op_with_a_derived_backward(mod):
    op = q.torch.custom_op(q.dv_lookup, fake="x", differentiable=("a",), name="dv_lookup_op")
    a = torch.randn(256, dtype=torch.float64, requires_grad=True)
    x = torch.floor(torch.rand(2, 9, dtype=torch.float64) * 255)
    torch.library.opcheck(op, (a.detach(), x))
    op(a, x).sum().backward()
    ref = q.dv_lookup_by_hand(a.detach().numpy(), x.numpy(), np.ones((2, 9)))
    np.testing.assert_allclose(a.grad.numpy(), arr(ref))


# ---- refusals: typed errors before anything runs ----

def test_functions_without_a_derived_backward_are_refused_by_name(mod):
    assert q.dv_concrete.vjp is None and q.dv_lookup.vjp is not None
    with pytest.raises(TypeError, match=r"dv_concrete has no derived backward \(a plugin "
                                        r"function registered with concrete types, or"):
        q.autograd.function(q.dv_concrete)
    with pytest.raises(TypeError, match="has no derived backward .not a plugin function"):
        q.autograd.function(lambda a: a)
    with pytest.raises(TypeError, match="has no derived backward"):
        q.torch.custom_op(q.dv_concrete, fake="x", differentiable=("a",), name="dv_refused")
    assert not hasattr(torch.ops.derived_tests, "dv_refused")


def test_overloads_register_every_element_type_without_a_derived_backward(mod):
    assert q.dv_floor_sum(np.array([1.5, 2.5, -0.5])) == 2.0
    assert q.dv_floor_sum(np.array([1.5, 2.5], np.float32)) == 3.0
    assert len(q.dv_floor_sum.overloads) == 2
    assert q.dv_floor_sum.vjp is None and not hasattr(q, "dv_floor_sum_vjp")


def test_a_parameter_that_is_not_differentiable_is_refused(mod):
    with pytest.raises(TypeError, match=r"parameter 2 \(power: int, int64\) of dv_affine is not "
                                        r"differentiable"):
        q.autograd.function(q.dv_affine, differentiable=("power",))


def test_bad_gradients_are_typed_errors_and_change_nothing(mod):
    a = np.arange(8.0)
    x = np.zeros((2, 3))
    with pytest.raises(ValueError, match="grad_output has size 4 along dimension 1 where the "
                                         "result has 3"):
        q.dv_lookup_vjp(a, x, np.ones((2, 4)))
    with pytest.raises(TypeError):
        q.dv_lookup_vjp(a, x)  # no grad_output
    np.testing.assert_array_equal(a, np.arange(8.0))
    ga, _ = q.dv_lookup_vjp(a, x, np.ones((2, 3)))  # the plugin still works
    assert arr(ga)[0] == 6.0


def test_a_result_too_large_for_memory_is_a_value_error(mod):
    for n in (1, 4):  # the function fails before grad_output's shape is compared
        with pytest.raises(ValueError, match="the shape's size overflows memory"):
            q.dv_huge_vjp(np.ones(n), np.ones((1, 1)))
    ga, _ = q.dv_lookup_vjp(np.arange(8.0), np.zeros((2, 3)), np.ones((2, 3)))
    assert arr(ga)[0] == 6.0


def test_writing_into_a_view_of_the_element_type_is_a_compile_error(worker_dir, monkeypatch):
    monkeypatch.setenv("ISTHMUS_CACHE_DIR", str(worker_dir("derived_refusals") / "cache"))
    src = r"""
namespace ip = isthmus::plugin;
template <typename T>
static T fill(ip::view<T, 1> y, T v) {
    for (int64_t i = 0; i < y.size(0); ++i) y(i) = v;
    return v;
}
template <typename T>
static void nothing(ip::view<const T, 1>) {}
ISTHMUS_PLUGIN(NAME, m) { m.def("dv_fill", ip::generic<double>(ISTHMUS_GENERIC(FN))); }
"""
    with pytest.raises(q.CompileError, match="may not write into a view of its element type"):
        q.compile_string("derived_bad", src.replace("NAME", "derived_bad").replace("FN", "fill"))
    # nothing to differentiate (no result): the overloads, no derived backward
    m = q.compile_string("derived_void", src.replace("NAME", "derived_void")
                         .replace("FN", "nothing"))
    assert m.dv_fill.vjp is None and not hasattr(m, "dv_fill_vjp")
    with pytest.raises(TypeError, match="dv_fill has no derived backward"):
        q.autograd.function(m.dv_fill)
