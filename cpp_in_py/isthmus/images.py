"""Image files and display: ``q.imread``, ``q.imwrite`` (Pillow) and ``q.imshow`` (matplotlib).

The PyQuasar manual's image functions (docs/images.md):

    img = q.imread("lena_big.tif")       # float32 (the `scalar` dtype), H x W x 3, 0..255
    q.imwrite("out.png", img * 0.5)      # rounded and clipped to 8 bits; format from the name
    im = q.imshow(img)                   # a matplotlib AxesImage; never blocks on Agg

Pillow and matplotlib are optional: they are imported on first use, and a missing one raises
ModuleNotFoundError naming what to ``pip install`` (Note [optional imaging dependencies]).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

from . import _isthmus

__all__ = ["ImageFileError", "imread", "imwrite", "imshow", "run_gui"]

# Note [image values]
# ~~~~~~~~~~~~~~~~~~~
# The PyQuasar manual reads an image with q.imread, mixes it with colours written as
# `[1, 0.2, 0] * 255` and shows the result with q.imshow: images are values on the 0..255 scale (255 is full
# intensity), in the `scalar` dtype (float32, or float64 under init(precision="float64")),
# as Quasar's imread returns them. So:
#
# - imread returns the `scalar` dtype on the 0..255 scale by default, whatever the file's bit
#   depth: a 16-bit file is scaled by 255/65535 (its precision kept in the fraction), an 8-bit
#   file is exact. dtype="uint8" / "uint16" return integer levels instead (0..255 / 0..65535).
# - Every dtype is on the 0..255 scale except uint16, which is on 0..65535: uint16 is the one
#   16-bit image dtype, and imread(dtype="uint16") must write back unchanged. Other integer
#   dtypes (int64 from q.value([...]), int32, ...) are levels on 0..255; bool is 0 or 255.
# - imwrite rounds to the nearest level (ties to even, NumPy's rint) and clips to the output's
#   range (0..255, or 0..65535 for bits=16); +inf and -inf clip to the ends; NaN has no level
#   and raises ValueError (replace it first: q.where(q.isnan(img), 0, img)).
# - imshow maps the range (default 0..255; 0..65535 for uint16) onto black..white.


# Note [optional imaging dependencies]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# `import isthmus` imports neither Pillow nor matplotlib: each function imports what it needs
# when called, so the package works (and imports fast) without them. When one is missing the
# call raises ModuleNotFoundError (an ImportError) whose message names the pip package;
# scripts/deps installs both, and pyproject.toml offers them as the extra `isthmus[images]`.


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


def _pyplot() -> Any:
    """matplotlib.pyplot, or ModuleNotFoundError saying that imshow needs matplotlib."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ModuleNotFoundError(
            f"q.imshow needs matplotlib, which could not be imported ({e}); "
            "install it with: pip install matplotlib", name="matplotlib") from e
    return plt


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


# Note [imread layouts]
# ~~~~~~~~~~~~~~~~~~~~~
# What imread returns for each kind of file, with mode=None (the file's own layout):
# grayscale (Pillow modes 1, L, I;16*, I, F) -> (H, W); gray + alpha (LA) -> (H, W, 2);
# colour (RGB, and CMYK/YCbCr/LAB/HSV converted by Pillow) -> (H, W, 3); RGBA -> (H, W, 4);
# palette images -> RGB, or RGBA when the palette has transparency. 16-bit grayscale (I;16*)
# and 32-bit integer (I) images are taken as 16-bit data (Pillow opens 16-bit PGM files as I,
# and Pillow before 10 opened 16-bit PNGs so), so 65535 is white; float (F) images have no white level and come
# back unscaled. Pillow reads 16-bit colour PNGs as 8-bit RGB. mode="L", "LA", "RGB" or "RGBA"
# converts after scaling, in floating point (luma weights 0.299, 0.587, 0.114; alpha dropped
# or made opaque). Multi-frame files (GIF, TIFF, APNG, WebP): frame=k reads frame k, and
# frame=None reads them all into an (N, H, W[, C]) stack in one layout (colour if any frame has
# colour, alpha if any has alpha); frames of different sizes raise ValueError. The EXIF
# orientation tag is not applied (the pixels come as stored), as NumPy-based readers do.


