# q.imread / q.imwrite (Pillow) and q.imshow (matplotlib): round trips, value rules, errors.
import importlib.util
import io
import os
import sys

os.environ.setdefault("MPLBACKEND", "Agg")  # never a window, never a blocking show

import numpy as np
import pytest

import isthmus as q

HAVE_PIL = importlib.util.find_spec("PIL") is not None
HAVE_MPL = importlib.util.find_spec("matplotlib") is not None
needs_pil = pytest.mark.skipif(not HAVE_PIL, reason="Pillow is not installed")
needs_mpl = pytest.mark.skipif(not HAVE_MPL, reason="matplotlib is not installed")

RNG = np.random.default_rng(16)
CHANNELS = {"L": None, "L1": 1, "LA": 2, "RGB": 3, "RGBA": 4}


def random_image(layout, dtype, h=13, w=17, lo=0.0, hi=255.0):
    """A random image of a layout ("L" 2-D, "L1" (H, W, 1), "LA", "RGB", "RGBA")."""
    c = CHANNELS[layout]
    shape = (h, w) if c is None else (h, w, c)
    v = RNG.uniform(lo, hi, size=shape)
    if np.dtype(dtype).kind in "iu":
        return np.rint(v).astype(dtype)
    return v.astype(dtype)


def levels8(x):
    """The 8-bit levels imwrite must store for values on the 0..255 scale (NumPy's rint)."""
    x = np.asarray(x)
    if x.dtype == np.uint16:
        return np.rint(x / 257.0).astype(np.uint8)
    return np.clip(np.rint(x.astype(np.float64)), 0, 255).astype(np.uint8)


def pil_levels(path):
    from PIL import Image

    with Image.open(path) as im:
        return np.asarray(im)


@pytest.fixture
def plt():
    if not HAVE_MPL:
        pytest.skip("matplotlib is not installed")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")


# ---- round trips ----


@needs_pil
@pytest.mark.parametrize("ext", [".png", ".tif"])
@pytest.mark.parametrize("layout", list(CHANNELS))
@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.float64, np.int64])
def test_lossless_round_trip(tmp_path, ext, layout, dtype):
    img = random_image(layout, dtype)
    before = img.copy()
    path = tmp_path / f"img{ext}"
    q.imwrite(path, img)
    back = q.imread(path)
    expected = levels8(img)
    if layout == "L1":
        expected = expected[..., 0]  # one channel reads back as a 2-D gray image
    assert isinstance(back, q.qvalue)
    assert back.dtype == q.value(0.0).dtype == np.float32  # the `scalar` dtype
    assert back.shape == expected.shape
    np.testing.assert_array_equal(np.asarray(back), expected.astype(np.float32))
    np.testing.assert_array_equal(np.asarray(q.imread(path, dtype="uint8")), expected)
    np.testing.assert_array_equal(pil_levels(path), expected)  # what other readers see
    np.testing.assert_array_equal(img, before)  # the input is untouched


@needs_pil
@pytest.mark.parametrize("layout", ["L", "RGB"])
def test_jpeg_round_trip_within_tolerance(tmp_path, layout):
    # a smooth picture: JPEG's error stays small
    yy, xx = np.mgrid[0:32, 0:48].astype(np.float64)
    gray = 128 + 90 * np.sin(xx / 9) * np.cos(yy / 7)
    img = gray if layout == "L" else np.stack([gray, 255 - gray, xx * 5], axis=-1)
    img = q.value(img.astype(np.float32))
    path = tmp_path / "img.jpg"
    q.imwrite(path, img, quality=95)
    back = np.asarray(q.imread(path))
    assert back.shape == img.shape
    err = np.abs(back - levels8(img).astype(np.float32))
    assert err.mean() < 2.0 and err.max() < 24, (err.mean(), err.max())


