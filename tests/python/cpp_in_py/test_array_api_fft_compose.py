# Transforms composed from isthmus ops (Note [fft by composition]): the code CUDA arrays run,
# checked here on CPU arrays against NumPy's pocketfft, through the namespace's own argument
# handling (fft._composed) and the 1-d kernels (_fft_compose).
import numpy as np
import pytest

import isthmus as q
from cuda_helpers import HAVE_CUDA, NO_CUDA_REASON
import isthmus.array_api as xp
from isthmus.array_api import _fft_compose as fc
from isthmus.array_api import fft as xfft

rng = np.random.default_rng(11)


@pytest.fixture(autouse=True)
def cpu():
    q.init("cpu")


def crand(shape, dtype="complex128"):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def close(got, ref, dtype):
    t = 2e-4 if np.dtype(dtype) in (np.complex64, np.float32) else 1e-10
    scale = max(1.0, float(np.max(np.abs(ref)))) if np.size(ref) else 1.0
    np.testing.assert_allclose(np.asarray(got), ref, rtol=0, atol=t * scale)


# lengths: direct DFTs, powers of two past the direct size, Bluestein (primes, odd, even)
LENGTHS = [1, 2, 3, 5, 8, 16, 17, 63, 64, 100, 128, 129, 256, 1000, 1024, 4099]


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_fft_and_ifft_of_every_length_kind(n, dtype):
    x = crand((3, n), dtype)
    X = q.value(x)
    close(fc.c2c(X, n, 1, "backward", False), np.fft.fft(x), dtype)
    close(fc.c2c(X, n, 1, "backward", True), np.fft.ifft(x), dtype)
    assert str(fc.c2c(X, n, 1, "backward", False).dtype) == dtype


@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
@pytest.mark.parametrize("name", ["fft", "ifft"])
def test_norm_axis_and_n_as_numpy(norm, name):
    x = crand((4, 6, 10))
    X = q.value(x)
    for axis in (0, 1, -1):
        for n in (None, 3, 10, 16, 21):
            got = xfft._composed(name, X, n=n, axis=axis, norm=norm)
            close(got, getattr(np.fft, name)(x, n=n, axis=axis, norm=norm), "complex128")


@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_real_transforms_as_numpy(norm):
    for m in (1, 2, 7, 8, 130):
        r = rng.standard_normal((3, m))
        R = q.value(r)
        for n in (None, m + 3, max(1, m - 1)):
            close(xfft._composed("rfft", R, n=n, axis=-1, norm=norm),
                  np.fft.rfft(r, n=n, norm=norm), "complex128")
            close(xfft._composed("ihfft", R, n=n, axis=-1, norm=norm),
                  np.fft.ihfft(r, n=n, norm=norm), "complex128")
        h = crand((2, m))
        H = q.value(h)
        for n in ((None,) if m > 1 else ()) + (1, 2, 2 * m - 1, 2 * m + 4):
            got = xfft._composed("irfft", H, n=n, axis=1, norm=norm)
            assert str(got.dtype) == "float64"
            close(got, np.fft.irfft(h, n=n, axis=1, norm=norm), "float64")
            close(xfft._composed("hfft", H, n=n, axis=1, norm=norm),
                  np.fft.hfft(h, n=n, axis=1, norm=norm), "float64")


def test_n_dimensional_transforms_as_numpy():
    x = crand((3, 5, 8))
    r = rng.standard_normal((3, 5, 8))
    X, R = q.value(x), q.value(r)
    for s, axes in ((None, None), (None, (0, 2)), ((4, 6), (1, 2)), ((2, 9), (1, 0)), (None, ())):
        close(xfft._composed("fftn", X, s=s, axes=axes, norm="backward"),
              np.fft.fftn(x, s=s, axes=axes), "complex128")
        close(xfft._composed("ifftn", X, s=s, axes=axes, norm="ortho"),
              np.fft.ifftn(x, s=s, axes=axes, norm="ortho"), "complex128")
        if axes != ():
            close(xfft._composed("rfftn", R, s=s, axes=axes, norm="backward"),
                  np.fft.rfftn(r, s=s, axes=axes), "complex128")
            half = np.fft.rfftn(r, s=s, axes=axes)
            close(xfft._composed("irfftn", q.value(half), s=s, axes=axes, norm="forward"),
                  np.fft.irfftn(half, s=s, axes=axes, norm="forward"), "float64")


def test_float32_precision_and_dtypes():
    r = rng.standard_normal((2, 300)).astype(np.float32)
    got = xfft._composed("rfft", q.value(r), n=None, axis=-1, norm="backward")
    assert str(got.dtype) == "complex64"
    close(got, np.fft.rfft(r), "complex64")


def test_bad_arguments_are_refused_like_the_cpu_path():
    X = q.value(crand((2, 4)))
    with pytest.raises(ValueError, match="invalid number of data points"):
        xfft._composed("fft", X, n=0, axis=-1, norm="backward")
    with pytest.raises(IndexError, match="out of bounds"):
        xfft._composed("fft", X, n=None, axis=2, norm="backward")
    with pytest.raises(ValueError, match="unique"):
        xfft._composed("fftn", X, s=None, axes=(0, 0), norm="backward")
    with pytest.raises(ValueError, match="same length"):
        xfft._composed("fftn", X, s=(2,), axes=(0, 1), norm="backward")
    # the public functions check norm and dtype before choosing a path
    with pytest.raises(ValueError, match="norm"):
        xp.fft.fft(X, norm="both")
    with pytest.raises(TypeError, match="complex"):
        xp.fft.fft(xp.asarray(np.ones(4)))


def test_the_composed_route_of_the_namespace(monkeypatch):
    # What a CUDA array takes, forced on CPU arrays: the public functions' composed branch
    monkeypatch.setattr(xfft, "_off_cpu", lambda x: True)
    x = crand((3, 40))
    X = xp.asarray(x)
    close(xp.fft.fft(X, n=50, norm="ortho"), np.fft.fft(x, n=50, norm="ortho"), "complex128")
    close(xp.fft.ifftn(X), np.fft.ifftn(x), "complex128")
    r = rng.standard_normal((3, 40))
    close(xp.fft.irfft(xp.fft.rfft(xp.asarray(r)), n=40), r, "float64")
    close(xp.fft.hfft(X[:, :21]), np.fft.hfft(x[:, :21]), "float64")


@pytest.mark.skipif(not HAVE_CUDA, reason=NO_CUDA_REASON)
def test_cuda_arrays_are_transformed_on_the_device():
    q.destroy()
    q.init("cuda")
    try:
        x = crand((4, 1000))
        X = xp.asarray(x, device=xp.__array_namespace_info__().devices()[-1])
        got = xp.fft.fft(X)
        assert got.device.startswith("cuda")
        close(np.asarray(got.to_device("cpu")), np.fft.fft(x), "complex128")
        r = xp.fft.irfft(xp.fft.rfft(xp.real(X)))
        close(np.asarray(r.to_device("cpu")), x.real, "float64")
    finally:
        q.destroy()
        q.init("cpu")
