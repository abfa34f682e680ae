"""Discrete Fourier transforms composed from isthmus ops, for arrays on devices without an FFT
library in isthmus (See Note [fft by composition])."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _isthmus as _q

# Note [fft by composition]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# CPU arrays take NumPy's pocketfft (Note [CPU stopgaps] in _helpers.py). Arrays on other
# devices have no FFT library in isthmus yet, so the transforms are composed from isthmus's own
# ops, which run on every backend, along the last axis of a batch (other axes are moved there):
# - n <= 64: the DFT as one matmul by the n x n matrix exp(-2 pi i jk / n).
# - n a power of two: decimation in time, vectorised: a 64-point DFT (one matmul) of the 64
#   stride-n/64 subsequences, then log2(n / 64) butterfly stages, each joining pairs of
#   half-length transforms E, O into E + w O and E - w O with one complex multiply, two adds and
#   a concatenation over the whole batch (O(n log n) work, O(log n) op launches).
# - any other n: Bluestein's chirp z-transform, x_k w_k convolved with conj(w) through
#   power-of-two transforms of length >= 2n - 1, w_k = exp(-pi i (k^2 mod 2n) / n).
# Inverse transforms are conj(F(conj(x))); the real transforms (rfft, irfft, hfft, ihfft) are
# complex ones on the real input or on the Hermitian-completed half spectrum, as in NumPy's
# definitions; fftn applies the 1-d transform per axis. The constant twiddles and chirps are
# computed in float64 on the host (exponents reduced modulo the period first), and the work
# runs in the input's complex precision. Results equal pocketfft's to a few ulp times log n;
# the tests run this code on CPU arrays against NumPy.

_DIRECT = 64

_COMPLEX = {"float32": "complex64", "float64": "complex128", "complex64": "complex64",
            "complex128": "complex128"}


def complex_of(dtype: Any) -> str:
    return _COMPLEX[str(dtype)]


def _const(a: np.ndarray, like: Any) -> Any:
    """A constant host array as a tensor of like's complex dtype, on like's device."""
    with _q.device(like.device):
        return _q.value(np.ascontiguousarray(a.astype(str(like.dtype))))


def _dft_matrix(n: int, like: Any) -> Any:
    jk = np.outer(np.arange(n), np.arange(n)) % n
    return _const(np.exp(-2j * np.pi * jk / n), like)


def _pow2(x: Any, n: int) -> Any:
    """The forward DFT along the last axis of x (length n, a power of two)."""
    if n <= _DIRECT:
        return _q.matmul(x, _dft_matrix(n, x))
    batch = x.shape[:-1]
    cols = n // _DIRECT
    y = _q.matmul(_dft_matrix(_DIRECT, x), _q.reshape(x, batch + (_DIRECT, cols)))
    rows = _DIRECT
    while rows < n:
        half = y.shape[-1] // 2
        even, odd = y[..., :, :half], y[..., :, half:]
        w = _const(np.exp(-1j * np.pi * np.arange(rows) / rows)[:, None], x)
        t = odd * w
        y = _q.concat([even + t, even - t], axis=-2)
        rows *= 2
    return _q.reshape(y, batch + (n,))


def _bluestein(x: Any, n: int) -> Any:
    batch = x.shape[:-1]
    size = 1 << (2 * n - 2).bit_length()  # the power of two >= 2n - 1
    k = np.arange(n)
    chirp = np.exp(-1j * np.pi * ((k * k) % (2 * n)) / n)
    b = np.zeros(size, np.complex128)
    b[:n] = np.conj(chirp)
    b[size - n + 1:] = np.conj(chirp[1:])[::-1]
    fb = _const(np.fft.fft(b), x)  # a constant: its transform is computed once, on the host
    w = _const(chirp, x)
    with _q.device(x.device):
        pad = _q.zeros(batch + (size - n,), dtype=str(x.dtype))
    a = _q.concat([x * w, pad], axis=-1)
    conv = _inverse_unscaled(_pow2(a, size) * fb, size) / size
    return conv[..., :n] * w


def _forward(x: Any, n: int) -> Any:
    if n & (n - 1) == 0:
        return _pow2(x, n)
    if n <= _DIRECT:
        return _q.matmul(x, _dft_matrix(n, x))
    return _bluestein(x, n)


def _inverse_unscaled(x: Any, n: int) -> Any:
    return _q.conj(_forward(_q.conj(x), n))


def _resize(x: Any, n: int) -> Any:
    """x cut or zero-padded to n along the last axis."""
    m = x.shape[-1]
    if n == m:
        return x
    if n < m:
        return x[..., :n]
    with _q.device(x.device):
        pad = _q.zeros(x.shape[:-1] + (n - m,), dtype=str(x.dtype))
    return _q.concat([x, pad], axis=-1)


def _scale(norm: str, n: int, inverse: bool) -> float:
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    return 1.0 / n if (norm == "forward") != inverse else 1.0


def _last(x: Any, axis: int) -> Any:
    from ._manipulation import moveaxis
    return x if axis == x.ndim - 1 else moveaxis(x, axis, -1)


def _back(x: Any, axis: int, ndim: int) -> Any:
    from ._manipulation import moveaxis
    return x if axis == ndim - 1 else moveaxis(x, -1, axis)


def c2c(x: Any, n: int, axis: int, norm: str, inverse: bool) -> Any:
    """fft / ifft of the complex x along axis (normalised), with length n."""
    ndim = x.ndim
    y = _resize(_last(x, axis), n)
    y = _inverse_unscaled(y, n) if inverse else _forward(y, n)
    s = _scale(norm, n, inverse)
    if s != 1.0:
        y = y * s
    return _back(y, axis, ndim)


def r2c(x: Any, n: int, axis: int, norm: str) -> Any:
    """rfft of the real x: the first n // 2 + 1 entries of its complex transform."""
    full = c2c(_last(x, axis).astype(complex_of(x.dtype)), n, x.ndim - 1, norm, False)
    return _back(full[..., :n // 2 + 1], axis, x.ndim)


def c2r(x: Any, n: int, axis: int, norm: str) -> Any:
    """irfft of the half spectrum x: the real inverse transform of its Hermitian completion."""
    h = _resize(_last(x, axis), n // 2 + 1)
    from ._manipulation import flip
    tail = _q.conj(flip(h[..., 1:(n + 1) // 2], axis=-1))
    full = _q.concat([h, tail], axis=-1) if tail.shape[-1] else h
    y = _q.real(c2c(full, n, full.ndim - 1, norm, True))
    return _back(y, axis, x.ndim)
