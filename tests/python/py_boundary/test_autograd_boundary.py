# Autograd at the value boundary: pickling and copies keep the flag (not the graph); assignments refuse values that require grad.
import copy
import pickle

import numpy as np
import pytest

import isthmus as q


@pytest.fixture(autouse=True, scope="module")
def runtime():
    if not q.is_initialized():
        q.init("cpu")
    yield


@pytest.mark.parametrize("protocol", [2, 4, 5])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_a_leaf_that_requires_grad_pickles_as_a_leaf_that_requires_grad(protocol, dtype):
    rng = np.random.default_rng(7)
    a = q.value(rng.standard_normal((3, 4)).astype("float64")).astype(dtype).requires_grad_()
    b = pickle.loads(pickle.dumps(a, protocol=protocol))
    assert b.requires_grad and b.is_leaf and b.grad_fn is None and b.grad is None
    assert b.dtype == a.dtype and tuple(b.shape) == (3, 4)
    np.testing.assert_array_equal(np.asarray(b.detach().astype("float64")),
                                  np.asarray(a.detach().astype("float64")))
    # the rebuilt leaf takes part in autograd on its own
    (b * b).sum().backward()
    np.testing.assert_allclose(np.asarray(b.grad.astype("float64")),
                               2 * np.asarray(b.detach().astype("float64")), rtol=1e-2)
    assert a.grad is None  # the original is untouched


def test_a_non_leaf_pickles_its_values_and_flag_without_its_graph():
    x = q.value(np.linspace(-1.0, 1.0, 6).reshape(2, 3), requires_grad=True)
    y = (x * 3.0).T  # non-contiguous, made by recorded ops
    z = pickle.loads(pickle.dumps(y, protocol=5))
    assert z.requires_grad and z.is_leaf and z.grad_fn is None
    np.testing.assert_array_equal(np.asarray(z.detach()), np.asarray(y.detach()))
    z.sum().backward()
    assert x.grad is None  # nothing flows back to the pickled graph's leaves
    np.testing.assert_array_equal(np.asarray(z.grad), np.ones((3, 2)))


def test_tensors_without_grad_keep_the_eight_item_payload():
    from isthmus import pickling
    a = q.value(np.arange(6.0))
    assert len(pickling.payload(a)) == 8
    assert len(pickling.payload(a.requires_grad_())) == 9
    assert not pickle.loads(pickle.dumps(q.value(np.arange(3)))).requires_grad


@pytest.mark.parametrize("how", [copy.copy, copy.deepcopy])
def test_copies_of_tensors_that_require_grad_are_new_leaves(how):
    x = q.value(np.array([1.0, -2.0, 0.5]), requires_grad=True)
    for src in (x, x * 2.0):
        c = how(src)
        assert c.requires_grad and c.is_leaf and c.grad_fn is None
        np.testing.assert_array_equal(np.asarray(c.detach()), np.asarray(src.detach()))
    plain = how(q.value(np.array([1.0, 2.0])))
    assert not plain.requires_grad


def test_empty_and_0d_tensors_that_require_grad_pickle():
    for a in (q.value(np.zeros((0, 3)), requires_grad=True), q.value(np.float64(2.5), requires_grad=True)):
        b = pickle.loads(pickle.dumps(a))
        assert b.requires_grad and tuple(b.shape) == tuple(a.shape)


def test_assigning_a_value_that_requires_grad_into_a_plain_tensor_is_refused_while_recording():
    x = q.value(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    p = q.zeros(3, dtype="float64")
    for assign in (lambda: p.__setitem__(Ellipsis, x * 2.0), lambda: p.__setitem__(slice(0, 2), x[:2]),
                   lambda: p.__setitem__(q.value(np.array([0, 2])), x[1:])):
        with pytest.raises(RuntimeError, match="subscript assignment"):
            assign()
        np.testing.assert_array_equal(np.asarray(p), np.zeros(3))  # unchanged
    with q.no_grad():  # the documented way: no graph is wanted
        p[...] = x * 2.0
    np.testing.assert_array_equal(np.asarray(p), [2.0, 4.0, 6.0])
    p[...] = (x * 3.0).detach()
    np.testing.assert_array_equal(np.asarray(p), [3.0, 6.0, 9.0])
    assert not p.requires_grad
