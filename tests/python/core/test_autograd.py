# Autograd from Python: every differentiable row of the op table, reductions, matmul and views
# against torch.autograd on float64 data, grad mode, q.autograd.grad and the errors of bad use.
import gc
import importlib.util
import pathlib
import weakref

import numpy as np
import pytest

import isthmus as q

torch = pytest.importorskip("torch")

ROOT = pathlib.Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("gen_ops", ROOT / "scripts" / "gen_ops.py")
gen_ops = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen_ops)

PYTHON_NAME = {r["name"]: r["python"][0] for r in q._op_table()}
DERIVATIVES = gen_ops.derivatives()
UNARY = [r["name"] for r in DERIVATIVES if r["arity"] == 1 and r["formulas"][0] != "none"]
BINARY = [r["name"] for r in DERIVATIVES if r["arity"] == 2 and r["formulas"][0] != "none"]
NOT_DIFFERENTIABLE = [r["name"] for r in DERIVATIVES if r["formulas"][0] == "none"]

# torch's function for each op (by the table's C++ name) where its name differs.
TORCH_FN = {
    "neg": torch.neg, "cbrt": lambda x: torch.sign(x) * torch.abs(x) ** (1 / 3),
    "asin": torch.asin, "acos": torch.acos, "atan": torch.atan, "asinh": torch.asinh,
    "acosh": torch.acosh, "atanh": torch.atanh, "conj": lambda x: x,
    "reciprocal": torch.reciprocal, "floor_div": lambda a, b: torch.floor(a / b),
    "mod": torch.remainder,
    "atan2": torch.atan2,
}


def torch_fn(name):
    return TORCH_FN.get(name) or getattr(torch, name)


def domain(name):
    if name == "acosh":
        return 1.2, 3.0
    if name in ("asin", "acos", "atanh"):
        return -0.8, 0.8
    if name in ("floor", "ceil", "round"):
        return 0.1, 0.4
    return 0.2, 2.0


def grads_q(f, *arrays, weights):
    xs = [q.value(a, requires_grad=True) for a in arrays]
    y = f(*xs)
    (y * q.value(weights)).sum().backward()
    return [x.grad for x in xs], y


def grads_torch(f, *arrays, weights):
    xs = [torch.tensor(a, requires_grad=True) for a in arrays]
    y = f(*xs)
    (y * torch.tensor(weights)).sum().backward()
    return [x.grad.numpy() for x in xs], y


def check_against_torch(fq, ft, *arrays, rtol=1e-9, atol=1e-11):
    with q.no_grad():
        shape = np.shape(np.asarray(fq(*[q.value(a) for a in arrays])))
    w = np.random.default_rng(1).uniform(0.5, 1.5, shape)
    gq, yq = grads_q(fq, *arrays, weights=w)
    gt, yt = grads_torch(ft, *arrays, weights=w)
    np.testing.assert_allclose(np.asarray(yq), yt.detach().numpy(), rtol=rtol, atol=atol)
    for a, b, x in zip(gq, gt, arrays):
        assert b is not None
        assert a is not None, "no gradient reached the input"
        got = np.asarray(a)
        assert got.shape == np.shape(x) and got.dtype == np.asarray(x).dtype
        np.testing.assert_allclose(got, b, rtol=rtol, atol=atol)


def test_the_table_lists_derivatives_for_the_math_ops():
    assert len(UNARY) >= 30 and len(BINARY) >= 9
    assert {"eq", "logical_and", "isnan", "bit_and"} <= set(NOT_DIFFERENTIABLE)


@pytest.mark.parametrize("name", UNARY)
def test_unary_row_gradient_matches_torch(name):
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    lo, hi = domain(name)
    fq = getattr(q, PYTHON_NAME[name])
    ft = torch_fn(name)
    x = rng.uniform(lo, hi, (3, 4))
    check_against_torch(fq, ft, x)
    check_against_torch(lambda t: fq(t.T), lambda t: ft(t.T), x)  # transposed view
    check_against_torch(fq, ft, np.float64(rng.uniform(lo, hi)))  # 0-d
    check_against_torch(fq, ft, np.zeros((0, 3)))  # empty