def imread(file: Any, mode: str | None = None, *, dtype: Any = None, frame: int | None = 0) -> Any:
    """Reads an image file into a new qvalue: (H, W) gray, (H, W, 3) RGB, (H, W, 4) RGBA, ...

    file: a path (str, bytes, os.PathLike) or a binary file object; the format comes from the
      file's contents. Pillow reads it (PNG, TIFF, JPEG, BMP, GIF, WebP, ...).
    mode: None keeps the file's channels (Note [imread layouts]); "L" (gray, 2-D), "LA",
      "RGB" or "RGBA" converts.
    dtype: None gives the `scalar` dtype (float32, or float64 after init(precision="float64"))
      with values on the 0..255 scale, as the PyQuasar manual's imread: 16-bit files are
      scaled by 255/65535, keeping their precision. Any float dtype does the same; "uint8" and "uint16"
      give integer levels (0..255, 0..65535). See Note [image values].
    frame: which frame of a multi-frame file (GIF, TIFF, ...), negative counting from the end;
      None stacks all frames into an (N, H, W[, C]) value, refused (ImageFileError) when the
      frames hold more than PIL.Image.MAX_IMAGE_PIXELS pixels in all (See Note [the pixel
      limit of a frame stack]).

    The result is an isthmus tensor of its own (not a view of a NumPy array), so on a CUDA
    session ops on it may run on the GPU. Raises FileNotFoundError for a missing file,
    ImageFileError (an OSError) naming the file and what is wrong with it (empty, not an
    image, truncated, corrupt, too many pixels) when it is not a readable image, IndexError
    for a frame out of range, ValueError/TypeError for bad arguments, and ModuleNotFoundError
    when Pillow is not installed.
    """
    Image = _pil("imread")
    _check_file(file, "imread", "read")
    if mode not in _MODES:
        raise ValueError(f"imread: mode must be None, 'L', 'LA', 'RGB' or 'RGBA', got {mode!r}")
    if frame is not None and (isinstance(frame, bool) or not isinstance(frame, (int, np.integer))):
        raise TypeError(f"imread: frame must be an int or None, got {type(frame).__name__}")
    dt = _read_dtype(dtype)
    name = _describe(file)
    frames, count = _decode(file, Image, None if frame is None else int(frame))
    if not frames:
        raise IndexError(f"imread: frame {frame} is out of range for {name}, which has "
                         f"{count} frame{'s' if count != 1 else ''}")
    if frame is not None:
        result = _decoded(*frames[0], mode, dt, name)
    else:
        sizes = sorted({f[0].shape[:2] for f in frames})
        if len(sizes) > 1:
            raise ValueError(f"imread: the frames of {name} differ in size ({sizes}); "
                             "read them one at a time with frame=k")
        if mode is None:  # the widest layout among the frames
            color = any(f[1] in ("RGB", "RGBA") for f in frames)
            alpha = any(f[1] in ("LA", "RGBA") for f in frames)
            mode = ("RGB" if color else "L") + ("A" if alpha else "")
        result = np.stack([_decoded(*f, mode, dt, name) for f in frames])
    # A copy into isthmus memory (see the docstring): q.value never wraps the NumPy array.
    return _isthmus.value(np.ascontiguousarray(result), dtype=dt)


# ---- values handed in (imwrite, imshow) ----


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


def imwrite(file: Any, img: Any, *, bits: int = 8, format: str | None = None,
            **options: Any) -> None:
    """Writes an image file: (H, W) or (H, W, 1) gray, (H, W, 2) gray + alpha, (H, W, 3) RGB,
    (H, W, 4) RGBA.

    file: a path (str, bytes, os.PathLike) whose extension picks the format (.png, .tif,
      .jpg, .bmp, .gif, .webp, ... anything Pillow writes), or a binary file object with format=.
    img: a qvalue or anything q.asvalue takes (NumPy arrays, torch tensors, ...), any strides.
      Values are on the 0..255 scale (uint16: 0..65535; bool: black/white), rounded to the
      nearest level (ties to even) and clipped; NaN raises ValueError (Note [image values]).
      A value on a GPU is copied to the host first, and is left unchanged.
    bits: 8, or 16 for 16-bit grayscale PNG or TIFF (Pillow writes no 16-bit colour images).
    format: Pillow's format name ("png", "jpeg", "tiff", ...), overriding the extension.
    options: passed to Pillow's Image.save (quality=95 for JPEG, compress_level=9 for PNG, ...).

    Raises TypeError for values that are not images (scalars, strings, cells, complex),
    ValueError for bad shapes, NaN, an unknown format, bits other than 8/16 or a layout the
    format cannot store (alpha in JPEG); FileNotFoundError when the folder does not exist;
    ModuleNotFoundError when Pillow is not installed. On any error no file is left behind.
    """
    Image = _pil("imwrite")
    _check_file(file, "imwrite", "write")
    if isinstance(bits, bool) or bits not in (8, 16):
        raise ValueError(f"imwrite: bits must be 8 or 16, got {bits!r}")
    arr = _host_pixels(img, "imwrite")
    fmt = _save_format(file, format, Image)
    channels = 1 if arr.ndim == 2 else arr.shape[2]
    if bits == 16 and (channels != 1 or fmt not in _SIXTEEN_BIT_FORMATS):
        raise ValueError(f"imwrite: bits=16 writes grayscale PNG or TIFF only (Pillow has no "
                         f"16-bit colour images); got {channels} channel(s) and format {fmt}")
    levels = _levels(arr, bits)
    if levels.ndim == 3 and channels == 1:
        levels = levels[..., 0]
    picture = Image.fromarray(np.ascontiguousarray(levels))
    try:
        picture.save(file, format=fmt, **options)
    except OSError as e:
        # Pillow says "cannot write mode RGBA as JPEG" (and removes the file it began)
        if e.errno is None and "cannot write mode" in str(e):
            raise ValueError(f"imwrite: the {fmt} format cannot store a {_LAYOUTS[channels]} "
                             f"image ({e}); drop the alpha channel (img[..., :3]) or pick "
                             "another format") from e
        raise


