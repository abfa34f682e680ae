# Several results and several gradients (Note [tuple results in the ABI] in plugin_abi.h): plugin
# functions returning std::tuple / std::pair reach Python as tuples, custom ops and
# q.autograd.function take a backward that returns one gradient per differentiable input (the
# example of docs/torch.md, run exactly as written), and the Quadrants autograd pattern: a
# kernel called on the tensors a torch.autograd.Function receives (Note [requires grad at the
# boundary] in py_boundary/src/dlpack_import.cpp).
import pathlib
import re

import numpy as np
import pytest

import isthmus as q

torch = pytest.importorskip("torch")

DOCS = pathlib.Path(__file__).resolve().parents[3] / "docs" / "torch.md"

SRC = r"""
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
namespace ip = isthmus::plugin;

// two results: a + b and a - b
template <typename T>
static std::pair<ip::tensor<T, 1>, ip::tensor<T, 1>> sum_diff(ip::view<const T, 1> a,
                                                               ip::view<const T, 1> b) {
    ip::tensor<T, 1> s({a.size(0)}), d({a.size(0)});
    for (int64_t i = 0; i < a.size(0); ++i) {
        s(i) = a(i) + b(i);
        d(i) = a(i) - b(i);
    }
    return {s, d};
}

// its backward: one gradient output per result, one gradient per input
template <typename T>
static std::tuple<ip::tensor<T, 1>, ip::tensor<T, 1>> sum_diff_backward(
    ip::view<const T, 1> a, ip::view<const T, 1> b, ip::view<const T, 1> gs,
    ip::view<const T, 1> gd) {
    ip::tensor<T, 1> da({a.size(0)}), db({a.size(0)});
    for (int64_t i = 0; i < a.size(0); ++i) {
        da(i) = gs(i) + gd(i);
        db(i) = gs(i) - gd(i);
    }
    return {da, db};
}

// y = x * s; its backward returns two gradients where one input is differentiable
static ip::tensor<double, 1> scale(ip::view<const double, 1> x, double s) {
    ip::tensor<double, 1> y({x.size(0)});
    for (int64_t i = 0; i < x.size(0); ++i) y(i) = x(i) * s;
    return y;
}
static std::tuple<ip::tensor<double, 1>, double> scale_backward_two(
    ip::view<const double, 1> x, double s, ip::view<const double, 1> g) {
    ip::tensor<double, 1> dx({x.size(0)});
    double ds = 0;
    for (int64_t i = 0; i < x.size(0); ++i) {
        dx(i) = g(i) * s;
        ds += g(i) * x(i);
    }
    return {dx, ds};
}

// Quadrants' Sqr, as kernels writing their outputs
template <typename T>
static void sqr_forward(ip::view<const T, 1> t, ip::view<T, 1> o, int64_t i) {
    o(i) = t(i) * t(i);
}
template <typename T>
static void sqr_backward(ip::view<T, 1> t_grad, ip::view<const T, 1> t,
                         ip::view<const T, 1> o_grad, int64_t i) {
    t_grad(i) = 2 * t(i) * o_grad(i);
}

// a method returning two values, an event firing a pair
struct ticker {
    ip::event<std::pair<double, std::string>> ontick;
    std::pair<double, int64_t> tick(double x) {
        ontick.fire(std::make_pair(x, std::string("tick")));
        return {2 * x, int64_t{1}};
    }
};

ISTHMUS_PLUGIN(tmulti, m) {
    m.type<ticker>("tm_ticker").ctor().method("tick", &ticker::tick, {"x"})
        .event("ontick", &ticker::ontick);
    m.def("tm_sum_diff", &sum_diff<float>, {"a", "b"});
    m.def("tm_sum_diff", &sum_diff<double>, {"a", "b"});
    m.def("tm_sum_diff_backward", &sum_diff_backward<float>, {"a", "b", "gs", "gd"});
    m.def("tm_sum_diff_backward", &sum_diff_backward<double>, {"a", "b", "gs", "gd"});
    m.def("tm_scale", &scale, {"x", "s"});
    m.def("tm_scale_backward_two", &scale_backward_two, {"x", "s", "g"});
    // a tensor, a number, and a tuple in the tuple
    m.def("tm_mixed", [](ip::view<const float, 1> x) {
        ip::tensor<float, 1> y({x.size(0)});
        for (int64_t i = 0; i < x.size(0); ++i) y(i) = 2 * x(i);
        return std::make_tuple(y, 1.5, std::make_tuple(std::string("label"), int64_t{7}));
    }, {"x"});
    // views of the arguments: each copied (Note [view results])
    m.def("tm_swap", [](ip::view<const double, 1> a, ip::view<const double, 1> b) {
        return std::make_tuple(b, a);
    }, {"a", "b"});
    // one tensor twice
    m.def("tm_twice", [](ip::view<const double, 1> x) {
        ip::tensor<double, 1> t({x.size(0)});
        for (int64_t i = 0; i < x.size(0); ++i) t(i) = x(i) + 1;
        return std::make_pair(t, t);
    }, {"x"});
    m.def("tm_empty", []() { return std::tuple<>(); });
    m.kernel("tm_sqr_forward", &sqr_forward<float>, {"t", "o"});
    m.kernel("tm_sqr_forward64", &sqr_forward<double>, {"t", "o"});
    m.kernel("tm_sqr_backward", &sqr_backward<float>, {"t_grad", "t", "o_grad"});
    m.kernel("tm_sqr_backward64", &sqr_backward<double>, {"t_grad", "t", "o_grad"});
}
"""