@needs_pil
@pytest.mark.parametrize("ext", [".png", ".tiff"])
def test_sixteen_bit_round_trip(tmp_path, ext):
    path = tmp_path / f"img{ext}"
    raw = RNG.integers(0, 65536, size=(11, 9), dtype=np.uint16)
    q.imwrite(path, raw, bits=16)
    assert pil_levels(path).dtype == np.uint16
    np.testing.assert_array_equal(np.asarray(q.imread(path, dtype="uint16")), raw)
    # default: the scalar dtype on the 0..255 scale, precision kept in the fraction
    np.testing.assert_allclose(np.asarray(q.imread(path)), raw * (255 / 65535), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(q.imread(path, dtype="float64")), raw * (255 / 65535),
                               rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(q.imread(path, dtype="uint8")),
                                  np.rint(raw / 257.0).astype(np.uint8))
    # floats on 0..255 keep 1/257 of a level
    f = RNG.uniform(-5, 260, size=(11, 9)).astype(np.float64)
    q.imwrite(path, f, bits=16)
    expected = np.clip(np.rint(f * 257.0), 0, 65535)
    np.testing.assert_array_equal(pil_levels(path), expected)
    np.testing.assert_allclose(np.asarray(q.imread(path, dtype="float64")),
                               expected * (255 / 65535), rtol=1e-12)
    # 8-bit levels become 16-bit ones by * 257 (255 -> 65535)
    u8 = RNG.integers(0, 256, size=(11, 9), dtype=np.uint8)
    q.imwrite(path, u8, bits=16)
    np.testing.assert_array_equal(pil_levels(path), u8.astype(np.uint16) * 257)


@needs_pil
def test_uint16_values_write_on_their_own_scale_at_8_bits(tmp_path):
    raw = RNG.integers(0, 65536, size=(6, 7, 3), dtype=np.uint16)
    q.imwrite(tmp_path / "a.png", raw)
    np.testing.assert_array_equal(pil_levels(tmp_path / "a.png"), levels8(raw))


@needs_pil
def test_non_contiguous_and_foreign_inputs(tmp_path):
    base = RNG.uniform(0, 255, size=(20, 30, 4)).astype(np.float32)
    views = {
        "numpy strided": base[::2, ::-3, :3],
        "numpy transposed": base[..., 0].T,
        "qvalue strided": q.value(base)[1::3, ::2, 1:],
        "qvalue permuted": q.value(base).permute(1, 0, 2),
        "list": np.rint(base[:3, :4, 0]).astype(int).tolist(),
    }
    for name, img in views.items():
        path = tmp_path / "v.png"
        q.imwrite(path, img)
        expected = levels8(np.asarray(img) if not isinstance(img, list) else np.array(img))
        np.testing.assert_array_equal(np.asarray(q.imread(path, dtype="uint8")), expected,
                                      err_msg=name)


@needs_pil
def test_torch_tensor_input(tmp_path):
    torch = pytest.importorskip("torch")
    t = torch.rand(8, 5, 3) * 255
    q.imwrite(tmp_path / "t.png", t[:, ::2])
    np.testing.assert_array_equal(pil_levels(tmp_path / "t.png"), levels8(t[:, ::2].numpy()))


@needs_pil
def test_file_objects(tmp_path):
    img = random_image("RGB", np.uint8)
    buf = io.BytesIO()
    q.imwrite(buf, img, format="png")
    buf.seek(0)
    np.testing.assert_array_equal(np.asarray(q.imread(buf, dtype="uint8")), img)
    with pytest.raises(ValueError, match="format="):
        q.imwrite(io.BytesIO(), img)
    # format= overrides the extension, and takes the usual aliases
    q.imwrite(tmp_path / "no_extension", img, format="tif")
    np.testing.assert_array_equal(pil_levels(tmp_path / "no_extension"), img)


# ---- the value rules (Note [image values]) ----


@needs_pil
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_floats_round_to_nearest_even_and_clip(tmp_path, dtype):
    special = np.array([-6e4, -np.inf, -0.5, 0.49, 0.5, 1.5, 2.5, 127.5, 254.5, 255.4, 255.6,
                        300, np.inf], dtype=dtype)
    img = np.concatenate([special, RNG.uniform(-50, 300, size=51).astype(dtype)]).reshape(8, 8)
    q.imwrite(tmp_path / "c.png", img)
    stored = pil_levels(tmp_path / "c.png")
    np.testing.assert_array_equal(stored, np.clip(np.rint(img.astype(np.float64)), 0, 255))
    # ties go to the even level, infinities to the ends
    assert list(stored.ravel()[:13]) == [0, 0, 0, 0, 0, 2, 2, 128, 254, 255, 255, 255, 255]


