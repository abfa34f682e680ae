"""The array API standard's fft extension: the transforms as CPU stopgaps, the helpers composed."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _isthmus as _q
from . import _dtypes, _helpers

__all__ = ["fft", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifftn", "ifftshift", "ihfft",
           "irfft", "irfftn", "rfft", "rfftfreq", "rfftn"]

_COMPLEX_OF = {np.dtype("float32"): np.dtype("complex64"), np.dtype("float64"):
               np.dtype("complex128"), np.dtype("complex64"): np.dtype("complex64"),
               np.dtype("complex128"): np.dtype("complex128")}


def _check_norm(norm: str) -> None:
    if norm not in ("backward", "ortho", "forward"):
        raise ValueError(f"fft: norm must be 'backward', 'ortho' or 'forward', got {norm!r}")


def _transform(name: str, x: Any, kind: str, out_complex: bool, **kw: Any) -> Any:
    """NumPy's np.fft.<name> on a CPU array (See Note [CPU stopgaps] in _helpers.py)."""
    x = _helpers.tensor(x)
    if x.dtype.kind not in kind:
        raise TypeError(f"fft.{name} needs a {'complex' if kind == 'c' else 'floating-point'} "
                        f"array, got {x.dtype}")
    _check_norm(kw["norm"])
    (h,) = _helpers.host(f"fft.{name}", x)
    r = getattr(np.fft, name)(h, **kw)
    cdt = _COMPLEX_OF[x.dtype]
    dt = cdt if out_complex else np.finfo(cdt).dtype
    return _helpers.from_host(np.asarray(r).astype(dt, copy=False))


def fft(x: Any, /, *, n: Any = None, axis: int = -1, norm: str = "backward") -> Any:
    """The 1-d discrete Fourier transform along axis. CPU only."""
    return _transform("fft", x, "c", True, n=n, axis=axis, norm=norm)


def ifft(x: Any, /, *, n: Any = None, axis: int = -1, norm: str = "backward") -> Any:
    """The 1-d inverse discrete Fourier transform along axis. CPU only."""
    return _transform("ifft", x, "c", True, n=n, axis=axis, norm=norm)


def fftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    """The n-d discrete Fourier transform over axes. CPU only."""
    return _transform("fftn", x, "c", True, s=s, axes=axes, norm=norm)


def ifftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    """The n-d inverse discrete Fourier transform over axes. CPU only."""
    return _transform("ifftn", x, "c", True, s=s, axes=axes, norm=norm)


def rfft(x: Any, /, *, n: Any = None, axis: int = -1, norm: str = "backward") -> Any:
    """The 1-d transform of a real array (the non-negative frequencies). CPU only."""
    return _transform("rfft", x, "f", True, n=n, axis=axis, norm=norm)


def irfft(x: Any, /, *, n: Any = None, axis: int = -1, norm: str = "backward") -> Any:
    """The inverse of rfft (a real array). CPU only."""
    return _transform("irfft", x, "c", False, n=n, axis=axis, norm=norm)


def rfftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    """The n-d transform of a real array. CPU only."""
    return _transform("rfftn", x, "f", True, s=s, axes=axes, norm=norm)


def irfftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    """The inverse of rfftn (a real array). CPU only."""
    return _transform("irfftn", x, "c", False, s=s, axes=axes, norm=norm)


def hfft(x: Any, /, *, n: Any = None, axis: int = -1, norm: str = "backward") -> Any:
    """The transform of a signal with Hermitian symmetry (a real array). CPU only."""
    return _transform("hfft", x, "c", False, n=n, axis=axis, norm=norm)


def ihfft(x: Any, /, *, n: Any = None, axis: int = -1, norm: str = "backward") -> Any:
    """The inverse of hfft, from a real array. CPU only."""
    return _transform("ihfft", x, "f", True, n=n, axis=axis, norm=norm)


def _freq(n: int, d: float, dtype: Any, device: Any, half: bool) -> Any:
    n = int(n)
    if n <= 0:
        raise ValueError("fftfreq: n must be positive")
    dt = _dtypes.DEFAULT_FLOAT if dtype is None else _dtypes.as_dtype(dtype)
    if dt.kind != "f":
        raise TypeError(f"fftfreq: dtype must be real floating, got {dt}")
    count = n // 2 + 1 if half else n
    with _helpers.on_device(device):
        k = _q.arange(0, count, 1, dtype="int64")
    if not half:
        k = _q.where(k < (n + 1) // 2, k, k - n)
    scale = _q.full((), 1.0 / (n * float(d)), dtype="float64")
    return (k.astype("float64") * scale).astype(dt)


def fftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Any:
    """The sample frequencies of an n-point fft with spacing d (composed, any device)."""
    return _freq(n, d, dtype, device, False)


def rfftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Any:
    """The non-negative sample frequencies of an n-point rfft (composed, any device)."""
    return _freq(n, d, dtype, device, True)


def _roll_half(x: Any, axes: Any, sign: int) -> Any:
    """x rolled by sign * (size // 2) along each of axes (None: all)."""
    from ._manipulation import roll
    x = _helpers.tensor(x)
    axes = tuple(range(x.ndim)) if axes is None else (
        tuple(axes) if isinstance(axes, (tuple, list)) else (axes,))
    if not axes:
        return _q.copy(x)
    return roll(x, tuple(sign * (x.shape[a] // 2) for a in axes), axis=axes)


def fftshift(x: Any, /, *, axes: Any = None) -> Any:
    """x with the zero frequency moved to the middle of each axis (composed, any device)."""
    return _roll_half(x, axes, 1)


def ifftshift(x: Any, /, *, axes: Any = None) -> Any:
    """The inverse of fftshift (composed, any device)."""
    return _roll_half(x, axes, -1)
