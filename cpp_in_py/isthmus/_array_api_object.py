"""The array API standard's attributes of qvalue: __array_namespace__, to_device, mT (attached by
_qvalue_python.py)."""

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