@needs_pil
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint32, np.uint64])
def test_integers_are_levels_on_0_255_and_clip(tmp_path, dtype):
    info = np.iinfo(dtype)
    img = RNG.integers(max(info.min, -1000), min(info.max, 1000), size=(9, 10), dtype=dtype)
    img.ravel()[:2] = [info.min, info.max]
    q.imwrite(tmp_path / "i.png", img)
    np.testing.assert_array_equal(pil_levels(tmp_path / "i.png"), np.clip(img, 0, 255))


@needs_pil
def test_bool_is_black_and_white(tmp_path):
    mask = RNG.random((7, 8)) > 0.5
    q.imwrite(tmp_path / "b.png", q.value(mask))
    np.testing.assert_array_equal(pil_levels(tmp_path / "b.png"), mask * 255)


@needs_pil
def test_nan_is_refused_and_nothing_is_written(tmp_path):
    img = RNG.uniform(0, 255, size=(6, 6, 3)).astype(np.float32)
    img[2, 3, 1] = np.nan
    before = img.copy()
    with pytest.raises(ValueError, match=r"1 NaN value.*\(2, 3, 1\)"):
        q.imwrite(tmp_path / "n.png", img)
    assert not (tmp_path / "n.png").exists()
    np.testing.assert_array_equal(img, before)


# ---- reading: layouts, modes, dtypes, frames ----


@needs_pil
def test_mode_conversions(tmp_path):
    rgba = random_image("RGBA", np.uint8)
    q.imwrite(tmp_path / "a.png", rgba)
    f = rgba.astype(np.float32)
    luma = f[..., 0] * 0.299 + f[..., 1] * 0.587 + f[..., 2] * 0.114
    path = tmp_path / "a.png"
    np.testing.assert_allclose(np.asarray(q.imread(path, "L")), luma, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(q.imread(path, "RGB")), f[..., :3])
    np.testing.assert_allclose(np.asarray(q.imread(path, "LA")),
                               np.stack([luma, f[..., 3]], axis=-1), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(q.imread(path, "L", dtype="uint8")),
                                  np.rint(luma).astype(np.uint8))
    gray = random_image("L", np.uint8)
    q.imwrite(tmp_path / "g.png", gray)
    rgb = np.asarray(q.imread(tmp_path / "g.png", mode="RGB"))
    assert rgb.shape == gray.shape + (3,)
    for c in range(3):
        np.testing.assert_array_equal(rgb[..., c], gray)
    gray_rgba = np.asarray(q.imread(tmp_path / "g.png", mode="RGBA", dtype="uint16"))
    np.testing.assert_array_equal(gray_rgba[..., 3], 65535)  # opaque, on uint16's scale
    np.testing.assert_array_equal(gray_rgba[..., 0], gray.astype(np.uint16) * 257)


@needs_pil
def test_result_dtypes(tmp_path):
    img = random_image("RGB", np.uint8)
    q.imwrite(tmp_path / "a.png", img)
    for dtype in ("float16", "float32", "float64", np.float64):
        back = q.imread(tmp_path / "a.png", dtype=dtype)
        assert back.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(np.asarray(back), img.astype(dtype))
    bf = q.imread(tmp_path / "a.png", dtype="bfloat16")
    assert bf.dtype == "bfloat16"
    np.testing.assert_array_equal(np.asarray(bf.astype("float32")), img)  # levels are exact
    assert q.imread(tmp_path / "a.png").kind == "tensor"


