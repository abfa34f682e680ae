"""Image files and display: ``q.imread``, ``q.imwrite`` (Pillow) and ``q.imshow`` (matplotlib).

The PyQuasar manual's image functions (docs/images.md):

    img = q.imread("lena_big.tif")       # float32 (the `scalar` dtype), H x W x 3, 0..255
    q.imwrite("out.png", img * 0.5)      # rounded and clipped to 8 bits; format from the name
    im = q.imshow(img)                   # a matplotlib AxesImage; never blocks on Agg

Pillow and matplotlib are optional: they are imported on first use, and a missing one raises
ModuleNotFoundError naming what to ``pip install`` (Note [optional imaging dependencies]).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _isthmus
from ._image_files import (_LAYOUTS, _MODES, _SIXTEEN_BIT_FORMATS, ImageFileError, _check_file,
                           _decode, _decoded, _describe, _pil, _read_dtype, _save_format)
from ._image_values import _display_range, _host_pixels, _levels

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


def _pyplot() -> Any:
    """matplotlib.pyplot, or ModuleNotFoundError saying that imshow needs matplotlib."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ModuleNotFoundError(
            f"q.imshow needs matplotlib, which could not be imported ({e}); "
            "install it with: pip install matplotlib", name="matplotlib") from e
    return plt



# ---- reading ----


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

# ---- writing ----


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

