# Autograd of gathers, against torch.autograd (and NumPy's np.add.at): sort, integer and boolean
# array indexing, pad's copied borders, cumsum and cumprod, and the higher derivatives through
# slicing, sort and indexing (Note [array indexing's derivative]).

import numpy as np
import pytest

import isthmus as q

torch = pytest.importorskip("torch")

from autograd_torch import check_against_torch


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