@needs_pil
def test_palette_bilevel_cmyk_and_float_files(tmp_path):
    from PIL import Image

    rgb = random_image("RGB", np.uint8)
    pal = Image.fromarray(rgb).convert("P")
    pal.save(tmp_path / "p.png")
    np.testing.assert_array_equal(np.asarray(q.imread(tmp_path / "p.png", dtype="uint8")),
                                  np.asarray(pal.convert("RGB")))
    pal.save(tmp_path / "pt.png", transparency=0)  # palette entry 0 transparent
    back = np.asarray(q.imread(tmp_path / "pt.png", dtype="uint8"))
    assert back.shape == rgb.shape[:2] + (4,)
    np.testing.assert_array_equal(back, np.asarray(Image.open(tmp_path / "pt.png").convert("RGBA")))

    bits = Image.fromarray(random_image("L", np.uint8)).convert("1")
    bits.save(tmp_path / "b.png")
    back = np.asarray(q.imread(tmp_path / "b.png", dtype="uint8"))
    np.testing.assert_array_equal(back, np.asarray(bits.convert("L")))
    assert set(np.unique(back)) <= {0, 255}

    cmyk = Image.fromarray(rgb).convert("CMYK")
    cmyk.save(tmp_path / "c.tif")
    np.testing.assert_array_equal(np.asarray(q.imread(tmp_path / "c.tif", dtype="uint8")),
                                  np.asarray(Image.open(tmp_path / "c.tif").convert("RGB")))

    values = RNG.normal(0, 1000, size=(5, 6)).astype(np.float32)
    Image.fromarray(values).save(tmp_path / "f.tif")
    np.testing.assert_array_equal(np.asarray(q.imread(tmp_path / "f.tif")), values)  # unscaled
    with pytest.raises(ValueError, match="floating-point image"):
        q.imread(tmp_path / "f.tif", dtype="uint8")

    sixteen = RNG.integers(0, 65536, size=(5, 6), dtype=np.uint16)
    Image.fromarray(sixteen).save(tmp_path / "s.pgm")  # Pillow opens 16-bit PGM as mode I
    assert Image.open(tmp_path / "s.pgm").mode == "I"
    np.testing.assert_array_equal(np.asarray(q.imread(tmp_path / "s.pgm", dtype="uint16")), sixteen)


@needs_pil
def test_multi_frame_files(tmp_path):
    from PIL import Image

    frames = [random_image("RGB", np.uint8) for _ in range(3)]
    pics = [Image.fromarray(f) for f in frames]
    pics[0].save(tmp_path / "m.tif", save_all=True, append_images=pics[1:])
    path = tmp_path / "m.tif"
    for k in (0, 1, 2, -1, -3):
        np.testing.assert_array_equal(np.asarray(q.imread(path, frame=k, dtype="uint8")),
                                      frames[k])
    stack = q.imread(path, frame=None)
    assert stack.shape == (3,) + frames[0].shape and stack.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(stack), np.stack(frames))
    for k in (3, -4):
        with pytest.raises(IndexError, match="has 3 frames"):
            q.imread(path, frame=k)
    with pytest.raises(TypeError, match="frame"):
        q.imread(path, frame=1.0)
    # a gray frame among colour ones: the stack is colour
    mixed = [Image.fromarray(frames[0]), Image.fromarray(frames[1][..., 0])]
    mixed[0].save(tmp_path / "mixed.tif", save_all=True, append_images=mixed[1:])
    stack = np.asarray(q.imread(tmp_path / "mixed.tif", frame=None, dtype="uint8"))
    np.testing.assert_array_equal(stack[1], np.repeat(frames[1][..., :1], 3, axis=-1))
    # frames of different sizes cannot stack
    sizes = [Image.fromarray(frames[0]), Image.fromarray(frames[1][:5])]
    sizes[0].save(tmp_path / "sizes.tif", save_all=True, append_images=sizes[1:])
    with pytest.raises(ValueError, match="differ in size"):
        q.imread(tmp_path / "sizes.tif", frame=None)
    np.testing.assert_array_equal(np.asarray(q.imread(tmp_path / "sizes.tif", frame=1,
                                                      dtype="uint8")), frames[1][:5])