# ---- display ----


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


def _interactive_backend(plt: Any) -> bool:
    """Whether matplotlib's backend draws on screen (TkAgg, QtAgg, ...), not to files (Agg)."""
    backend = plt.get_backend().lower()
    try:
        from matplotlib.backends import BackendFilter, backend_registry
        files = backend_registry.list_builtin(BackendFilter.NON_INTERACTIVE)
    except ImportError:  # matplotlib < 3.9
        from matplotlib import rcsetup
        files = rcsetup.non_interactive_bk
    return backend not in {b.lower() for b in files}


def imshow(img: Any, range: Any = None, *, ax: Any = None, title: str | None = None,
           block: bool = False, **kwargs: Any) -> Any:
    """Shows an image with matplotlib and returns the ``AxesImage`` (``.axes``, ``.figure``).

    img: (H, W) or (H, W, 1) gray (the "gray" colormap unless cmap= says otherwise), (H, W, 2)
      gray + alpha, (H, W, 3) RGB or (H, W, 4) RGBA; a qvalue or anything q.asvalue takes.
    range: the values shown as black and white: None for the PyQuasar manual's 0..255
      (0..65535 for uint16), "auto" for the image's finite minimum and maximum, or a pair (low, high), as
      the manual's imshow(img, [low, high]). Gray images keep their values (the artist's data is
      the image; NaN shows in the colormap's "bad" colour); colour images are mapped to 0..1
      and clipped (NaN shows black), since matplotlib takes colour as 0..1.
    ax: the matplotlib Axes to draw in; by default a new pyplot figure, axes hidden.
    title: the axes' title.
    block: on an interactive backend the figures are shown at once, with plt.show(block=block):
      False returns immediately, True waits until the windows are closed, as q.run_gui()
      does. On a non-interactive backend (Agg, on machines without a display and in
      tests) nothing is shown and nothing blocks: save with ``im.figure.savefig(path)``.
    kwargs: passed to Axes.imshow (interpolation defaults to "nearest": one square per pixel).

    Raises TypeError/ValueError for values that are not images and for a bad range,
    ModuleNotFoundError when matplotlib is not installed.
    """
    plt = _pyplot()
    if not isinstance(block, bool):
        raise TypeError(f"imshow: block must be True or False, got {type(block).__name__}")
    arr = _host_pixels(img, "imshow")
    lo, hi = _display_range(range, arr)
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[..., 0]
    if arr.dtype == np.float16:  # matplotlib's resampling takes float32 and float64
        arr = arr.astype(np.float32)
    kwargs.setdefault("interpolation", "nearest")
    if arr.ndim == 2:
        kwargs.setdefault("cmap", "gray")
        data, kwargs["vmin"], kwargs["vmax"] = arr, lo, hi
    else:
        if arr.shape[2] == 2:  # gray + alpha as RGBA
            arr = arr[..., [0, 0, 0, 1]]
        data = (arr.astype(np.float64) - lo) / (hi - lo)
        data = np.clip(np.nan_to_num(data, nan=0.0), 0.0, 1.0)
    if ax is None:
        ax = plt.figure().add_subplot()
        ax.set_axis_off()
    image = ax.imshow(data, **kwargs)
    if title is not None:
        ax.set_title(title)
    if _interactive_backend(plt):
        plt.show(block=block)
    return image


def run_gui() -> None:
    """Runs the GUI event loop until every open image window is closed, then returns.

    The PyQuasar manual ends its examples with ``q.imshow(img); q.run_gui()``: imshow draws (and,
    with ``block=False``, returns at once), run_gui waits for the user. It returns at once where
    no window can open or none is open: a non-interactive matplotlib backend (Agg, the default on
    machines without a display and in tests; save with ``im.figure.savefig(path)``) or no
    figure. Raises ModuleNotFoundError when matplotlib is not installed.
    """
    plt = _pyplot()
    if not plt.get_fignums() or not _interactive_backend(plt):
        return
    plt.show(block=True)

