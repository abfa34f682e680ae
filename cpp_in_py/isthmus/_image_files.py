"""Image files through Pillow: ImageFileError, decoding, frame limits and save formats."""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

from . import _isthmus


class ImageFileError(OSError):
    """A file that exists but cannot be read as an image (unknown format, empty, truncated,
    corrupt, or more pixels than the decompression-bomb limit allows).

    ``str(err)`` says what is wrong and names the file (``imread: cannot read 'x.png':
    truncated PNG file (...)``); ``filename`` holds the path (or the file object's name); the
    decoder's own exception, when there is one, is the ``__cause__``.
    """

    # Note [ImageFileError's message]
    # ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    # OSError.__str__ ignores the message once `filename` is set and formats
    # "[Errno {errno}] {strerror}: {filename!r}" instead, which for an error without an errno
    # reads "[Errno None] None: 'x.png'". The message already names the file, so str() is
    # the message itself (kept in strerror too, for code that reads that).
    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "imread: cannot read the file as an image"


ImageFileError.__module__ = "isthmus.images"  # its public home (repr, pickle)



def _pil(fn: str) -> Any:
    """PIL.Image, or ModuleNotFoundError saying that `fn` needs Pillow."""
    try:
        from PIL import Image
    except ImportError as e:
        raise ModuleNotFoundError(
            f"q.{fn} needs Pillow, which could not be imported ({e}); "
            "install it with: pip install pillow", name="PIL") from e
    Image.init()  # registers every format plugin (extensions, savers)
    return Image



def _describe(file: Any) -> str:
    """The file as messages name it: the quoted path, or the file object's name."""
    if isinstance(file, (str, bytes, os.PathLike)):
        path = os.fspath(file)
        return repr(os.fsdecode(path))
    name = getattr(file, "name", None)
    return repr(name) if isinstance(name, str) else f"<{type(file).__name__} object>"


def _check_file(file: Any, fn: str, method: str) -> None:
    if not (isinstance(file, (str, bytes, os.PathLike)) or callable(getattr(file, method, None))):
        raise TypeError(f"{fn}: expected a path or a binary file object, "
                        f"got {type(file).__name__}")


# ---- reading ----

# Channel layouts, by channel count: a 2-D result for "L".
_LAYOUTS = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}
_MODES = (None, "L", "LA", "RGB", "RGBA")


def _read_dtype(dtype: Any) -> Any:
    """The result dtype of imread (a numpy.dtype, or "bfloat16"), checked."""
    if dtype is None:
        return _isthmus.value(0.0).dtype  # Quasar's `scalar`: float32 unless init says float64
    dt = _isthmus.zeros(0, dtype=dtype).dtype  # one parser for dtype names (TypeError if bad)
    if isinstance(dt, str) or dt.kind == "f" or dt in (np.uint8, np.uint16):
        return dt
    raise TypeError(f"imread: dtype must be a float dtype (levels on 0..255), uint8 or uint16, "
                    f"got {dt}")


def _frame_pixels(frame: Any) -> tuple[np.ndarray, str, float | None]:
    """One decoded frame as (array of shape (H, W) or (H, W, C), layout, white level).

    See Note [imread layouts]. The white level is the stored value of full intensity (255 for
    8-bit data, 65535 for 16-bit), None for float images (their values are taken as they are).
    """
    mode = frame.mode
    if mode == "1":
        frame = frame.convert("L")
    elif mode in ("P", "PA"):
        alpha = mode == "PA" or "transparency" in frame.info
        frame = frame.convert("RGBA" if alpha else "RGB")
    elif mode.startswith("I;16"):
        return np.asarray(frame).astype(np.uint16), "L", 65535.0  # native byte order
    elif mode == "I":
        return np.asarray(frame), "L", 65535.0
    elif mode == "F":
        return np.asarray(frame, dtype=np.float32), "L", None
    elif mode not in ("L", "LA", "RGB", "RGBA"):
        # CMYK, YCbCr, LAB, HSV, RGBX, RGBa, La, ...: Pillow's conversion to RGB(A)
        frame = frame.convert("RGBA" if "A" in frame.getbands() or mode.endswith("a") else "RGB")
    arr = np.asarray(frame)
    return arr, _LAYOUTS[1 if arr.ndim == 2 else arr.shape[2]], 255.0