@needs_pil
def test_gif_frames(tmp_path):
    from PIL import Image

    frames = [np.full((4, 5, 3), 40 * k, np.uint8) for k in range(3)]
    pics = [Image.fromarray(f) for f in frames]
    pics[0].save(tmp_path / "m.gif", save_all=True, append_images=pics[1:])
    stack = np.asarray(q.imread(tmp_path / "m.gif", frame=None, dtype="uint8"))
    np.testing.assert_array_equal(stack, np.stack(frames))


@needs_pil
def test_scalar_precision_and_init(run_python, tmp_path):
    img = random_image("RGB", np.uint8)
    q.imwrite(tmp_path / "a.png", img)
    np.save(tmp_path / "a.npy", img)
    run_python(f"""
        import os
        import numpy as np
        import isthmus as q
        os.chdir({str(tmp_path)!r})
        for call in (lambda: q.imread("a.png"), lambda: q.imwrite("b.png", np.zeros((2, 2)))):
            try:
                call()
            except RuntimeError as e:
                assert "init" in str(e), e
            else:
                raise AssertionError("no error before init()")
        assert not os.path.exists("b.png")
        q.init("cpu", precision="float64")
        img = q.imread("a.png")  # the `scalar` dtype is float64 now
        assert img.dtype == np.float64, img.dtype
        assert np.array_equal(np.asarray(img), np.load("a.npy"))
    """)


# ---- errors ----


@needs_pil
def test_read_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        q.imread(tmp_path / "missing.png")
    junk = tmp_path / "junk.png"
    junk.write_bytes(b"this is not an image")
    with pytest.raises(q.ImageFileError, match="junk.png") as info:
        q.imread(junk)
    assert isinstance(info.value, OSError) and info.value.filename == str(junk)
    empty = tmp_path / "empty.tif"
    empty.write_bytes(b"")
    with pytest.raises(q.ImageFileError, match="empty.tif"):
        q.imread(empty)
    # a PNG cut in half: the header reads, the pixels do not
    q.imwrite(tmp_path / "full.png", random_image("RGB", np.uint8, h=64, w=64))
    data = (tmp_path / "full.png").read_bytes()
    (tmp_path / "cut.png").write_bytes(data[: len(data) // 2])
    with pytest.raises(q.ImageFileError, match="cut.png"):
        q.imread(tmp_path / "cut.png")
    with pytest.raises(IsADirectoryError):
        q.imread(tmp_path)
    good = tmp_path / "full.png"
    with pytest.raises(ValueError, match="mode"):
        q.imread(good, mode="CMYK")
    with pytest.raises(TypeError, match="dtype"):
        q.imread(good, dtype="int32")
    with pytest.raises(TypeError, match="dtype"):
        q.imread(good, dtype="complex64")
    with pytest.raises((TypeError, ValueError)):
        q.imread(good, dtype="no such dtype")
    with pytest.raises(TypeError, match="path or a binary file"):
        q.imread(42)
    assert q.imread(good).shape == (64, 64, 3)  # still works


@needs_pil
def test_write_errors_leave_nothing_behind(tmp_path):
    img = random_image("RGB", np.float32)
    before = img.copy()
    bad = [
        (ValueError, "shape", np.zeros((4, 5, 5))),
        (ValueError, "shape", np.zeros(7)),
        (ValueError, "shape", np.zeros((2, 3, 4, 3))),
        (ValueError, "empty", np.zeros((0, 5, 3))),
        (TypeError, "scalar", q.value(3.0)),
        (TypeError, "string", q.value("text")),
        (TypeError, "cell", q.value(["a", q.zeros(3)])),
        (TypeError, "complex", np.ones((3, 3), np.complex64)),
    ]
    for exc, match, value in bad:
        with pytest.raises(exc, match=match):
            q.imwrite(tmp_path / "x.png", value)
    with pytest.raises(ValueError, match="bits"):
        q.imwrite(tmp_path / "x.png", img, bits=12)
    with pytest.raises(ValueError, match="bits"):
        q.imwrite(tmp_path / "x.png", img, bits=True)
    with pytest.raises(ValueError, match="16-bit colour"):
        q.imwrite(tmp_path / "x.png", img, bits=16)
    with pytest.raises(ValueError, match="grayscale PNG or TIFF"):
        q.imwrite(tmp_path / "x.jpg", img[..., 0], bits=16)
    with pytest.raises(ValueError, match="extension"):
        q.imwrite(tmp_path / "x.unknown", img)
    with pytest.raises(ValueError, match="extension"):
        q.imwrite(tmp_path / "noext", img)
    with pytest.raises(ValueError, match="format"):
        q.imwrite(tmp_path / "x.png", img, format="nosuchformat")
    with pytest.raises(TypeError, match="format"):
        q.imwrite(tmp_path / "x.png", img, format=3)
    with pytest.raises(TypeError, match="path or a binary file"):
        q.imwrite(3.5, img)
    rgba = random_image("RGBA", np.uint8)
    with pytest.raises(ValueError, match="JPEG format cannot store a RGBA"):
        q.imwrite(tmp_path / "x.jpg", rgba)
    with pytest.raises(ValueError, match="cannot store a LA"):
        q.imwrite(tmp_path / "x.jpg", rgba[..., 2:])
    with pytest.raises(FileNotFoundError):
        q.imwrite(tmp_path / "no_such_dir" / "x.png", img)
    assert sorted(os.listdir(tmp_path)) == []
    np.testing.assert_array_equal(img, before)
    q.imwrite(tmp_path / "x.png", img)  # still works
    assert (tmp_path / "x.png").exists()


# ---- optional dependencies (Note [optional imaging dependencies]) ----


def test_import_needs_neither_pillow_nor_matplotlib(run_python):
    run_python("""
        import sys
        import isthmus as q
        assert "PIL" not in sys.modules and "matplotlib" not in sys.modules, sorted(sys.modules)
        assert callable(q.imread) and callable(q.imwrite) and callable(q.imshow)
    """)


def test_missing_pillow_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "PIL", None)
    monkeypatch.setitem(sys.modules, "PIL.Image", None)
    for call in (lambda: q.imread(tmp_path / "a.png"),
                 lambda: q.imwrite(tmp_path / "a.png", np.zeros((2, 2)))):
        with pytest.raises(ModuleNotFoundError, match="pip install pillow") as info:
            call()
        assert isinstance(info.value, ImportError) and info.value.name == "PIL"
    assert not (tmp_path / "a.png").exists()


def test_missing_matplotlib_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ModuleNotFoundError, match="pip install matplotlib") as info:
        q.imshow(np.zeros((2, 2)))
    assert info.value.name == "matplotlib"


