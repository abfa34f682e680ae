# qvalue methods in NumPy's and torch's spelling: reshape, view, transpose/T, squeeze, fill, ...
import numpy as np
import pytest

import isthmus as q


def test_reshape_view_and_shape_methods():
    x = np.arange(24.0).reshape(2, 3, 4)
    X = q.value(x)
    np.testing.assert_array_equal(X.reshape(4, 6).to_py(), x.reshape(4, 6))
    np.testing.assert_array_equal(X.reshape((3, -1)).to_py(), x.reshape(3, -1))
    np.testing.assert_array_equal(X.view(6, 4).to_py(), x.reshape(6, 4))
    with pytest.raises(ValueError):
        X.T.view(24)  # a transposed tensor cannot be viewed flat
    np.testing.assert_array_equal(X.T.to_py(), x.T)
    np.testing.assert_array_equal(X.transpose().to_py(), x.transpose())
    np.testing.assert_array_equal(X.transpose(1, 0, 2).to_py(), x.transpose(1, 0, 2))
    np.testing.assert_array_equal(X.transpose((2, 0, 1)).to_py(), x.transpose(2, 0, 1))
    np.testing.assert_array_equal(X.permute(2, 1, 0).to_py(), x.transpose(2, 1, 0))
    np.testing.assert_array_equal(X.ravel().to_py(), x.ravel())
    np.testing.assert_array_equal(X.T.flatten().to_py(), x.T.flatten())
    np.testing.assert_array_equal(X.flip(1).to_py(), np.flip(x, 1))
    np.testing.assert_array_equal(X.flip().to_py(), np.flip(x))
    y = np.zeros((1, 3, 1))
    Y = q.value(y)
    assert Y.squeeze().shape == (3,)
    assert Y.squeeze(0).shape == (3, 1)
    assert Y.squeeze((0, 2)).shape == (3,)
    assert Y.unsqueeze(0).shape == (1, 1, 3, 1)
    assert q.value([1, 2, 3]).expand(2, 3).shape == (2, 3)
    with pytest.raises(ValueError):
        Y.squeeze(1)  # size 3


def test_views_share_memory():
    X = q.zeros(3, 4)
    X.T[0].fill(5)  # column 0 through a transposed view
    np.testing.assert_array_equal(X.to_py()[:, 0], [5, 5, 5])
    X.reshape(12)[11:].fill(9)
    assert X.to_py()[2, 3] == 9
    flat = X.flatten()  # a copy
    flat.fill(0)
    assert X.to_py()[2, 3] == 9


def test_method_forms_of_ops():
    r = np.random.default_rng(3)
    x = r.normal(size=(3, 4))
    X = q.value(x)
    np.testing.assert_array_equal(X.round().to_py(), np.round(x))
    np.testing.assert_array_equal(X.clip(-0.5, 0.5).to_py(), x.clip(-0.5, 0.5))
    np.testing.assert_array_equal(X.clip(min=0).to_py(), x.clip(min=0))
    idx = [2, 0]
    np.testing.assert_array_equal(X.take(idx, axis=1).to_py(), x.take(idx, axis=1))
    np.testing.assert_array_equal(X.repeat(2, axis=1).to_py(), x.repeat(2, axis=1))
    for got, want in zip((X > 0).nonzero(), (x > 0).nonzero()):
        np.testing.assert_array_equal(got.to_py(), want)
    z = x + 1j * x[::-1]
    np.testing.assert_array_equal(q.value(z).conj().to_py(), z.conj())
    assert X.tolist() == x.tolist()
    assert q.value(2.5).tolist() == pytest.approx(2.5)


def test_method_bad_input():
    X = q.value([1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="reshape: expected ints"):
        X.reshape("a")
    with pytest.raises(ValueError):
        X.reshape(2, 2)
    with pytest.raises(TypeError, match="fill: expected a number"):
        X.fill("x")
    with pytest.raises(TypeError, match="reshape needs a tensor value"):
        q.value("text").reshape(1)
    np.testing.assert_array_equal(X.to_py(), [1.0, 2.0, 3.0])
