"""Linear algebra of the array API namespace: matmul, matrix_transpose, tensordot, vecdot."""

from __future__ import annotations

import math
from typing import Any

from .. import _isthmus as _q
from . import _helpers

__all__ = ["matmul", "matrix_transpose", "tensordot", "vecdot"]


def matmul(x1: Any, x2: Any, /) -> Any:
    """The matrix product (NumPy's matmul rules: 1-d operands, batch broadcasting)."""
    a, b = _helpers.tensor(x1), _helpers.tensor(x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: the operands must have at least one dimension")
    return _helpers.out(_q.matmul(a, b))


def matrix_transpose(x: Any, /) -> Any:
    """x with its last two axes swapped (a view; ValueError below 2 dimensions)."""
    return _helpers.tensor(x).mT


def tensordot(x1: Any, x2: Any, /, *, axes: Any = 2) -> Any:
    """Sum of products over the last `axes` axes of x1 and the first of x2 (or the listed axes)."""
    a, b = _helpers.tensor(x1), _helpers.tensor(x2)
    if isinstance(axes, int):
        if axes < 0:
            raise ValueError("tensordot: axes must be non-negative")
        if axes > min(a.ndim, b.ndim):
            raise ValueError("tensordot: more contracted axes than dimensions")
        ax_a = list(range(a.ndim - axes, a.ndim))
        ax_b = list(range(axes))
    else:
        ax_a, ax_b = (list(axes[0]), list(axes[1]))
        if len(ax_a) != len(ax_b):
            raise ValueError("tensordot: the two axis lists must have the same length")
        ax_a = [i % a.ndim for i in ax_a]
        ax_b = [i % b.ndim for i in ax_b]
    for i, j in zip(ax_a, ax_b):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"tensordot: contracted axes of sizes {a.shape[i]} and {b.shape[j]}")
    free_a = [i for i in range(a.ndim) if i not in ax_a]
    free_b = [i for i in range(b.ndim) if i not in ax_b]
    k = math.prod(a.shape[i] for i in ax_a)
    rows = math.prod(a.shape[i] for i in free_a)
    cols = math.prod(b.shape[i] for i in free_b)
    ma = _q.reshape(_q.transpose(a, tuple(free_a + ax_a)), (rows, k))
    mb = _q.reshape(_q.transpose(b, tuple(ax_b + free_b)), (k, cols))
    r = _q.matmul(ma, mb)
    return _q.reshape(r, tuple(a.shape[i] for i in free_a) + tuple(b.shape[i] for i in free_b))


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """sum(conj(x1) * x2) along axis, the other axes broadcast."""
    a, b = _helpers.tensor(x1), _helpers.tensor(x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("vecdot: the operands must have at least one dimension")
    if not -min(a.ndim, b.ndim) <= axis < 0 and axis >= 0:
        axis = axis - max(a.ndim, b.ndim)
    if not -min(a.ndim, b.ndim) <= axis < 0:
        raise IndexError(f"vecdot: axis {axis} is out of range")
    if a.shape[axis] != b.shape[axis]:
        raise ValueError(f"vecdot: the axes have sizes {a.shape[axis]} and {b.shape[axis]}")
    prod = _q.conj(a) * b if a.dtype.kind == "c" else a * b
    r = _helpers.out(_q.sum(prod, axis=axis))
    return r if r.dtype == prod.dtype else r.astype(prod.dtype)
