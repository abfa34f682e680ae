"""NumPy's property functions (np.shape, np.ndim, np.size), which give Python values."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._fn_shape import _normalize_axis
from ._keywords import _tensor
from ._tables import _implements


@_implements("shape")
def _np_shape(a: Any) -> tuple[int, ...]:
    return tuple(_tensor(a).shape)


@_implements("ndim")
def _np_ndim(a: Any) -> int:
    return int(_tensor(a).ndim)


@_implements("size")
def _np_size(a: Any, axis: Any = None) -> int:
    A = _tensor(a)
    if axis is None:
        return int(A.numel())
    if isinstance(axis, tuple):
        return int(np.prod([A.shape[_normalize_axis(x, A.ndim)] for x in axis], dtype=np.int64))
    return int(A.shape[_normalize_axis(axis, A.ndim)])
