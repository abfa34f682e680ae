# Where work runs, from Python: q.placement, q.device scopes, q.to / qvalue.to, the threshold.
import threading

import numpy as np
import pytest

import isthmus as q
from cuda_helpers import HAVE_CUDA, NO_CUDA_REASON

rng = np.random.default_rng(11)


def test_placement_on_the_cpu():
    a = q.value(rng.standard_normal((4, 5)).astype(np.float32))
    assert q.placement(a) == "cpu"
    assert q.placement(a, a + 1, np.ones(3), 2.0) == "cpu"
    assert q.placement() == "cpu"
    assert a.device == "cpu"


def test_device_scope_cpu_creates_and_computes_on_the_cpu():
    x = rng.standard_normal(300)
    with q.device("CPU") as s:
        assert s.device == "cpu"
        assert repr(s) == "<isthmus.device_scope cpu>"
        z = q.zeros(7)
        assert z.device == "cpu"
        r = q.value(x) * 2 + 1
        np.testing.assert_allclose(np.asarray(r), x * 2 + 1)
        with q.device("cpu"):  # nested scopes
            assert q.ones(2).device == "cpu"
    assert q.placement(r) == "cpu"


def test_device_scope_is_left_when_the_block_raises():
    s = q.device("cpu")
    with pytest.raises(ZeroDivisionError):
        with s:
            1 / 0
    # left: entering it again works
    with s:
        pass


def test_device_scope_misuse_raises():
    s = q.device("cpu")
    s.__enter__()
    with pytest.raises(RuntimeError, match="already entered"):
        s.__enter__()
    s.__exit__(None, None, None)
    with pytest.raises(RuntimeError, match="was not entered"):
        s.__exit__(None, None, None)


def test_device_scope_must_be_left_on_its_thread():
    s = q.device("cpu")
    s.__enter__()
    errors = []

    def leave():
        try:
            s.__exit__(None, None, None)
        except RuntimeError as e:
            errors.append(str(e))

    t = threading.Thread(target=leave)
    t.start()
    t.join()
    assert errors and "thread that entered it" in errors[0]
    s.__exit__(None, None, None)  # the owner leaves it fine


@pytest.mark.parametrize("name", ["gpu", "cuda:x", "cuda:", "", "cpu0"])
def test_bad_device_names(name):
    with pytest.raises(ValueError, match="unknown device"):
        q.device(name)
    a = q.value([1.0, 2.0])
    with pytest.raises(ValueError, match="unknown device"):
        a.to(name)
    np.testing.assert_array_equal(np.asarray(a), [1.0, 2.0])


@pytest.mark.skipif(HAVE_CUDA, reason="this machine has a GPU")
@pytest.mark.parametrize("name", ["cuda", "cuda:0"])
def test_cuda_devices_without_gpu_raise(name):
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        q.device(name)
    a = q.value([1.0, 2.0])
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        a.to(name)
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        q.to(a, name, copy=True)
    assert a.device == "cpu"
    np.testing.assert_array_equal(np.asarray(a), [1.0, 2.0])


def test_to_cpu_returns_the_value_or_a_copy():
    x = rng.standard_normal((3, 4))
    a = q.value(x)
    assert a.to("cpu") is a
    assert q.to(a, "cpu") is a
    b = a.to("cpu", copy=True)
    assert b is not a
    np.testing.assert_array_equal(np.asarray(b), x)
    b += 1  # an independent copy
    np.testing.assert_array_equal(np.asarray(a), x)
    # any array-like, incl. non-contiguous views and 0-d
    t = q.to(x.T, "cpu", copy=True)
    np.testing.assert_array_equal(np.asarray(t), x.T)
    assert q.to(np.float64(2.5), "cpu", copy=True).shape == ()
    e = q.to(np.zeros((0, 3)), "cpu", copy=True)
    assert e.shape == (0, 3)


def test_transfer_threshold():
    saved = q.transfer_threshold()
    try:
        q.set_transfer_threshold(10)
        assert q.transfer_threshold() == 10
        with pytest.raises(ValueError, match=">= 0"):
            q.set_transfer_threshold(-5)
        assert q.transfer_threshold() == 10
    finally:
        q.set_transfer_threshold(saved)


def test_placement_requires_init(run_python):
    out = run_python(
        """
        import isthmus as q
        for f in (lambda: q.placement(), lambda: q.device("cpu"), lambda: q.to([1.0], "cpu")):
            try:
                f()
            except RuntimeError as e:
                print("init" in str(e))
        """
    )
    assert out.stdout.split() == ["True"] * 3


# ---- on a GPU (skipped here with the reason above) ----

gpu = pytest.mark.skipif(not HAVE_CUDA, reason=NO_CUDA_REASON)


@pytest.fixture
def cuda_runtime():
    q.destroy()
    q.init("cuda")
    saved = q.transfer_threshold()
    yield
    q.set_transfer_threshold(saved)
    q.destroy()
    q.init("cpu")


@gpu
def test_gpu_small_work_stays_large_work_moves(cuda_runtime):
    q.set_transfer_threshold(1000)
    small = q.asarray(rng.standard_normal(999), copy=True)
    large = q.asarray(rng.standard_normal(1000), copy=True)
    assert q.placement(small) == "cpu"
    assert q.placement(large) == "cuda:0"
    r = large * 3
    assert r.device == "cuda:0"
    np.testing.assert_allclose(np.asarray(r), np.asarray(large) * 3)


@gpu
def test_gpu_scopes_and_to(cuda_runtime):
    x = rng.standard_normal((64, 64)).astype(np.float32)
    with q.device("cpu"):
        a = q.ones((64, 64))
        assert a.device == "cpu"
        assert (a + 1).device == "cpu"
    b = q.ones((64, 64))
    assert b.device == "cuda:0"
    with q.device("cuda:0"):
        c = q.value(x) + 1
        assert c.device == "cuda:0"
    np.testing.assert_allclose(np.asarray(c), x + 1, rtol=1e-6)
    d = q.asarray(x, copy=True).to("cuda")
    assert q.placement(d) == "cuda:0"
    e = q.to(x, "cuda", copy=True)
    assert e.device == "cuda:0"
    np.testing.assert_allclose(np.asarray(e @ e), x.astype(np.float64) @ x, rtol=1e-4, atol=1e-3)
