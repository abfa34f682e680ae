# Autograd's Python API: leaves, grad and grad_fn, backward's rules, grad mode, detach,
# q.autograd.grad and double backward against torch, the errors of bad use, and freeing by
# reference counting.
import gc
import re
import weakref

import numpy as np
import pytest

import isthmus as q

torch = pytest.importorskip("torch")


def test_leaves_grad_and_grad_fn():
    x = q.value([1.0, 2.0], requires_grad=True)
    assert x.requires_grad and x.is_leaf and x.grad is None and x.grad_fn is None
    y = x * 3
    assert y.requires_grad and not y.is_leaf
    assert y.grad_fn.name() == "mul"
    assert y.grad_fn.next_functions[0][0].name() == "AccumulateGrad"
    s = y.sum()
    assert isinstance(s, q.qvalue) and s.ndim == 0  # a 0-d tensor, not a scalar
    s.backward()
    np.testing.assert_array_equal(np.asarray(x.grad), [3, 3])
    x.grad = None
    assert x.grad is None
    z = q.value(2.5, requires_grad=True)
    assert z.ndim == 0 and z.requires_grad
    w = q.value([1.0, 2.0])
    assert w.requires_grad_() is w and w.requires_grad
    w.requires_grad = False
    assert not w.requires_grad