def _to_layout(a: np.ndarray, src: str, dst: str) -> np.ndarray:
    """Channels of a float image (0..255 scale) converted from layout src to dst.

    Grayscale from colour is the ITU-R 601-2 luma (Pillow's weights), computed in floating
    point; alpha is dropped, or added as 255 (opaque).
    """
    if src == dst:
        return a
    gray = a if src == "L" else a[..., 0] if src == "LA" else None
    if dst in ("L", "LA") and gray is None:
        gray = a[..., 0] * 0.299 + a[..., 1] * 0.587 + a[..., 2] * 0.114
    if dst == "L":
        return gray
    alpha = a[..., -1] if src in ("LA", "RGBA") else np.full(a.shape[:2], 255, a.dtype)
    if dst == "LA":
        return np.stack([gray, alpha], axis=-1)
    rgb = a[..., :3] if src in ("RGB", "RGBA") else np.repeat(gray[..., None], 3, axis=-1)
    return rgb if dst == "RGB" else np.concatenate([rgb, alpha[..., None]], axis=-1)


def _decoded(raw: np.ndarray, layout: str, white: float | None, mode: str | None, dt: Any,
             name: str) -> np.ndarray:
    """A decoded frame (see _frame_pixels) in `mode`'s layout (None: its own) as the result
    dtype (NumPy's; float32 for bfloat16, which q.value converts). See Note [image values]."""
    dst = layout if mode is None else mode
    levels = not isinstance(dt, str) and dt.kind == "u"
    if levels and white is None:
        raise ValueError(f"imread: {name} is a floating-point image (no white level); "
                         f"read it with a float dtype, not {dt}")
    if levels and dst == layout and raw.dtype == dt and white == (255 if dt == np.uint8 else 65535):
        return raw  # the stored levels, unchanged
    work = np.float64 if dt == np.float64 else np.float32
    a = raw.astype(work)
    if white is not None and white != 255.0:
        a *= work(255.0 / white)
    a = _to_layout(a, layout, dst)
    if levels:
        step = 1.0 if dt == np.uint8 else 257.0  # 65535 / 255
        return np.clip(np.rint(a * step), 0, 255 * step).astype(dt)
    return a


# Note [the pixel limit of a frame stack]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Pillow refuses one frame of more than 2 * Image.MAX_IMAGE_PIXELS pixels (its
# decompression-bomb check), but says nothing about how many frames a file has: a small APNG or
# GIF can hold dozens of full-canvas frames that compress to nothing, so frame=None would decode
# gigabytes from a file of kilobytes. imread therefore bounds the whole stack as well: before
# decoding anything it multiplies the frame count by the first frame's size, and while decoding
# it adds up each frame's real size (TIFF frames may differ); when a file of several frames
# holds more than Image.MAX_IMAGE_PIXELS pixels in all, it raises ImageFileError before the
# frames are decoded. Image.MAX_IMAGE_PIXELS = None turns both checks off, as it does Pillow's;
# a larger value allows bigger stacks.


def _stack_limit(Image: Any) -> int | None:
    """The most pixels frame=None decodes from one file (See Note [the pixel limit of a frame
    stack]); None for no limit."""
    limit = getattr(Image, "MAX_IMAGE_PIXELS", None)
    return None if limit is None else int(limit)


def _check_stack(file: Any, pixels: int, count: int, limit: int | None, claimed: bool) -> None:
    """ImageFileError when `pixels` (over `count` frames) pass the stack limit."""
    if limit is None or count < 2 or pixels <= limit:
        return
    how = "would hold" if claimed else "hold"
    raise _file_error(
        file, None, None,
        f"its {count} frames {how} {pixels} pixels in all, more than the limit of {limit} "
        "(PIL.Image.MAX_IMAGE_PIXELS, the decompression-bomb limit, applied to the whole "
        "stack); read the frames one at a time with frame=k, or raise "
        "PIL.Image.MAX_IMAGE_PIXELS if the file is trusted")


def _decode(file: Any, Image: Any, frame: int | None) -> tuple[list, int]:
    """The wanted frames, decoded (see _frame_pixels), and the file's frame count; an empty list
    when `frame` is out of range. Only Pillow runs in here, so every error but the file
    system's (errno set: FileNotFoundError, PermissionError, ...) means the file is not a
    readable image: ImageFileError naming it and what is wrong (See Note [ImageFileError's
    message])."""
    fmt = None
    try:
        with Image.open(file) as img:
            fmt = img.format
            count = getattr(img, "n_frames", 1)
            wanted = list(range(count)) if frame is None else [frame + count if frame < 0 else frame]
            if not all(0 <= k < count for k in wanted):
                return [], count
            limit = _stack_limit(Image) if frame is None else None
            width, height = img.size
            _check_stack(file, count * width * height, count, limit, True)
            out = []
            total = 0
            for k in wanted:
                if k != img.tell():
                    img.seek(k)
                width, height = img.size
                total += width * height
                _check_stack(file, total, count, limit, False)
                out.append(_frame_pixels(img))
            return out, count
    except ImageFileError:
        raise
    except OSError as e:
        if e.errno is not None:
            raise
        raise _file_error(file, e, fmt) from e
    except MemoryError:
        raise
    except Exception as e:  # decoders raise SyntaxError, EOFError, ValueError, struct.error, ...
        raise _file_error(file, e, fmt) from e


