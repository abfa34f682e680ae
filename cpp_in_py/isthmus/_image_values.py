"""Pixel values handed to imwrite and imshow: host arrays, levels and display ranges."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _isthmus


def _host_pixels(img: Any, fn: str) -> np.ndarray:
    """The image as a NumPy array on the host, checked: shape (H, W) or (H, W, C), C in 1..4.

    img: a qvalue or anything q.asvalue takes (NumPy arrays, torch tensors, lists, ...). A value
    on the CPU is read in place (no copy); a value located on a GPU is copied to the host with
    to_py() (it stays where it is, and is not pinned). bool becomes 0 / 255 and bfloat16
    float32 (NumPy has no bfloat16); complex values raise TypeError.
    """
    value = img if isinstance(img, _isthmus.qvalue) else _isthmus.asvalue(img)
    if value.kind != "tensor":
        raise TypeError(f"{fn}: expected an image (a tensor of shape (H, W) or (H, W, C)), "
                        f"got a {value.kind} value")
    shape = tuple(value.shape)
    if not (len(shape) == 2 or (len(shape) == 3 and 1 <= shape[2] <= 4)):
        raise ValueError(f"{fn}: expected an image of shape (H, W) or (H, W, C) with C = 1 (gray),"
                         f" 2 (gray + alpha), 3 (RGB) or 4 (RGBA); got shape {shape}")
    if shape[0] == 0 or shape[1] == 0:
        raise ValueError(f"{fn}: the image is empty (shape {shape})")
    if isinstance(value.dtype, str):  # bfloat16
        value = value.astype("float32")
    if value.dtype.kind == "c":
        raise TypeError(f"{fn}: complex images have no pixel values ({value.dtype}); "
                        "pass abs(img), img.real or img.imag")
    arr = np.asarray(value) if value.device == "cpu" else value.to_py()
    if arr.dtype == np.bool_:
        arr = arr.astype(np.uint8) * np.uint8(255)
    return arr


def _white(dtype: np.dtype) -> int:
    """Full intensity for values of this dtype (Note [image values])."""
    return 65535 if dtype == np.uint16 else 255

def _levels(arr: np.ndarray, bits: int) -> np.ndarray:
    """The pixel values as 8- or 16-bit levels, rounded and clipped (Note [image values])."""
    out = np.uint8 if bits == 8 else np.uint16
    top = 255 if bits == 8 else 65535
    if arr.dtype == out:
        return arr
    if arr.dtype == np.uint8:  # bits == 16
        return arr.astype(np.uint16) * np.uint16(257)
    if arr.dtype == np.uint16:  # bits == 8
        return np.rint(arr / 257.0).astype(np.uint8)
    if arr.dtype.kind in "iu":  # levels on 0..255
        return (np.clip(arr, 0, 255).astype(out) * out(top // 255))
    nan = np.isnan(arr)
    if nan.any():
        first = tuple(int(i) for i in np.argwhere(nan)[0])
        raise ValueError(f"imwrite: the image holds {int(nan.sum())} NaN value(s) (the first at "
                         f"{first}), which have no pixel level; replace them first, e.g. "
                         "q.where(q.isnan(img), 0, img)")
    work = arr.astype(np.float64 if bits == 16 or arr.dtype == np.float64 else np.float32)
    return np.clip(np.rint(work * (top / 255.0)), 0, top).astype(out)



def _display_range(value_range: Any, arr: np.ndarray) -> tuple[float, float]:
    """(black, white) for imshow: the given pair, the data's finite extent ("auto"), or the
    dtype's full range (None: 0..255, 0..65535 for uint16)."""
    if value_range is None:
        return 0.0, float(_white(arr.dtype))
    if isinstance(value_range, str):
        if value_range != "auto":
            raise ValueError(f"imshow: range must be None, 'auto' or (low, high), "
                             f"got {value_range!r}")
        finite = arr[np.isfinite(arr)] if arr.dtype.kind == "f" else arr
        if finite.size == 0:
            return 0.0, float(_white(arr.dtype))
        lo, hi = float(finite.min()), float(finite.max())
        return (lo, hi) if hi > lo else (lo, lo + 1.0)
    try:
        pair = np.asarray(value_range, dtype=np.float64).ravel()
    except (TypeError, ValueError) as e:
        raise TypeError(f"imshow: range must be None, 'auto' or (low, high), "
                        f"got {type(value_range).__name__}") from e
    if pair.size != 2 or not np.isfinite(pair).all() or not pair[1] > pair[0]:
        raise ValueError(f"imshow: range must be two finite numbers low < high, "
                         f"got {pair.tolist()}")
    return float(pair[0]), float(pair[1])