def test_grad_setter_checks_shape_and_dtype():
    x = q.value([1.0, 2.0], requires_grad=True)
    with pytest.raises(ValueError, match="shape"):
        x.grad = q.value([1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="dtype"):
        x.grad = q.value([1, 2])
    assert x.grad is None
    x.grad = q.value([5.0, 6.0], dtype=x.dtype)
    np.testing.assert_array_equal(np.asarray(x.grad), [5, 6])


def test_integer_and_bool_tensors_cannot_require_grad():
    with pytest.raises(RuntimeError, match="floating point"):
        q.value([1, 2, 3], requires_grad=True)
    i = q.value([1, 2, 3])
    with pytest.raises(RuntimeError, match="floating point"):
        i.requires_grad_()
    assert not i.requires_grad
    with pytest.raises(RuntimeError):
        q.value([True, False]).requires_grad = True


def test_backward_of_a_non_scalar_needs_a_gradient():
    x = q.value([1.0, 2.0], requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        y.backward()
    assert x.grad is None
    with pytest.raises(ValueError, match="shape"):
        y.backward(q.value([1.0, 1.0, 1.0]))
    y.backward(q.value([1.0, -1.0]))
    np.testing.assert_array_equal(np.asarray(x.grad), [2, -2])


def test_backward_twice_needs_retain_graph():
    x = q.value([0.5, 1.5], requires_grad=True)
    y = q.exp(x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(np.asarray(x.grad), 2 * np.exp([0.5, 1.5]))
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()
    np.testing.assert_allclose(np.asarray(x.grad), 2 * np.exp([0.5, 1.5]))  # unchanged


def test_in_place_change_of_a_saved_tensor_is_an_error():
    x = q.value([0.5, 1.5], requires_grad=True)
    e = q.exp(x)
    loss = e.sum()
    with q.no_grad():
        e += 1
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        loss.backward()
    assert x.grad is None


@pytest.mark.parametrize("needs", ["a", "b", "ab"])
@pytest.mark.parametrize("op", ["multiply", "divide", "pow", "maximum", "arctan2"])
def test_a_row_saves_only_what_the_needed_gradients_read(op, needs):
    # See Note [recording cost]: y = a * b with only a requiring grad keeps b alone, so a later
    # in-place change of a does not spoil backward, and one of b does; torch decides the same way.
    rng = np.random.default_rng(len(op) + len(needs))
    a_np, b_np = rng.uniform(0.5, 2.0, 4), rng.uniform(0.5, 2.0, 4)

    def run(lib, value, change):
        a, b = value(a_np), value(b_np)
        leaves = [t.requires_grad_() for t, n in ((a, "a"), (b, "b")) if n in needs]
        y = getattr(lib, op)(a, b).sum()
        d = (a if change == "a" else b).detach()  # the same memory, outside the graph
        d *= 1.5
        try:
            y.backward()
        except RuntimeError as e:
            assert re.search("modified by an in-?place operation", str(e)), e
            return None
        return [np.asarray(t.grad) for t in leaves]

    for change in ("a", "b"):
        got = run(q, q.value, change)
        want = run(torch, lambda v: torch.tensor(v), change)
        assert (got is None) == (want is None), (op, needs, change, got, want)
        if want is not None:
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=1e-12)


def test_in_place_ops_on_tensors_that_require_grad_are_refused():
    x = q.value([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        x += 1
    np.testing.assert_array_equal(np.asarray(x.detach()), [1, 2])
    with q.no_grad():
        x -= 0.5
    np.testing.assert_array_equal(np.asarray(x.detach()), [0.5, 1.5])
    assert x.requires_grad and x.is_leaf


def test_grad_of_a_non_leaf_warns_and_is_none_unless_retained():
    x = q.value([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = x * 3
    z.retain_grad()
    (y.sum() + (z * z).sum()).backward()
    with pytest.warns(UserWarning, match="not a leaf"):
        assert y.grad is None
    np.testing.assert_array_equal(np.asarray(z.grad), [6, 12])


def test_no_grad_enable_grad_and_the_decorator():
    x = q.value([1.0], requires_grad=True)
    with q.no_grad():
        assert not q.is_grad_enabled()
        assert not (x * 2).requires_grad
        with q.enable_grad():
            assert (x * 2).requires_grad
        assert not q.is_grad_enabled()
    assert q.is_grad_enabled()

    @q.no_grad()
    def f(t):
        return t * 2

    @q.no_grad
    def g(t):
        return t * 2

    assert not f(x).requires_grad and not g(x).requires_grad
    assert q.is_grad_enabled()
    with q.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert q.is_grad_enabled()
    with pytest.raises(ZeroDivisionError):  # the mode comes back after an exception
        with q.no_grad():
            1 / 0
    assert q.is_grad_enabled()


def test_detach_shares_memory_without_the_graph():
    x = q.value([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None
    d[0] = 10.0
    np.testing.assert_array_equal(np.asarray(y.detach()), [10, 4])


def test_autograd_grad_and_double_backward_match_torch():
    x0 = np.array([0.3, -0.7, 1.1])
    x = q.value(x0, requires_grad=True)
    y = (q.sin(x) * x * x).sum()
    (g,) = q.autograd.grad(y, x, create_graph=True)
    assert x.grad is None
    (h,) = q.autograd.grad(g.sum(), [x])
    xt = torch.tensor(x0, requires_grad=True)
    yt = (torch.sin(xt) * xt * xt).sum()
    (gt,) = torch.autograd.grad(yt, xt, create_graph=True)
    (ht,) = torch.autograd.grad(gt.sum(), xt)
    np.testing.assert_allclose(np.asarray(g.detach()), gt.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(h), ht.numpy(), rtol=1e-12)
    # unused inputs
    u = q.value([1.0], requires_grad=True)
    z = (x * 2).sum()
    with pytest.raises(RuntimeError, match="allow_unused"):
        q.autograd.grad(z, [x, u], retain_graph=True)
    gx, gu = q.autograd.grad(z, [x, u], allow_unused=True)
    assert gu is None
    np.testing.assert_array_equal(np.asarray(gx), [2, 2, 2])


def test_double_backward_through_matmul_and_reductions_matches_torch():
    rng = np.random.default_rng(2)
    a0, b0 = rng.normal(size=(3, 4)), rng.normal(size=(4, 2))
    a, b = q.value(a0, requires_grad=True), q.value(b0, requires_grad=True)
    (ga,) = q.autograd.grad(q.tanh(a @ b).mean(), a, create_graph=True)
    (gb2,) = q.autograd.grad((ga * ga).sum(), b)
    at, bt = torch.tensor(a0, requires_grad=True), torch.tensor(b0, requires_grad=True)
    (gat,) = torch.autograd.grad(torch.tanh(at @ bt).mean(), at, create_graph=True)
    (gbt,) = torch.autograd.grad((gat * gat).sum(), bt)
    np.testing.assert_allclose(np.asarray(gb2), gbt.numpy(), rtol=1e-10, atol=1e-12)


def test_no_reference_cycles_between_tensors_and_nodes():
    x = q.value(np.ones((4, 4)), requires_grad=True)
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        before = len(gc.get_objects())
        for _ in range(200):
            loss = (q.tanh(x @ x) * 2).mean()
            fn = loss.grad_fn
            ref = weakref.ref(loss)
            loss.backward()
            del loss, fn
            assert ref() is None  # freed by reference counting alone: no cycle
        after = len(gc.get_objects())
    finally:
        if was_enabled:
            gc.enable()
    assert after - before < 50