@pytest.mark.parametrize("name", BINARY)
def test_binary_row_gradient_matches_torch_with_broadcasting(name):
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    fq = getattr(q, PYTHON_NAME[name])
    ft = torch_fn(name)
    a = rng.uniform(0.5, 2.0, (3, 1))
    b = rng.uniform(2.5, 3.5, (4,))
    check_against_torch(fq, ft, a, b)
    check_against_torch(lambda x, y: fq(x.T, y), lambda x, y: ft(x.T, y),
                        rng.uniform(0.5, 2.0, (4, 3)), rng.uniform(2.5, 3.5, (4,)))
    # a Python number on either side is a constant
    check_against_torch(lambda x: fq(x, 1.5),
                        lambda x: ft(x, torch.tensor(1.5, dtype=torch.float64)), a)


def test_pow_at_zero_and_maximum_ties_follow_torch():
    x = np.array([0.0, 1.0, 2.0])
    check_against_torch(lambda t: t ** 2.0, lambda t: t ** 2.0, x)
    check_against_torch(lambda t, u: q.maximum(t, u), lambda t, u: torch.maximum(t, u),
                        np.array([1.0, 2.0, 3.0]), np.array([1.0, 5.0, 0.0]))


@pytest.mark.parametrize("axis,keepdims", [(None, False), (1, False), (0, True), ((0, 2), False),
                                           (-1, True)])
@pytest.mark.parametrize("op", ["sum", "mean", "prod", "max", "min", "var", "std"])
def test_reduction_gradients_match_torch(op, axis, keepdims):
    rng = np.random.default_rng(3)
    x = rng.uniform(0.5, 2.0, (3, 4, 2))
    dims = axis if axis is None or isinstance(axis, tuple) else (axis,)

    def fq(t):
        return getattr(t, op)(axis=axis, keepdims=keepdims)

    def ft(t):
        d = tuple(range(t.dim())) if dims is None else dims
        if op in ("sum", "mean"):
            return getattr(t, op)(dim=d, keepdim=keepdims)
        if op in ("var", "std"):
            return getattr(t, op)(dim=d, keepdim=keepdims, correction=0)
        if op in ("max", "min"):
            return getattr(torch, "a" + op)(t, dim=d, keepdim=keepdims)
        r = t
        for k in sorted(d, key=lambda v: v % t.dim(), reverse=True):
            r = r.prod(dim=k, keepdim=keepdims)
        return r

    check_against_torch(fq, ft, x)


def test_prod_with_zeros_and_var_ddof_match_torch():
    x = np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 4.0], [1.0, 2.0, 3.0]])
    check_against_torch(lambda t: t.prod(axis=1), lambda t: t.prod(dim=1), x)
    y = np.random.default_rng(0).normal(size=(5, 3))
    check_against_torch(lambda t: t.var(axis=0, ddof=1), lambda t: t.var(dim=0), y)


@pytest.mark.parametrize("sa,sb", [((3, 4), (4, 2)), ((4,), (4, 2)), ((3, 4), (4,)), ((4,), (4,)),
                                   ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (3, 4, 2))])
def test_matmul_gradients_match_torch(sa, sb):
    rng = np.random.default_rng(5)
    check_against_torch(lambda a, b: a @ b, lambda a, b: a @ b, rng.normal(size=sa),
                        rng.normal(size=sb))


