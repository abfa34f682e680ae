# Autograd from Python, the derivatives of the op table: every differentiable row, reductions,
# matmul, views, tile/repeat/constant pad and dtypes against torch.autograd on float64 data.
# The Python API is test_autograd_api.py; gathers (sort, indexing, copied borders, cumulative
# ops) test_autograd_gathers.py.
import importlib.util
import pathlib

import numpy as np
import pytest

import isthmus as q

torch = pytest.importorskip("torch")

from autograd_torch import check_against_torch

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
