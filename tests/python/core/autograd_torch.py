"""What the autograd suites compare with torch: the gradients of a weighted sum of a function's
result, from isthmus and from torch.autograd, on the same float64 data."""
import numpy as np
import torch

import isthmus as q


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