def test_views_slicing_and_shape_ops_match_torch():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(3, 4, 5))
    cases = [
        (lambda t: q.exp(t[1:, ::2, -1]), lambda t: torch.exp(t[1:, ::2, -1])),
        (lambda t: q.exp(t.T), lambda t: torch.exp(t.permute(2, 1, 0))),
        (lambda t: t.reshape(12, 5) @ q.value(np.ones((5, 2))),
         lambda t: t.reshape(12, 5) @ torch.ones(5, 2, dtype=torch.float64)),
        (lambda t: q.sin(t.transpose(2, 0, 1)), lambda t: torch.sin(t.permute(2, 0, 1))),
        (lambda t: q.exp(t[None, :, 2]), lambda t: torch.exp(t[None, :, 2])),
        (lambda t: q.concat([t, t * 2], axis=1), lambda t: torch.cat([t, t * 2], dim=1)),
        (lambda t: q.stack([t, q.sin(t)], axis=0), lambda t: torch.stack([t, torch.sin(t)])),
        (lambda t: q.where(t > 0, t, t * t), lambda t: torch.where(t > 0, t, t * t)),
        (lambda t: q.clip(t, -0.5, 0.5), lambda t: torch.clamp(t, -0.5, 0.5)),
        (lambda t: q.flip(t, axis=1), lambda t: torch.flip(t, dims=(1,))),
        (lambda t: t.astype("float32").astype("float64"),
         lambda t: t.to(torch.float32).to(torch.float64)),
    ]
    for fq, ft in cases:
        check_against_torch(fq, ft, x, rtol=1e-6, atol=1e-7)


def test_tile_repeat_and_constant_pad_match_torch():
    # These copy into a fresh tensor; they once returned results that silently did not require
    # grad (See Note [pad's derivative]).
    x = np.random.default_rng(8).normal(size=(2, 3))
    cases = [
        (lambda t: q.sin(q.tile(t, (2, 3))), lambda t: torch.sin(t.tile((2, 3)))),
        (lambda t: q.tile(t, (3, 1, 2)), lambda t: t.tile((3, 1, 2))),
        (lambda t: q.repeat(t, 2, axis=0), lambda t: torch.repeat_interleave(t, 2, dim=0)),
        (lambda t: q.repeat(t, 20, axis=1), lambda t: torch.repeat_interleave(t, 20, dim=1)),
        (lambda t: q.repeat(t, 3), lambda t: torch.repeat_interleave(t.reshape(-1), 3)),
        (lambda t: q.exp(q.pad(t, ((1, 2), (0, 3)), constant_values=0.5)),
         lambda t: torch.exp(torch.nn.functional.pad(t, (0, 3, 1, 2), value=0.5))),
        (lambda t: q.pad(t, 2), lambda t: torch.nn.functional.pad(t, (2, 2, 2, 2))),
    ]
    for fq, ft in cases:
        check_against_torch(fq, ft, x)
    for fq in (lambda t: q.tile(t, (0, 2)), lambda t: q.repeat(t, 0, axis=1)):  # empty results
        a = q.value(x, requires_grad=True)
        y = fq(a)
        assert y.requires_grad and np.asarray(y).size == 0


@pytest.mark.parametrize("mode", ["edge", "reflect", "symmetric", "wrap"])
@pytest.mark.parametrize("widths", [1, ((2, 0), (1, 3)), ((0, 0), (4, 4))])
def test_pad_with_copied_borders_adds_the_borders_gradients_back(mode, widths):
    # See Note [pad's derivative]: each border element's gradient goes back to its source;
    # the reference adds them with NumPy (np.add.at over NumPy's own padding of the positions)
    x = np.random.default_rng(15).normal(size=(3, 4))
    w = np.random.default_rng(16).normal(size=np.pad(x, widths, mode=mode).shape)
    a = q.value(x, requires_grad=True)
    y = q.pad(a, widths, mode=mode)
    np.testing.assert_array_equal(np.asarray(y), np.pad(x, widths, mode=mode))
    (y * q.value(w)).sum().backward()
    want = np.zeros(x.size)
    np.add.at(want, np.pad(np.arange(x.size).reshape(x.shape), widths, mode=mode).ravel(), w.ravel())
    np.testing.assert_allclose(np.asarray(a.grad), want.reshape(x.shape), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode, torch_mode", [("edge", "replicate"), ("reflect", "reflect"),
                                              ("wrap", "circular")])