@pytest.fixture(scope="module")
def plugin():
    q.init("cpu")
    return q.compile_string("tmulti", SRC)


@pytest.fixture(scope="module")
def docs_example():
    """The docs' example with two differentiable inputs, exactly as written, run once."""
    text = DOCS.read_text()
    section = text[text.index("## Several results, several gradients"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    namespace = {"__name__": "docs_example"}
    exec(compile(code, f"{DOCS}:several-gradients", "exec"), namespace)  # noqa: S102
    return namespace


# ---- A: the docs' example ----

def test_the_docs_example_runs_as_written(docs_example):
    times = docs_example["times"]
    w = torch.randn(7, dtype=torch.float64, requires_grad=True)
    x = torch.randn(7, dtype=torch.float64, requires_grad=True)
    y = times(w, x)
    torch.testing.assert_close(y, w * x, rtol=0, atol=0)
    g = torch.randn(7, dtype=torch.float64)
    dw, dx = torch.autograd.grad(y, (w, x), g)
    rw, rx = torch.autograd.grad(w * x, (w, x), g)  # torch's own gradients
    torch.testing.assert_close((dw, dx), (rw, rx), rtol=0, atol=0)
    torch.library.opcheck(times, (w, x))


def test_the_docs_example_under_compile(docs_example):
    times = docs_example["times"]
    torch._dynamo.reset()
    w = torch.randn(6, dtype=torch.float64, requires_grad=True)
    x = torch.randn(6, dtype=torch.float64, requires_grad=True)
    f = torch.compile(lambda w, x: times(w, x).pow(2).sum(), backend="aot_eager",
                      fullgraph=True)
    f(w, x).backward()
    torch.testing.assert_close(w.grad, 2 * w.detach() * x.detach() ** 2)
    torch.testing.assert_close(x.grad, 2 * x.detach() * w.detach() ** 2)


# ---- tuples from plugins ----

def test_tuple_results_reach_python_as_tuples(plugin):
    x = np.arange(4, dtype=np.float32)
    y, number, (label, count) = q.tm_mixed(x)
    assert isinstance(y, q.qvalue)
    np.testing.assert_array_equal(y.to_py(), 2 * x)
    assert (number, label, count) == (1.5, "label", 7)
    assert isinstance(count, int) and isinstance(number, float)
    s, d = q.tm_sum_diff(np.array([1.0, 2.0]), np.array([0.5, 4.0]))
    np.testing.assert_array_equal(s.to_py(), [1.5, 6.0])
    np.testing.assert_array_equal(d.to_py(), [0.5, -2.0])
    assert q.tm_empty() == ()
    assert [o["result"] for o in q.tm_sum_diff.overloads] == ["(tensor, tensor)"] * 2
    assert q.tm_mixed.overloads[0]["result"] == "(tensor, scalar, (string, scalar))"
    assert q.tm_mixed.signature.endswith("-> (tensor, scalar, (string, scalar))")


def test_methods_and_events_carry_tuples_too(plugin):
    t = q.tm_ticker()
    got = []
    t.ontick.add(got.append)
    assert t.tick(1.5) == (3.0, 1)
    assert got == [(1.5, "tick")]


def test_views_in_a_tuple_are_copied(plugin):
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0])
    first, second = q.tm_swap(a, b)
    np.testing.assert_array_equal(first.to_py(), b)
    np.testing.assert_array_equal(second.to_py(), a)
    a[:] = -1  # the results are the host's copies, not views of the arguments
    b[:] = -1
    np.testing.assert_array_equal(first.to_py(), [3.0, 4.0, 5.0])
    np.testing.assert_array_equal(second.to_py(), [1.0, 2.0])


