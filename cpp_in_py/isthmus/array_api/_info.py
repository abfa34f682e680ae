"""The inspection API of the array API namespace: `__array_namespace_info__()`."""

from __future__ import annotations

from typing import Any

from .. import _isthmus as _q
from . import _dtypes


class Info:
    """What the namespace supports: capabilities, devices, default and available dtypes."""

    __module__ = "isthmus.array_api"

    def capabilities(self) -> dict[str, Any]:
        """Boolean indexing and data-dependent shapes work; 32 dimensions at most."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 32}

    def default_device(self) -> str:
        """The device new arrays go to: the session's default device."""
        return str(_q.placement())

    def devices(self) -> list[str]:
        """The devices arrays may live on: "cpu", and "cuda:0" when the session runs on CUDA."""
        devs = ["cpu"]
        d = self.default_device()
        if d != "cpu":
            devs.append(d)
        return devs

    def default_dtypes(self, *, device: Any = None) -> dict[str, Any]:
        """float64, complex128, int64 and int64 for indexing, on every device."""
        return {"real floating": _dtypes.DEFAULT_FLOAT, "complex floating": _dtypes.DEFAULT_COMPLEX,
                "integral": _dtypes.DEFAULT_INT, "indexing": _dtypes.DEFAULT_INDEX}

    def dtypes(self, *, device: Any = None, kind: Any = None) -> dict[str, Any]:
        """The dtypes of a kind (None: all), by name."""
        return {str(d): d for d in _dtypes.ALL if kind is None or _dtypes.isdtype(d, kind)}


def __array_namespace_info__() -> Info:
    """The namespace's inspection object (the standard's __array_namespace_info__)."""
    return Info()
