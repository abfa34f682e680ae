"""torch tensors as kernel launch arguments: read through torch's borrowed DLPack descriptor
(Note [borrowed dlpack tensors]), with the same values, checks and lifetimes as NumPy arrays."""
import sys

import numpy as np
import pytest

import isthmus as q

from conftest import BUILD_DIR

torch = pytest.importorskip("torch")

GOOD = str(BUILD_DIR / "tests" / "plugins" / "good_plugin.so")


@pytest.fixture(scope="module")
def good():
    return q.import_native(GOOD)


def axpb_ref(x, a, b):
    return a * x.double().numpy() + b


@pytest.mark.parametrize("shape", [(3, 4), (301, 257), (0, 5), (5, 0), (1, 1)])
def test_a_launch_on_torch_tensors_matches_numpy(good, shape):
    gen = torch.Generator().manual_seed(sum(shape))
    x = torch.randn(shape, dtype=torch.float64, generator=gen)
    y = torch.zeros(shape, dtype=torch.float64)
    q.parallel_do(shape, x, y, 2.0, -0.5, good.axpb)
    np.testing.assert_array_equal(y.numpy(), axpb_ref(x, 2.0, -0.5))


def test_non_contiguous_and_broadcast_torch_tensors(good):
    gen = torch.Generator().manual_seed(7)
    base = torch.randn(40, 30, dtype=torch.float64, generator=gen)
    out = torch.zeros(30, 80, dtype=torch.float64)
    cases = [
        (base.T, out[:, ::2]),                                    # transposed in, strided out
        (base[::3, 1::2], torch.zeros(14, 15, dtype=torch.float64)),  # stepped slices
        (torch.randn(1, 6, dtype=torch.float64, generator=gen).expand(4, 6),  # stride 0
         torch.zeros(4, 6, dtype=torch.float64)),
    ]
    for x, y in cases:
        before = out.clone()
        q.parallel_do(tuple(x.shape), x, y, 3.0, 1.0, good.axpb)
        np.testing.assert_array_equal(y.numpy(), axpb_ref(x, 3.0, 1.0))
        if y.data_ptr() == out.data_ptr():  # the writes land in place, the gaps untouched
            np.testing.assert_array_equal(out[:, 1::2].numpy(), before[:, 1::2].numpy())


def test_launches_keep_no_reference_to_torch_tensors(good):
    x = torch.ones(2, 3, dtype=torch.float64)
    y = torch.zeros(2, 3, dtype=torch.float64)
    rx, ry = sys.getrefcount(x), sys.getrefcount(y)
    for _ in range(500):
        q.parallel_do((2, 3), x, y, 1.0, 1.0, good.axpb)
    with pytest.raises(TypeError, match=r"argument 2 \(y\)"):  # a refused launch too
        q.parallel_do((2, 3), x, torch.zeros(2, 3), 1.0, 1.0, good.axpb)
    with pytest.raises(IndexError):
        q.parallel_do(7, torch.ones(6, dtype=torch.float64), torch.zeros(7, dtype=torch.float64),
                      0, good.shift_checked)
    assert (sys.getrefcount(x), sys.getrefcount(y)) == (rx, ry)
    assert (y == 2.0).all()


def test_a_negative_view_is_read_resolved_and_refused_as_output(good):
    z = torch.randn(6, dtype=torch.complex128, generator=torch.Generator().manual_seed(3))
    neg = z.conj().imag  # torch marks it negative: its memory holds z.imag
    assert neg.is_neg()
    y = torch.zeros(6, dtype=torch.float64)
    q.parallel_do(6, neg, y, 0, good.shift_clamped)
    np.testing.assert_array_equal(y.numpy(), -z.imag.numpy())
    before = z.clone()
    with pytest.raises(ValueError, match="negative bit"):
        q.parallel_do(6, y, neg, 0, good.shift_clamped)
    assert torch.equal(z, before)


def test_a_tensor_that_requires_grad_is_refused_unless_grad_mode_is_off(good):
    x = torch.ones(6, dtype=torch.float64, requires_grad=True)
    y = torch.zeros(6, dtype=torch.float64)
    with pytest.raises(BufferError, match="requires grad"):
        q.parallel_do(6, x, y, 0, good.shift_clamped)
    assert (y == 0).all()
    with torch.no_grad():
        q.parallel_do(6, x, y, 0, good.shift_clamped)
    assert (y == 1).all()


def test_a_torch_subclass_is_read_as_its_tensor(good):
    class Tagged(torch.Tensor):
        pass

    x = torch.arange(6, dtype=torch.float64).as_subclass(Tagged)
    y = torch.zeros(6, dtype=torch.float64).as_subclass(Tagged)
    q.parallel_do(6, x, y, 1, good.shift_circular)
    np.testing.assert_array_equal(y.numpy(), np.roll(np.arange(6.0), -1))


def test_torch_and_numpy_arguments_mix(good):
    x = np.arange(12.0).reshape(3, 4)
    y = torch.zeros(3, 4, dtype=torch.float64)
    q.parallel_do((3, 4), x, y, 2.0, 0.0, good.axpb)
    np.testing.assert_array_equal(y.numpy(), 2.0 * x)
    y2 = np.zeros((3, 4))
    q.parallel_do((3, 4), y, y2, 0.5, 0.0, good.axpb)
    np.testing.assert_array_equal(y2, x)