# ---- imshow ----


@needs_mpl
def test_imshow_gray_keeps_values_and_range(plt):
    img = q.value(random_image("L", np.float32, lo=-20, hi=300))
    im = q.imshow(img)
    from matplotlib.image import AxesImage

    assert isinstance(im, AxesImage) and im.figure is not None and im.axes is not None
    np.testing.assert_array_equal(np.asarray(im.get_array()), np.asarray(img))
    assert im.get_clim() == (0.0, 255.0) and im.get_cmap().name == "gray"
    assert im.get_interpolation() == "nearest"
    a = np.asarray(img)
    assert q.imshow(img, "auto").get_clim() == (float(a.min()), float(a.max()))
    assert q.imshow(img, [10, 20]).get_clim() == (10.0, 20.0)
    assert q.imshow(img, range=q.value([-1.0, 1.0]), cmap="viridis").get_cmap().name == "viridis"
    one = q.imshow(a[..., None])  # (H, W, 1) shows as gray
    np.testing.assert_array_equal(np.asarray(one.get_array()), a)
    sixteen = q.imshow(RNG.integers(0, 65536, size=(4, 4), dtype=np.uint16))
    assert sixteen.get_clim() == (0.0, 65535.0)


@needs_mpl
def test_imshow_nan_is_masked_in_gray(plt):
    img = random_image("L", np.float64)
    img[1, 2] = np.nan
    im = q.imshow(img, "auto")
    arr = im.get_array()
    assert np.ma.is_masked(arr) and arr.mask[1, 2] and arr.mask.sum() == 1
    finite = img[np.isfinite(img)]
    assert im.get_clim() == (finite.min(), finite.max())