def test_one_tensor_returned_twice(plugin):
    t1, t2 = q.tm_twice(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(t1.to_py(), [2.0, 3.0])
    np.testing.assert_array_equal(t2.to_py(), [2.0, 3.0])
    twice = q.torch.custom_op(q.tm_twice, fake=("x", "x"))
    x = torch.tensor([1.0, 2.0], dtype=torch.float64)
    o1, o2 = twice(x)
    assert o1.data_ptr() != o2.data_ptr()  # a custom op's outputs may not alias
    torch.testing.assert_close((o1, o2), (x + 1, x + 1))
    torch.library.opcheck(twice, (x,))


# ---- custom ops ----

@pytest.fixture(scope="module")
def sum_diff(plugin):
    return q.torch.custom_op(q.tm_sum_diff, fake=("a", "a"), backward=q.tm_sum_diff_backward,
                             differentiable=("a", "b"))


def test_two_results_and_two_gradients(sum_diff):
    assert str(torch.ops.tmulti.tm_sum_diff.default._schema) == \
        "tmulti::tm_sum_diff(Tensor a, Tensor b) -> (Tensor, Tensor)"
    assert str(torch.ops.tmulti.tm_sum_diff_backward.default._schema) == (
        "tmulti::tm_sum_diff_backward(Tensor a, Tensor b, Tensor grad_output0, "
        "Tensor grad_output1) -> (Tensor, Tensor)")
    a = torch.randn(9, dtype=torch.float64, requires_grad=True)
    b = torch.randn(9, dtype=torch.float64, requires_grad=True)
    s, d = sum_diff(a, b)
    torch.testing.assert_close((s, d), (a + b, a - b), rtol=0, atol=0)
    assert torch.autograd.gradcheck(sum_diff, (a, b))
    torch.library.opcheck(sum_diff, (a, b))
    # float32 through the float overloads; only one result used
    a32 = torch.randn(5, requires_grad=True)
    sum_diff(a32, torch.ones(5))[1].sum().backward()
    torch.testing.assert_close(a32.grad, torch.ones(5))


def test_two_gradients_under_compile(sum_diff):
    torch._dynamo.reset()

    def loss(a, b):
        s, d = sum_diff(a, b)
        return (s * d).sum()  # a**2 - b**2

    a = torch.randn(8, dtype=torch.float64, requires_grad=True)
    b = torch.randn(8, dtype=torch.float64, requires_grad=True)
    torch.compile(loss, backend="aot_eager", fullgraph=True)(a, b).backward()
    torch.testing.assert_close(a.grad, 2 * a.detach())
    torch.testing.assert_close(b.grad, -2 * b.detach())


def test_a_python_backward_with_two_gradients(plugin):
    def backward(a, b, gs, gd):
        return gs + gd, gs - gd

    op = q.torch.custom_op(q.tm_sum_diff, name="tm_sum_diff_py", fake=("a", "b"),
                           backward=backward, differentiable=(0, 1))
    a = torch.randn(4, dtype=torch.float64, requires_grad=True)
    b = torch.randn(4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(op, (a, b))


def test_a_number_gradient_for_a_non_tensor_is_refused(plugin):
    with pytest.raises(ValueError, match="only Tensor parameters have gradients"):
        q.torch.custom_op(q.tm_scale, fake="x", backward=q.tm_scale_backward_two,
                          differentiable=("x", "s"))
    assert not hasattr(torch.ops.tmulti, "tm_scale")


def test_a_backward_returning_another_number_of_gradients(plugin):
    op = q.torch.custom_op(q.tm_scale, fake="x", backward=q.tm_scale_backward_two,
                           differentiable=("x",))
    x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    y = op(x, 2.0)
    with pytest.raises(TypeError, match="returned 2 value.*1 tensor.*one gradient per"):
        y.sum().backward()
    Scale = q.autograd.function(q.tm_scale, q.tm_scale_backward_two, differentiable=("x",))
    with pytest.raises(TypeError, match=r"returned 2 gradient\(s\) for the 1 differentiable"):
        Scale.apply(x, 2.0).sum().backward()


# ---- q.autograd.function ----

def test_autograd_function_with_several_results_and_gradients(plugin):
    SumDiff = q.autograd.function(q.tm_sum_diff, q.tm_sum_diff_backward,
                                  differentiable=("a", "b"))
    a = torch.randn(6, dtype=torch.float64, requires_grad=True)
    b = torch.randn(6, dtype=torch.float64, requires_grad=True)
    s, d = SumDiff.apply(a, b)
    torch.testing.assert_close((s, d), (a + b, a - b))
    assert torch.autograd.gradcheck(SumDiff.apply, (a, b))


def test_autograd_function_with_a_python_backward(plugin):
    Scale = q.autograd.function(q.tm_scale, lambda x, s, g: g * s, differentiable=(0,))
    x = torch.randn(5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: Scale.apply(x, 3.0), (x,))


# ---- E: the Quadrants pattern, tensors passed straight into kernels ----

def sqr_function(plugin):
    kernels = {torch.float32: (q.tm_sqr_forward, q.tm_sqr_backward),
               torch.float64: (q.tm_sqr_forward64, q.tm_sqr_backward64)}

    class Sqr(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            outp = torch.zeros_like(inp)
            ctx.save_for_backward(inp)
            q.parallel_do(inp.shape, inp, outp, kernels[inp.dtype][0])  # inp requires grad
            return outp

        @staticmethod
        def backward(ctx, outp_grad):
            outp_grad = outp_grad.contiguous()
            inp_grad = torch.zeros_like(outp_grad)
            (inp,) = ctx.saved_tensors
            q.parallel_do(inp.shape, inp_grad, inp, outp_grad, kernels[inp.dtype][1])
            return inp_grad

    return Sqr


def test_quadrants_sqr_example(plugin):
    Sqr = sqr_function(plugin)
    x = torch.tensor([2.0] * 32, requires_grad=True)
    loss = Sqr.apply(x).sum()
    loss.backward()
    assert x.grad[0].item() == 4.0
    assert loss.item() == 128.0


def test_quadrants_sqr_matches_torch(plugin):
    Sqr = sqr_function(plugin)
    x = torch.randn(40, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(Sqr.apply, (x,))
    g = torch.randn(40, dtype=torch.float64)
    (mine,) = torch.autograd.grad(Sqr.apply(x), (x,), g)
    (theirs,) = torch.autograd.grad(x * x, (x,), g)
    torch.testing.assert_close(mine, theirs, rtol=0, atol=0)


def test_the_refusal_stays_where_autograd_would_miss_the_access(plugin):
    Sqr = sqr_function(plugin)
    x = torch.randn(8, dtype=torch.float64, requires_grad=True)
    y = torch.zeros(8, dtype=torch.float64)
    message = r"^cannot share a tensor that requires grad: autograd would not see isthmus's reads"
    with pytest.raises(BufferError, match=message):  # grad mode on: refused as before
        q.parallel_do([8], x, y, q.tm_sqr_forward64)
    with pytest.raises(BufferError, match=message):
        q.asvalue(x)
    assert (y == 0).all()
    # create_graph=True runs backward with grad mode on: the kernel's reads would be missed
    with pytest.raises(BufferError, match=message):
        torch.autograd.grad(Sqr.apply(x).sum(), (x,), create_graph=True)


def test_tensors_that_require_grad_are_shared_without_grad_mode(plugin):
    x = torch.randn(8, dtype=torch.float64, requires_grad=True)
    for mode in (torch.no_grad, torch.inference_mode, lambda: torch.set_grad_enabled(False)):
        with mode():
            v = q.asvalue(x)  # the same memory: a write shows in x
            v[0] = 42.0
        assert x[0].item() == 42.0
        x.detach()[0] = 0.0
    with torch.no_grad():
        y = torch.zeros(8, dtype=torch.float64, requires_grad=True)
        q.parallel_do([8], x, y, q.tm_sqr_forward64)
    torch.testing.assert_close(y.detach(), (x * x).detach(), rtol=0, atol=0)
    assert y.requires_grad