# The first bytes of common formats: what names the format of a file Pillow cannot open.
_SIGNATURES = ((b"\x89PNG\r\n\x1a\n", "PNG"), (b"\xff\xd8\xff", "JPEG"), (b"GIF87a", "GIF"),
               (b"GIF89a", "GIF"), (b"II*\x00", "TIFF"), (b"MM\x00*", "TIFF"), (b"BM", "BMP"),
               (b"\x00\x00\x01\x00", "ICO"), (b"8BPS", "PSD"), (b"qoif", "QOI"))


def _head(file: Any) -> bytes | None:
    """The file's first 16 bytes (None when they cannot be read); a file object keeps its
    position."""
    try:
        if isinstance(file, (str, bytes, os.PathLike)):
            with open(file, "rb") as f:
                return f.read(16)
        pos = file.tell()
        try:
            file.seek(0)
            head = file.read(16)
        finally:
            file.seek(pos)
        return bytes(head) if isinstance(head, (bytes, bytearray, memoryview)) else None
    except Exception:  # unreadable, unseekable, closed: say less, never fail here
        return None


def _sniff(head: bytes | None) -> str | None:
    """The format named by a file's first bytes, None when none matches."""
    if not head:
        return None
    if head[:4] == b"RIFF" and len(head) > 8 and b"WEBP".startswith(head[8:12]):
        return "WEBP"
    for magic, fmt in _SIGNATURES:
        if head.startswith(magic):
            return fmt
    return None


def _what_is_wrong(file: Any, cause: BaseException, fmt: str | None) -> str:
    """What an ImageFileError says about the file: empty, not an image, truncated, corrupt."""
    Image = sys.modules.get("PIL.Image")
    if Image is not None and isinstance(cause, getattr(Image, "DecompressionBombError", ())):
        return f"too many pixels for one image ({cause})"
    head = _head(file)
    if head == b"":
        return "not an image file (it is empty)"
    unidentified = Image is not None and isinstance(cause, Image.UnidentifiedImageError)
    fmt = fmt or _sniff(head)
    if fmt is None:
        return ("not an image file (its contents match no format Pillow reads)" if unidentified
                else f"not a readable image file ({type(cause).__name__}: {cause})")
    if unidentified:  # the signature is there, the header behind it is not
        return f"truncated or corrupt {fmt} file (its header cannot be read)"
    text = str(cause)
    broken = "truncated" if isinstance(cause, EOFError) or "truncat" in text.lower() else "corrupt"
    return f"{broken} {fmt} file ({type(cause).__name__}: {text})"


def _file_error(file: Any, cause: BaseException | None, fmt: str | None,
                what: str | None = None) -> ImageFileError:
    """ImageFileError for `file`: "imread: cannot read '<path>': <what is wrong>"."""
    if what is None:
        what = _what_is_wrong(file, cause, fmt) if cause is not None else "unreadable"
    err = ImageFileError(f"imread: cannot read {_describe(file)}: {what}")
    err.strerror = str(err)
    if isinstance(file, (str, bytes, os.PathLike)):
        err.filename = os.fsdecode(os.fspath(file))
    else:
        err.filename = getattr(file, "name", None)
    return err


# ---- writing ----

# Formats that store 16-bit grayscale through Pillow (and read back as 16-bit).
_SIXTEEN_BIT_FORMATS = ("PNG", "TIFF")
_FORMAT_ALIASES = {"JPG": "JPEG", "TIF": "TIFF"}


def _save_format(file: Any, format: str | None, Image: Any) -> str:
    """Pillow's format name: `format`, else the one the file name's extension registers."""
    if format is not None:
        if not isinstance(format, str):
            raise TypeError(f"imwrite: format must be a str, got {type(format).__name__}")
        fmt = _FORMAT_ALIASES.get(format.upper(), format.upper())
        if fmt not in Image.SAVE:
            raise ValueError(f"imwrite: Pillow cannot write the format {format!r} "
                             f"(it writes {', '.join(sorted(Image.SAVE))})")
        return fmt
    if not isinstance(file, (str, bytes, os.PathLike)):
        raise ValueError("imwrite: writing to a file object needs format= (e.g. format='png')")
    ext = os.path.splitext(os.fsdecode(os.fspath(file)))[1].lower()
    fmt = Image.registered_extensions().get(ext)
    if fmt is None or fmt not in Image.SAVE:
        raise ValueError(f"imwrite: cannot tell an image format Pillow writes from the name "
                         f"{_describe(file)} (extension {ext or 'none'!r}); use .png, .tif, "
                         ".jpg, ... or pass format=")
    return fmt