@needs_mpl
@pytest.mark.parametrize("layout", ["LA", "RGB", "RGBA"])
def test_imshow_colour_maps_range_to_unit(plt, layout):
    img = random_image(layout, np.float32, lo=-30, hi=290)
    img.flat[5] = np.nan
    for rng, (lo, hi) in [(None, (0, 255)), ((50, 100), (50, 100))]:
        im = q.imshow(q.value(img)[:, ::-1], rng)
        src = img[:, ::-1].astype(np.float64)
        if layout == "LA":
            src = src[..., [0, 0, 0, 1]]
        expected = np.clip(np.nan_to_num((src - lo) / (hi - lo), nan=0.0), 0, 1)
        np.testing.assert_allclose(np.asarray(im.get_array()), expected)


@needs_mpl
def test_imshow_draws_into_given_axes_and_never_blocks(plt, monkeypatch):
    fig, ax = plt.subplots()
    shows = []
    monkeypatch.setattr(plt, "show", lambda *a, **k: shows.append(k))
    im = q.imshow(random_image("RGB", np.uint8), ax=ax, title="seed", block=True)
    assert im.axes is ax and ax.get_title() == "seed" and shows == []  # Agg: no show
    fig.canvas.draw()  # renders
    # on a screen backend it shows without blocking, unless block=True
    from isthmus import images

    monkeypatch.setattr(images, "_interactive_backend", lambda plt: True)
    q.imshow(random_image("L", np.uint8))
    q.imshow(random_image("L", np.uint8), block=True)
    assert shows == [{"block": False}, {"block": True}]


@needs_mpl
def test_imshow_errors(plt):
    n = len(plt.get_fignums())
    img = random_image("RGB", np.float32)
    for bad, exc in [((5, 5), ValueError), ((5, 1), ValueError), ((1, 2, 3), ValueError),
                     ((np.nan, 1), ValueError), ("full", ValueError), (object(), TypeError)]:
        with pytest.raises(exc, match="range"):
            q.imshow(img, bad)
    with pytest.raises(ValueError, match="shape"):
        q.imshow(np.zeros((3, 3, 6)))
    with pytest.raises(TypeError, match="string"):
        q.imshow(q.value("x"))
    with pytest.raises(TypeError, match="block"):
        q.imshow(img, block=1)
    assert len(plt.get_fignums()) == n  # a refused call makes no figure


# ---- device values ----


@needs_pil
@pytest.mark.skipif(not q.cuda_available(), reason="needs a CUDA device")
def test_cuda_values_are_copied_to_the_host(tmp_path):
    img = random_image("RGB", np.float32)
    g = q.to(img, "cuda", copy=True)
    assert g.device.startswith("cuda")
    q.imwrite(tmp_path / "g.png", g)
    # read through a host copy (then valid on both, so .device names the default device), not
    # moved or pinned to the host
    assert g._pinned_to() == -1
    np.testing.assert_array_equal(pil_levels(tmp_path / "g.png"), levels8(img))


@needs_mpl
def test_run_gui_waits_for_windows_only_where_they_can_open(plt, monkeypatch):
    shows = []
    monkeypatch.setattr(plt, "show", lambda *a, **k: shows.append(k))
    from isthmus import images

    q.run_gui()  # no figure: returns at once
    q.imshow(random_image("RGB", np.uint8))
    q.run_gui()  # Agg: no window can open, returns at once
    assert shows == []
    monkeypatch.setattr(images, "_interactive_backend", lambda plt: True)
    q.run_gui()  # a screen backend with a figure open: the event loop until windows close
    assert shows == [{"block": True}]
    plt.close("all")
    q.run_gui()  # every window closed: nothing to wait for
    assert shows == [{"block": True}]
    assert "run_gui" in q.__all__ and q.run_gui is images.run_gui
