"""The array API standard's fft extension: the transforms through NumPy for CPU arrays and composed
from isthmus ops on other devices (Note [fft by composition]), the helpers composed."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _isthmus as _q
from . import _dtypes, _fft_compose as _fc, _helpers

__all__ = ["fft", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifftn", "ifftshift", "ihfft",
           "irfft", "irfftn", "rfft", "rfftfreq", "rfftn"]

_COMPLEX_OF = {np.dtype("float32"): np.dtype("complex64"), np.dtype("float64"):
               np.dtype("complex128"), np.dtype("complex64"): np.dtype("complex64"),
               np.dtype("complex128"): np.dtype("complex128")}


def _check_norm(norm: str) -> None:
    if norm not in ("backward", "ortho", "forward"):
        raise ValueError(f"fft: norm must be 'backward', 'ortho' or 'forward', got {norm!r}")


def _off_cpu(x: Any) -> bool:
    """True for an array on another device than the CPU: composed transforms, not NumPy."""
    return x.device != "cpu"


def _transform(name: str, x: Any, kind: str, out_complex: bool, **kw: Any) -> Any:
    """NumPy's np.fft.<name> on a CPU array (See Note [CPU stopgaps] in _helpers.py)."""
    x = _helpers.tensor(x)
    if x.dtype.kind not in kind:
        raise TypeError(f"fft.{name} needs a {'complex' if kind == 'c' else 'floating-point'} "
                        f"array, got {x.dtype}")
    _check_norm(kw["norm"])
    if _off_cpu(x):  # Note [fft by composition]; every step there (scheduling rule 0)
        with _q.device(x.device):
            return _composed(name, x, **kw)
    (h,) = _helpers.host(f"fft.{name}", x)
    r = getattr(np.fft, name)(h, **kw)
    cdt = _COMPLEX_OF[x.dtype]
    dt = cdt if out_complex else np.finfo(cdt).dtype
    return _helpers.from_host(np.asarray(r).astype(dt, copy=False))


_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _axis(axis: Any, ndim: int, name: str) -> int:
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"fft.{name}: axis must be an integer, got {type(axis).__name__}")
    if not -ndim <= axis < ndim:
        raise IndexError(f"fft.{name}: axis {axis} is out of bounds for an array of dimension "
                         f"{ndim}")
    return int(axis) % ndim


def _points(n: Any, default: int, name: str) -> int:
    n = default if n is None else n
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"fft.{name}: invalid number of data points ({n}); it must be at least "
                         f"1")
    return int(n)


def _shape_axes(x: Any, s: Any, axes: Any, name: str) -> tuple[list[int], list[Any]]:
    """NumPy's rule: axes default to the last len(s) axes, or all; s to the axes' sizes."""
    if axes is None:
        axes = list(range(x.ndim)) if s is None else list(range(x.ndim - len(s), x.ndim))
    axes = [_axis(a, x.ndim, name) for a in axes]
    if len(set(axes)) != len(axes):
        raise ValueError(f"fft.{name}: axes must be unique, got {axes}")
    s = [None] * len(axes) if s is None else list(s)
    if len(s) != len(axes):
        raise ValueError(f"fft.{name}: s and axes must have the same length")
    return axes, [None if v == -1 else v for v in s]


def _composed(name: str, x: Any, *, norm: str, n: Any = None, axis: int = -1, s: Any = None,
              axes: Any = None) -> Any:
    """The transform composed from isthmus ops (See Note [fft by composition])."""
    if name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
        ax = _axis(axis, x.ndim, name)
        m = x.shape[ax]
        if name in ("fft", "ifft"):
            return _fc.c2c(x, _points(n, m, name), ax, norm, name == "ifft")
        if name == "rfft":
            return _fc.r2c(x, _points(n, m, name), ax, norm)
        if name == "ihfft":
            return _q.conj(_fc.r2c(x, _points(n, m, name), ax, _SWAP[norm]))
        pts = _points(n, 2 * (m - 1), name)
        if name == "irfft":
            return _fc.c2r(x, pts, ax, norm)
        return _fc.c2r(_q.conj(x), pts, ax, _SWAP[norm])  # hfft
    axes_, sizes = _shape_axes(x, s, axes, name)
    if not axes_:
        return _q.copy(x)
    if name in ("fftn", "ifftn"):
        for a, v in zip(axes_, sizes):
            x = _fc.c2c(x, _points(v, x.shape[a], name), a, norm, name == "ifftn")
        return x
    last, rest = axes_[-1], list(zip(axes_[:-1], sizes[:-1]))
    if name == "rfftn":
        x = _fc.r2c(x, _points(sizes[-1], x.shape[last], name), last, norm)
        for a, v in rest:
            x = _fc.c2c(x, _points(v, x.shape[a], name), a, norm, False)
        return x
    for a, v in rest:  # irfftn
        x = _fc.c2c(x, _points(v, x.shape[a], name), a, norm, True)
    return _fc.c2r(x, _points(sizes[-1], 2 * (x.shape[last] - 1), name), last, norm)


def fft(x: Any, /, *, n: Any = None, axis: int = -1, norm: str = "backward") -> Any:
    """The 1-d discrete Fourier transform along axis."""
    return _transform("fft", x, "c", True, n=n, axis=axis, norm=norm)


def ifft(x: Any, /, *, n: Any = None, axis: int = -1, norm: str = "backward") -> Any:
    """The 1-d inverse discrete Fourier transform along axis."""
    return _transform("ifft", x, "c", True, n=n, axis=axis, norm=norm)


def fftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    """The n-d discrete Fourier transform over axes."""
    return _transform("fftn", x, "c", True, s=s, axes=axes, norm=norm)


def ifftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    """The n-d inverse discrete Fourier transform over axes."""
    return _transform("ifftn", x, "c", True, s=s, axes=axes, norm=norm)


def rfft(x: Any, /, *, n: Any = None, axis: int = -1, norm: str = "backward") -> Any:
    """The 1-d transform of a real array (the non-negative frequencies)."""
    return _transform("rfft", x, "f", True, n=n, axis=axis, norm=norm)


def irfft(x: Any, /, *, n: Any = None, axis: int = -1, norm: str = "backward") -> Any:
    """The inverse of rfft (a real array)."""
    return _transform("irfft", x, "c", False, n=n, axis=axis, norm=norm)


def rfftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    """The n-d transform of a real array."""
    return _transform("rfftn", x, "f", True, s=s, axes=axes, norm=norm)


def irfftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    """The inverse of rfftn (a real array)."""
    return _transform("irfftn", x, "c", False, s=s, axes=axes, norm=norm)


def hfft(x: Any, /, *, n: Any = None, axis: int = -1, norm: str = "backward") -> Any:
    """The transform of a signal with Hermitian symmetry (a real array)."""
    return _transform("hfft", x, "c", False, n=n, axis=axis, norm=norm)


def ihfft(x: Any, /, *, n: Any = None, axis: int = -1, norm: str = "backward") -> Any:
    """The inverse of hfft, from a real array."""
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
