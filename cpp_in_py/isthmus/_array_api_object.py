"""The array API standard's attributes that qvalue lacked: __array_namespace__, to_device, mT."""

from __future__ import annotations

from typing import Any

from . import _isthmus as _q

SUPPORTED_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")


def array_namespace(self: Any, /, *, api_version: Any = None) -> Any:
    """qvalue.__array_namespace__: the isthmus.array_api module (docs/array-api.md).

    api_version: None or one of "2021.12" .. "2024.12" (the namespace implements 2024.12, which
    keeps the earlier versions' functions); anything else raises ValueError.
    """
    if api_version is not None and api_version not in SUPPORTED_VERSIONS:
        raise ValueError(f"isthmus.array_api implements the array API versions "
                         f"{', '.join(SUPPORTED_VERSIONS)}, not {api_version!r}")
    from . import array_api  # imported on first use (it may start the runtime)
    return array_api


def to_device(self: Any, device: Any, /, *, stream: Any = None) -> Any:
    """qvalue.to_device: self when already on device, else a copy made there."""
    if stream is not None:
        raise TypeError("to_device: stream= is not supported (isthmus orders work per device)")
    device = str(device)
    if device == self.device:
        return self
    return _q.to(self, device, copy=True)


def matrix_transpose(self: Any) -> Any:
    """qvalue.mT: the last two axes swapped (a view); ValueError below 2 dimensions."""
    nd = self.ndim
    if nd < 2:
        raise ValueError(f"mT needs at least 2 dimensions, this value has {nd}")
    axes = list(range(nd))
    axes[-2], axes[-1] = axes[-1], axes[-2]
    return _q.transpose(self, tuple(axes))


# Note [subscripts of scalar values]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Indexing a tensor down to one element gives a *scalar* qvalue (docs/python.md), and the native
# subscript code refuses every key on a scalar. The array API standard (and its test suite, which
# makes 0-d inputs as `a[()]`) treats that element as a 0-d array, so `s[()]`, `s[...]` and
# `s[mask]` must work. NumPy's scalars index as 0-d arrays (`np.float64(1)[()]` is the scalar,
# `[...]` a 0-d array, `[np.True_]` a 1-element array), and so does a qvalue now: the native
# `__getitem__` runs first and only its TypeError on a scalar reaches this code, which indexes
# the scalar as a 0-d tensor (NumPy's errors for keys a 0-d array refuses). It costs tensors'
# indexing one Python call (about 5%). This belongs in cpp_in_py/src/subscripts.cpp; it lives
# here until the native code indexes scalars.


def _make_getitem(native: Any) -> Any:
    def __getitem__(self: Any, key: Any, /) -> Any:
        try:
            return native(self, key)
        except TypeError:
            if self.kind != "scalar":
                raise
        if type(key) is tuple and not key:
            return self
        return native(_q.reshape(self, ()), key)
    __getitem__.__doc__ = native.__doc__ or "self[key] (NumPy's rules, docs/python.md)"
    __getitem__._isthmus_native = native  # type: ignore[attr-defined]
    return __getitem__


def attach(cls: Any) -> None:
    """Adds the attributes to the qvalue class."""
    native = cls.__getitem__
    cls.__getitem__ = _make_getitem(getattr(native, "_isthmus_native", native))
    cls.__array_namespace__ = array_namespace
    cls.to_device = to_device
    cls.mT = property(matrix_transpose)