def test_pad_with_copied_borders_matches_torch(mode, torch_mode):
    x = np.random.default_rng(17).normal(size=(2, 3, 5))
    check_against_torch(
        lambda t: q.pad(t, ((0, 0), (0, 0), (2, 1)), mode=mode),
        lambda t: torch.nn.functional.pad(t, (2, 1), mode=torch_mode), x)


def test_gradients_keep_the_dtype_of_their_input():
    a = q.value(np.ones(3, np.float32), requires_grad=True)
    b = q.value(np.full(3, 2.0), requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.dtype == q.value(np.float32(1)).dtype
    np.testing.assert_array_equal(np.asarray(a.grad), [2, 2, 2])


def test_finite_differences_agree_for_a_composite_expression():
    rng = np.random.default_rng(11)
    x0 = rng.normal(size=(4, 3))

    def f(t):
        return (q.tanh(t @ t.T) * q.exp(-t.sum(axis=1, keepdims=True))).mean()

    x = q.value(x0, requires_grad=True)
    f(x).backward()
    eps = 1e-6
    num = np.zeros_like(x0)
    for i in np.ndindex(x0.shape):
        p, m = x0.copy(), x0.copy()
        p[i] += eps
        m[i] -= eps
        num[i] = (float(f(q.value(p))) - float(f(q.value(m)))) / (2 * eps)
    np.testing.assert_allclose(np.asarray(x.grad), num, rtol=1e-5, atol=1e-8)


# ---- the Python API ----


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


@pytest.mark.parametrize("shape, axis, descending", [
    ((9,), -1, False), ((9,), 0, True), ((4, 6), 0, False), ((4, 6), 1, True),
    ((3, 4, 5), 1, False), ((3, 4, 5), -1, True), ((2, 0, 3), 1, False), ((5, 1), 0, True)])
def test_sort_gradient_matches_torch(shape, axis, descending):
    # See Note [sort's derivative]: the gradient goes back through the sort's permutation
    x = np.random.default_rng(len(shape) + axis).normal(size=shape)
    check_against_torch(lambda t: q.sort(t, axis=axis, descending=descending),
                        lambda t: torch.sort(t, dim=axis, descending=descending, stable=True).values,
                        x)


def test_sort_gradient_on_transposed_input_ties_and_0d():
    rng = np.random.default_rng(7)
    base = rng.normal(size=(5, 4))
    # a transposed (non-contiguous) input
    check_against_torch(lambda t: q.sort(t.T, axis=1), lambda t: torch.sort(t.T, dim=1, stable=True).values,
                        base)
    # ties: each equal value gets the gradient of the place the stable sort put it in
    ties = np.array([[2.0, 1.0, 2.0, 1.0, 3.0], [0.0, 0.0, 0.0, -1.0, 0.0]])
    check_against_torch(lambda t: q.sort(t, axis=1), lambda t: torch.sort(t, dim=1, stable=True).values,
                        ties)
    x = q.value(np.float64(2.5), requires_grad=True)
    q.sort(x).backward()
    assert float(x.grad) == 1.0


@pytest.mark.parametrize("index", ["steps", "negative steps", "select", "select then slice"])
def test_second_and_third_derivatives_through_slicing_match_torch(index):
    # See Note [the backward of slice and select]
    x0 = np.random.default_rng(11).normal(size=(5, 6))
    views_q = {"steps": lambda t: t[1:5:2, 1::2], "negative steps": lambda t: t[::-2, 4:0:-3],
               "select": lambda t: t[2], "select then slice": lambda t: t[:, 3][1:4]}
    views_t = {"steps": lambda t: t[1:5:2, 1::2],
               "negative steps": lambda t: t.flip(0)[::2].flip(1)[:, 1:5:3],
               "select": lambda t: t[2], "select then slice": lambda t: t[:, 3][1:4]}
    x, xt = q.value(x0, requires_grad=True), torch.tensor(x0, requires_grad=True)
    with q.no_grad():
        np.testing.assert_array_equal(np.asarray(views_q[index](x)), views_t[index](xt).detach())
    (g,) = q.autograd.grad((views_q[index](x) ** 4).sum(), x, create_graph=True)
    (gt,) = torch.autograd.grad((views_t[index](xt) ** 4).sum(), xt, create_graph=True)
    (g2,) = q.autograd.grad((g ** 2).sum(), x, create_graph=True)
    (g2t,) = torch.autograd.grad((gt ** 2).sum(), xt, create_graph=True)
    (g3,) = q.autograd.grad(g2[1:].sum(), x)
    (g3t,) = torch.autograd.grad(g2t[1:].sum(), xt)
    for got, want in ((g, gt), (g2, g2t), (g3, g3t)):
        np.testing.assert_allclose(np.asarray(got), want.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_second_derivative_through_sort_matches_torch():
    x0 = np.random.default_rng(12).normal(size=(3, 5))
    x, xt = q.value(x0, requires_grad=True), torch.tensor(x0, requires_grad=True)
    (g,) = q.autograd.grad((q.sort(x, axis=1) ** 3).sum(), x, create_graph=True)
    (gt,) = torch.autograd.grad((torch.sort(xt, dim=1).values ** 3).sum(), xt, create_graph=True)
    (g2,) = q.autograd.grad((g * q.value(x0)).sum(), x)
    (g2t,) = torch.autograd.grad((gt * torch.tensor(x0)).sum(), xt)
    np.testing.assert_allclose(np.asarray(g), gt.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(g2), g2t.numpy(), rtol=1e-12)


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


def test_cumsum_matches_torch():
    x = np.random.default_rng(8).normal(size=(3, 4))
    check_against_torch(lambda t: t.cumsum(axis=1), lambda t: t.cumsum(dim=1), x)
    check_against_torch(lambda t: q.cumsum(t), lambda t: t.reshape(-1).cumsum(dim=0), x)


INDEX = np.array([3, 0, 3, 1, 3, -1])  # repeats (their gradients add up) and a negative index


@pytest.mark.parametrize("case", ["rows", "rows and a slice", "two arrays", "broadcast arrays",
                                  "mask", "mask of rows", "take", "take_along_axis", "repeat",
                                  "transposed input", "empty"])
def test_array_indexing_gradient_matches_torch(case):
    # See Note [array indexing's derivative]: a gather's gradient is a scatter-add
    x = np.random.default_rng(13).normal(size=(4, 5))
    mask = x > 0.2
    i2 = np.array([[0], [3]])
    fq, ft = {
        "rows": (lambda t: t[q.value(INDEX)], lambda t: t[torch.tensor(INDEX)]),
        "rows and a slice": (lambda t: t[q.value(INDEX), 1:4], lambda t: t[torch.tensor(INDEX), 1:4]),
        "two arrays": (lambda t: t[q.value([1, 3, 1]), q.value([0, 4, 0])],
                       lambda t: t[torch.tensor([1, 3, 1]), torch.tensor([0, 4, 0])]),
        "broadcast arrays": (lambda t: t[q.value(i2), q.value([1, 1, 2])],
                             lambda t: t[torch.tensor(i2), torch.tensor([1, 1, 2])]),
        "mask": (lambda t: t[q.value(mask)], lambda t: t[torch.tensor(mask)]),
        "mask of rows": (lambda t: t[q.value([True, False, True, True])],
                         lambda t: t[torch.tensor([True, False, True, True])]),
        "take": (lambda t: q.take(t, q.value([7, 7, 0, 19])),
                 lambda t: torch.take(t, torch.tensor([7, 7, 0, 19]))),
        "take_along_axis": (lambda t: q.take_along_axis(t, q.value(np.tile([[4, 4, 0]], (4, 1))), 1),
                            lambda t: torch.take_along_dim(t, torch.tensor(np.tile([[4, 4, 0]], (4, 1))), 1)),
        "repeat": (lambda t: q.repeat(t, q.value([1, 0, 2, 3]), axis=0),
                   lambda t: torch.repeat_interleave(t, torch.tensor([1, 0, 2, 3]), dim=0)),
        "transposed input": (lambda t: t.T[q.value([4, 4, 1])], lambda t: t.T[torch.tensor([4, 4, 1])]),
        "empty": (lambda t: t[q.value(np.zeros(0, dtype=np.int64))],
                  lambda t: t[torch.tensor(np.zeros(0, dtype=np.int64))]),
    }[case]
    check_against_torch(fq, ft, x)


def test_bad_indices_on_a_tensor_that_requires_grad_raise_and_record_nothing():
    x = q.value([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(IndexError):
        x[q.value([0, 3])]
    with pytest.raises(IndexError):
        q.take_along_axis(x, q.value([-4]), 0)
    with pytest.raises(IndexError):
        x[q.value([True, False])]  # a mask of the wrong length
    (x * 2).sum().backward()  # the tensor is untouched and still differentiable
    np.testing.assert_array_equal(np.asarray(x.grad), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(np.asarray(x.detach()), [1.0, 2.0, 3.0])


def test_array_indexing_second_derivative_and_float32_match_torch():
    x0 = np.random.default_rng(14).normal(size=(4, 3))
    x, xt = q.value(x0, requires_grad=True), torch.tensor(x0, requires_grad=True)
    (g,) = q.autograd.grad((x[q.value(INDEX)] ** 3).sum(), x, create_graph=True)
    (gt,) = torch.autograd.grad((xt[torch.tensor(INDEX)] ** 3).sum(), xt, create_graph=True)
    (g2,) = q.autograd.grad((g ** 2).sum(), x)
    (g2t,) = torch.autograd.grad((gt ** 2).sum(), xt)
    np.testing.assert_allclose(np.asarray(g), gt.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(g2), g2t.numpy(), rtol=1e-12)
    # float32 and float16 gradients keep the input's dtype (half sums in float)
    for dt in ("float32", "float16"):
        v = q.value(x0.astype(dt), requires_grad=True)
        v[q.value(INDEX)].sum().backward()
        assert np.asarray(v.grad).dtype == np.dtype(dt)
        np.testing.assert_array_equal(np.asarray(v.grad)[:, 0], [1, 1, 0, 4])


CUMPROD_ZEROS = np.array([[2.0, 0.0, 3.0, 0.0, 5.0], [0.0, 1.5, 2.0, 3.0, 4.0],
                          [1.0, 2.0, 3.0, 4.0, 0.0], [0.0, 0.0, 1.0, 2.0, 3.0],
                          [0.5, -1.5, 2.0, 0.7, 1.1]])


@pytest.mark.parametrize("axis", [0, 1, -1, None])
@pytest.mark.parametrize("data", ["random", "zeros", "transposed", "empty"])
def test_cumprod_gradient_matches_torch(axis, data):
    # See Note [cumprod's derivative]: zeros (none, one, several, first or last in a slice)
    x = {"random": np.random.default_rng(9).uniform(-1.5, 1.5, (4, 5)),
         "zeros": CUMPROD_ZEROS, "transposed": CUMPROD_ZEROS.T, "empty": np.ones((0, 3))}[data]
    if axis is None:
        check_against_torch(lambda t: q.cumprod(t), lambda t: t.reshape(-1).cumprod(dim=0), x)
    else:
        check_against_torch(lambda t: q.cumprod(t, axis=axis), lambda t: t.cumprod(dim=axis), x)


def test_cumprod_second_derivative_matches_torch():
    x0 = np.random.default_rng(10).uniform(0.5, 1.5, (3, 4))
    x = q.value(x0, requires_grad=True)
    (g,) = q.autograd.grad((q.cumprod(x, axis=1) ** 2).sum(), x, create_graph=True)
    (g2,) = q.autograd.grad((g * g).sum(), x)
    xt = torch.tensor(x0, requires_grad=True)
    (gt,) = torch.autograd.grad((xt.cumprod(dim=1) ** 2).sum(), xt, create_graph=True)
    (g2t,) = torch.autograd.grad((gt * gt).sum(), xt)
    np.testing.assert_allclose(np.asarray(g), gt.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(g2), g2t.numpy(), rtol=1e-9)
