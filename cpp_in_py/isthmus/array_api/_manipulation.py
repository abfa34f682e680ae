"""Manipulation functions of the array API namespace: reshape, concat, stack, roll, squeeze, ..."""

from __future__ import annotations

from typing import Any

from .. import _isthmus as _q
from . import _helpers

__all__ = ["broadcast_arrays", "broadcast_shapes", "broadcast_to", "concat", "expand_dims", "flip",
           "moveaxis", "permute_dims", "repeat", "reshape", "roll", "squeeze", "stack", "tile",
           "unstack"]

_t = _helpers.tensor


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The shape these shapes broadcast to (ValueError when they do not)."""
    nd = max((len(s) for s in shapes), default=0)
    res = [1] * nd
    for s in shapes:
        for i, d in enumerate(s):
            j = nd - len(s) + i
            if d != 1:
                if res[j] not in (1, d):
                    raise ValueError(f"shapes {shapes} do not broadcast together")
                res[j] = d
    return tuple(res)


def broadcast_arrays(*arrays: Any) -> list[Any]:
    """The arrays broadcast to their common shape (read-only views)."""
    xs = [_t(a) for a in arrays]
    shape = broadcast_shapes(*(x.shape for x in xs))
    return [x if x.shape == shape else _q.broadcast_to(x, shape) for x in xs]


def broadcast_to(x: Any, /, shape: tuple[int, ...]) -> Any:
    """x broadcast to shape (a view; ValueError when it does not broadcast)."""
    return _q.broadcast_to(_t(x), tuple(shape))


def concat(arrays: Any, /, *, axis: Any = 0) -> Any:
    """The arrays joined along axis (None: flattened first); dtypes promote."""
    xs = [_t(a) for a in arrays]
    if not xs:
        raise ValueError("concat needs at least one array")
    if axis is None:
        xs = [_q.reshape(x, (-1,)) for x in xs]
        axis = 0
    if any(x.ndim == 0 for x in xs):
        raise ValueError("concat: 0-d arrays cannot be joined (use axis=None)")
    return _q.concatenate(xs, axis=int(axis))


def stack(arrays: Any, /, *, axis: int = 0) -> Any:
    """The arrays (all of one shape) joined along a new axis."""
    xs = [_t(a) for a in arrays]
    if not xs:
        raise ValueError("stack needs at least one array")
    return _q.stack(xs, axis=int(axis))


def expand_dims(x: Any, /, axis: int = 0) -> Any:
    """x with a new axis of size 1 at axis (in -x.ndim-1 .. x.ndim)."""
    x = _t(x)
    if not -x.ndim - 1 <= axis <= x.ndim:
        raise IndexError(f"expand_dims: axis {axis} is out of range for {x.ndim} dimensions")
    return _q.expand_dims(x, int(axis))


def flip(x: Any, /, *, axis: Any = None) -> Any:
    """x with the order of elements reversed along axis (None: all axes)."""
    x = _t(x)
    axes = _helpers.axis_tuple(axis, x.ndim, "flip")
    if x.ndim == 0:
        return _q.copy(x)
    return _q.flip(x, axes)


def moveaxis(x: Any, source: Any, destination: Any, /) -> Any:
    """x with the source axes moved to the destination positions (the others keep their order)."""
    x = _t(x)
    src = _helpers.axis_tuple(source if isinstance(source, tuple) else int(source), x.ndim,
                              "moveaxis")
    dst = _helpers.axis_tuple(destination if isinstance(destination, tuple) else
                              int(destination), x.ndim, "moveaxis")
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination must have the same number of axes")
    order = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _q.transpose(x, tuple(order))


def permute_dims(x: Any, /, axes: tuple[int, ...]) -> Any:
    """x with its axes permuted (a view)."""
    x = _t(x)
    axes = tuple(int(a) for a in axes)
    if sorted(a % x.ndim if x.ndim else a for a in axes) != list(range(x.ndim)):
        raise ValueError(f"permute_dims: {axes} is not a permutation of {x.ndim} axes")
    return _q.transpose(x, axes)


def repeat(x: Any, repeats: Any, /, *, axis: Any = None) -> Any:
    """Each element repeated `repeats` times (an int or an int array) along axis (None: flat)."""
    x = _t(x)
    if axis is None:
        x = _q.reshape(x, (-1,))
        axis = 0
    (ax,) = _helpers.axis_tuple(int(axis), x.ndim, "repeat")
    if isinstance(repeats, _q.qvalue):
        repeats = _t(repeats)
        if repeats.ndim == 0:
            repeats = int(repeats)
    elif int(repeats) < 0:
        raise ValueError("repeat: repeats must be non-negative")
    return _q.repeat(x, repeats, axis=ax)


def reshape(x: Any, /, shape: tuple[int, ...], *, copy: Any = None) -> Any:
    """x with a new shape (one entry may be -1); a view when possible unless copy=True.

    copy=False raises ValueError when the strides need a copy.
    """
    x = _t(x)
    shape = tuple(int(s) for s in shape)
    if copy is False:
        return x.view(shape)
    r = _q.reshape(x, shape)
    return _q.copy(r) if copy else r


def roll(x: Any, /, shift: Any, *, axis: Any = None) -> Any:
    """x with its elements shifted along axis (None: the flattened array), wrapping around."""
    x = _t(x)
    if axis is None:
        flat = _q.reshape(x, (-1,))
        return _q.reshape(roll(flat, int(shift) if not isinstance(shift, tuple) else sum(shift),
                               axis=0), x.shape)
    shifts = shift if isinstance(shift, tuple) else (shift,)
    axes = axis if isinstance(axis, tuple) else (axis,)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(shifts) != len(axes):
        raise ValueError("roll: shift and axis must have the same length")
    r = x
    for s, a in zip(shifts, axes):
        (ax,) = _helpers.axis_tuple(int(a), x.ndim, "roll")
        n = x.shape[ax]
        if n == 0:
            continue
        s = int(s) % n
        if s == 0:
            continue
        head = [slice(None)] * x.ndim
        tail = [slice(None)] * x.ndim
        head[ax] = slice(n - s, None)
        tail[ax] = slice(0, n - s)
        r = _q.concatenate([r[tuple(head)], r[tuple(tail)]], axis=ax)
    return r if r is not x else _q.copy(x)


def squeeze(x: Any, /, axis: Any) -> Any:
    """x without the listed axes, which must have size 1 (ValueError otherwise)."""
    x = _t(x)
    axes = _helpers.axis_tuple(axis, x.ndim, "squeeze")
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"squeeze: axis {a} has size {x.shape[a]}, not 1")
    return _q.reshape(x, tuple(s for i, s in enumerate(x.shape) if i not in axes))


def tile(x: Any, repetitions: tuple[int, ...], /) -> Any:
    """x repeated as whole blocks, repetitions[i] times along axis i."""
    return _q.tile(_t(x), tuple(int(r) for r in repetitions))


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    """The slices of x along axis, as a tuple of views."""
    x = _t(x)
    if x.ndim == 0:
        raise ValueError("unstack needs an array of at least one dimension")
    (ax,) = _helpers.axis_tuple(int(axis), x.ndim, "unstack")
    key = [slice(None)] * x.ndim
    res = []
    for i in range(x.shape[ax]):
        key[ax] = i
        res.append(_helpers.out(x[tuple(key)]))
    return tuple(res)

