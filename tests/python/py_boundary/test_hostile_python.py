# Hostile inputs on the Python side: NumPy's protocols, the array API namespace, images, errors.
import copy
import io
import math
import pickle
import re
import warnings

import numpy as np
import pytest

import isthmus as q
import isthmus.array_api as xp

from conftest import BUILD_DIR

try:
    from PIL import Image
except ImportError:  # pragma: no cover - Pillow is optional
    Image = None

needs_pil = pytest.mark.skipif(Image is None, reason="needs Pillow")


def same_as_numpy(call, *arrays):
    """Runs call on NumPy arrays and on qvalues made from copies of them: the same exception
    type (and the qvalue operands unchanged), or equal results of the same dtype."""
    nps = [np.array(a) for a in arrays]
    qs = [q.value(np.array(a)) for a in arrays]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = call(*nps)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        with pytest.raises(type(e)) as info:
            call(*qs)
        for a, b in zip(arrays, qs):
            np.testing.assert_array_equal(np.asarray(b), np.asarray(a))
        return info.value
    got = call(*qs)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert np.asarray(got).dtype == np.asarray(want).dtype
    return got


# ---- 1. Python integers through NumPy's protocols (NEP 50) ----------------------------------

INT8 = np.zeros(3, np.int8)
INT32 = np.zeros(3, np.int32)


@pytest.mark.parametrize("call, arrays", [
    (lambda a: np.add(a, 200, dtype=np.int8), [INT32]),
    (lambda a: np.add(a, 2**40, dtype=np.int8), [INT32]),
    (lambda a: np.add(a, 300, dtype=np.int8, casting="unsafe"), [INT32]),
    (lambda a: np.add(a, -1, dtype=np.uint8), [np.zeros(3, np.uint16)]),
    (lambda a: np.full_like(a, 300), [INT8]),
    (lambda a: np.full_like(a, -1), [np.zeros(3, np.uint8)]),
    (lambda a: np.max(a, initial=300), [INT8]),
    (lambda a: np.max(a, initial=300.0), [INT8]),
    (lambda a: np.max(a, initial=np.int64(300)), [INT8]),
    (lambda a: np.min(a, initial=-300), [INT8]),
    (lambda a: np.max(a[:0], initial=300), [INT8]),
    (lambda a: np.min(a, where=np.array([True, False, True]), initial=300), [INT8]),
    (lambda a: np.sum(a, dtype=np.int8, initial=300), [INT8]),
    (lambda a: np.maximum.reduce(a, initial=300), [INT8]),
    (lambda a: np.sum(a, initial=-1), [np.zeros(3, np.uint64)]),
    (lambda a: np.clip(a, 300, 400), [INT8]),
    (lambda a: np.clip(a, -400, -300), [INT8]),
    (lambda a: np.pad(a, 1, constant_values=300), [INT8]),
    (lambda a: np.add(a, 300), [INT8]),
    (lambda a: np.maximum(a, 300), [INT8]),
])
def test_python_ints_out_of_bounds_raise_overflow_error(call, arrays):
    err = same_as_numpy(call, *arrays)
    assert isinstance(err, OverflowError)
    assert "out of bounds" in str(err) or "int64" in str(err)


def test_where_refuses_an_out_of_bounds_python_int():
    # NumPy casts the 300 unsafely here (to 44), against its own NEP 50 rule; isthmus keeps the
    # rule (docs/numpy-protocols.md)
    a = q.value(np.arange(3, dtype=np.int8))
    with pytest.raises(OverflowError, match="Python integer 300 out of bounds for int8"):
        np.where(a > 5, a, 300)
    np.testing.assert_array_equal(np.asarray(a), np.arange(3, dtype=np.int8))


def test_put_along_axis_refuses_an_out_of_bounds_python_int():
    a = q.value(np.arange(3, dtype=np.int8))
    with pytest.raises(OverflowError, match="Python integer 300 out of bounds for int8"):
        np.put_along_axis(a, np.array([0]), 300, 0)
    np.testing.assert_array_equal(np.asarray(a), np.arange(3, dtype=np.int8))


@pytest.mark.parametrize("call, arrays", [
    (lambda a: np.add(a, 100, dtype=np.int8), [INT32 + 5]),
    (lambda a: np.add(a, 300, dtype=np.int16), [INT8]),
    (lambda a: np.full_like(a, 300.5), [INT8]),            # floats cast unsafely, as NumPy
    (lambda a: np.full_like(a, np.int64(300)), [INT8]),    # NumPy scalars too
    (lambda a: np.full_like(a, 300, dtype=np.int16), [INT8]),
    (lambda a: np.full_like(a, 127), [INT8]),
    (lambda a: np.full_like(a, 300), [np.zeros(3, bool)]),
    (lambda a: np.max(a, initial=3.5), [INT8]),
    (lambda a: np.max(a, initial=100), [INT8]),
    (lambda a: np.sum(a, initial=300), [INT8]),            # sum widens int8 to int64 first
    (lambda a: np.add.reduce(a, initial=300), [INT8]),
    (lambda a: np.max(a, initial=2**64 - 1), [np.zeros(3, np.uint64)]),
    (lambda a: np.clip(a, 0, 300), [np.arange(-3, 3, dtype=np.int8)]),
    (lambda a: np.clip(a, -300, 1), [np.arange(-3, 3, dtype=np.int8)]),
    (lambda a: np.clip(a, -5, 3), [np.arange(6, dtype=np.uint8)]),
    (lambda a: np.clip(a, -300, 300), [np.arange(-3, 3, dtype=np.int8)]),
    (lambda a: np.pad(a, 1, constant_values=-128), [INT8]),
    (lambda a: np.equal(a, 300), [INT8]),                  # comparisons need no cast
    (lambda a: np.less(a, 300), [INT8]),
])
def test_python_ints_in_bounds_give_numpys_values(call, arrays):
    same_as_numpy(call, *arrays)


# ---- 2. the array API standard ---------------------------------------------------------------

def test_from_dlpack_copy_false_refuses_read_only_memory():
    a = np.arange(4.0)
    a.flags.writeable = False
    with pytest.raises((BufferError, ValueError), match="read-only"):
        xp.from_dlpack(a, copy=False)
    shared = xp.from_dlpack(np.arange(4.0), copy=False)  # writable memory is shared
    np.testing.assert_array_equal(np.asarray(shared), np.arange(4.0))
    b = xp.from_dlpack(a)  # copy=None copies what it cannot share
    np.testing.assert_array_equal(np.asarray(b), a)
    c = np.arange(4.0)
    d = xp.from_dlpack(c, copy=True)
    d[0] = 42.0
    assert c[0] == 0.0  # a copy
    with pytest.raises(TypeError, match="copy"):
        xp.from_dlpack(c, copy="no")
    np.testing.assert_array_equal(a, np.arange(4.0))


@pytest.mark.parametrize("lo, hi", [(math.nan, 1.0), (0.0, math.nan), (math.nan, math.nan)])
def test_clip_with_a_nan_bound_gives_nan(lo, hi):
    data = np.array([-1.0, 0.5, 2.0, np.nan])
    x = xp.asarray(data)
    got = np.asarray(xp.clip(x, lo, hi))
    np.testing.assert_array_equal(got, np.clip(data, lo, hi))
    assert np.isnan(got).all()
    # NaN in an array bound: NaN where it is
    bound = xp.asarray(np.array([np.nan, 0.0, 0.0, 0.0]))
    np.testing.assert_array_equal(np.asarray(xp.clip(x, bound, 1.0)),
                                  np.clip(data, np.array([np.nan, 0, 0, 0]), 1.0))
    np.testing.assert_array_equal(np.asarray(x), data)  # the input is unchanged


def test_clip_with_ordinary_bounds_still_matches_numpy():
    data = np.array([-1.0, 0.5, 2.0, np.nan])
    np.testing.assert_array_equal(np.asarray(xp.clip(xp.asarray(data), 0.0, 1.0)),
                                  np.clip(data, 0.0, 1.0))
    ints = np.arange(-3, 4)
    np.testing.assert_array_equal(np.asarray(xp.clip(xp.asarray(ints), -1, 2)),
                                  np.clip(ints, -1, 2))


def test_iterating_a_0d_array_raises_type_error():
    with pytest.raises(TypeError, match="0-d"):
        list(xp.asarray(1.0))
    with pytest.raises(TypeError, match="0-d"):
        iter(q.value(np.array(2.0)))
    with pytest.raises(TypeError, match="0-d"):
        iter(q.zeros(()))
    with pytest.raises(TypeError, match="0-d|scalar"):
        list(q.value(3.0))  # a scalar qvalue, as a NumPy scalar, is not iterable
    with pytest.raises(TypeError):
        list(np.array(1.0))  # what NumPy does
    # 1-d and 2-d tensors and cells iterate as before
    assert [float(v) for v in q.value([1.0, 2.0])] == [1.0, 2.0]
    rows = list(q.value(np.arange(6.0).reshape(2, 3)))
    assert len(rows) == 2 and rows[1].shape == (3,)
    assert len(list(q.value(["a", q.zeros(2)]))) == 2
    assert list(q.zeros(0)) == []


@pytest.mark.parametrize("sorter, exc, match", [
    ([1], ValueError, "sorter.size must equal a.size"),
    ([0, 1, 5], ValueError, "Sorter index out of range"),
    ([0, 1, -1], ValueError, "Sorter index out of range"),
    ([0.0, 1.0, 2.0], TypeError, "sorter must only contain integers"),
])
def test_searchsorted_checks_the_sorter(sorter, exc, match):
    data = np.array([1.0, 2.0, 3.0])
    with pytest.raises(exc):
        np.searchsorted(data, 2.5, sorter=sorter)
    a = q.value(data)
    with pytest.raises(exc, match=match):
        np.searchsorted(a, 2.5, sorter=sorter)
    with pytest.raises(exc, match=match):
        xp.searchsorted(xp.asarray(data), xp.asarray(2.5), sorter=xp.asarray(np.array(sorter)))
    np.testing.assert_array_equal(np.asarray(a), data)


def test_searchsorted_with_a_good_sorter_matches_numpy():
    data = np.array([3.0, 1.0, 2.0])
    order = np.argsort(data)
    want = np.searchsorted(data, [0.5, 2.5, 9.0], sorter=order)
    got = np.searchsorted(q.value(data), np.array([0.5, 2.5, 9.0]), sorter=order)
    np.testing.assert_array_equal(np.asarray(got), want)
    got = xp.searchsorted(xp.asarray(data), xp.asarray(np.array([0.5, 2.5, 9.0])),
                          sorter=xp.asarray(order))
    np.testing.assert_array_equal(np.asarray(got), want)
    with pytest.raises(ValueError, match="object too deep"):
        np.searchsorted(q.value(data.reshape(3, 1)), 2.5)


# ---- 3. images: the pixel limit of a frame stack ---------------------------------------------

def _frames(n, h=20, w=30):
    rng = np.random.default_rng(5)
    return [rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for _ in range(n)]


def _save_animation(path, frames, fmt):
    pics = [Image.fromarray(f) for f in frames]
    pics[0].save(path, format=fmt, save_all=True, append_images=pics[1:], duration=10)


@needs_pil
@pytest.mark.parametrize("fmt, ext", [("PNG", "png"), ("GIF", "gif"), ("TIFF", "tif")])
def test_frame_stacks_past_the_pixel_limit_are_refused(tmp_path, monkeypatch, fmt, ext):
    path = tmp_path / f"anim.{ext}"
    frames = _frames(5)
    _save_animation(path, frames, fmt)
    assert q.imread(path, frame=None).shape == (5, 20, 30, 3)  # under the default limit
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 4 * 20 * 30)  # four frames' worth
    with pytest.raises(q.ImageFileError, match=r"5 frames would hold 3000 pixels in all, more "
                                               r"than the limit of 2400") as info:
        q.imread(path, frame=None)
    assert str(path) in str(info.value) and info.value.filename == str(path)
    assert "[Errno" not in str(info.value)
    # one frame at a time still reads
    got = q.imread(path, frame=4, dtype="uint8")
    assert got.shape == (20, 30, 3)
    if fmt != "GIF":  # GIF's palette quantises the colours
        np.testing.assert_array_equal(np.asarray(got), frames[4])
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", None)  # no limit: everything reads
    assert q.imread(path, frame=None).shape == (5, 20, 30, 3)


@needs_pil
def test_a_frame_count_claimed_past_the_limit_is_refused_before_decoding(tmp_path, monkeypatch):
    # frames of different sizes: the running total, not only the first frame's estimate
    path = tmp_path / "sizes.tif"
    pics = [Image.fromarray(np.zeros((2, 2), np.uint8)),
            Image.fromarray(np.zeros((40, 40), np.uint8))]
    pics[0].save(path, save_all=True, append_images=pics[1:])
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)
    with pytest.raises(q.ImageFileError, match=r"frames hold 1604 pixels in all"):
        q.imread(path, frame=None)
    assert q.imread(path, frame=1).shape == (40, 40)


# ---- 4. clear errors -------------------------------------------------------------------------

FORMATS = [("PNG", "png"), ("JPEG", "jpg"), ("GIF", "gif"), ("BMP", "bmp"), ("TIFF", "tif"),
           ("WEBP", "webp")]


@needs_pil
@pytest.mark.parametrize("fmt, ext", FORMATS)
def test_image_file_errors_say_what_is_wrong(tmp_path, fmt, ext):
    rng = np.random.default_rng(1)
    full = tmp_path / f"full.{ext}"
    Image.fromarray(rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)).save(full, format=fmt)
    data = full.read_bytes()
    cases = {
        "empty": (b"", r"not an image file \(it is empty\)"),
        "garbage": (b"\x00\x13" + bytes(rng.integers(0, 256, 500, dtype=np.uint8)),
                    r"not an image file|corrupt"),
        "header": (data[:10], rf"truncated or corrupt {fmt} file|truncated {fmt} file"),
        "half": (data[: len(data) // 2], rf"(truncated|corrupt) {fmt} file"),
    }
    for name, (content, match) in cases.items():
        path = tmp_path / f"{name}.{ext}"
        path.write_bytes(content)
        with pytest.raises(q.ImageFileError) as info:
            q.imread(path)
        text = str(info.value)
        assert text.startswith(f"imread: cannot read {str(path)!r}: "), text
        assert "[Errno" not in text and "None" not in text, text
        assert info.value.filename == str(path)
        assert isinstance(info.value, OSError)
        assert re.search(match, text), (name, text)
    # a file object is named by its name, and left where it was
    with open(tmp_path / f"half.{ext}", "rb") as f:
        f.seek(3)
        with pytest.raises(q.ImageFileError, match=rf"half\.{ext}"):
            q.imread(f)
    # bytes in memory have no name
    with pytest.raises(q.ImageFileError, match=r"<BytesIO object>: not an image file"):
        q.imread(io.BytesIO(b""))
    assert q.imread(full).shape == (64, 64, 3)  # a good file still reads


@needs_pil
def test_truncated_png_says_truncated(tmp_path):
    full = tmp_path / "full.png"
    q.imwrite(full, np.random.default_rng(2).integers(0, 256, (64, 64, 3)).astype(np.uint8))
    data = full.read_bytes()
    (tmp_path / "cut.png").write_bytes(data[: len(data) // 2])
    with pytest.raises(q.ImageFileError, match=r"cut\.png'?: truncated PNG file"):
        q.imread(tmp_path / "cut.png")


def test_a_lone_surrogate_is_a_clear_value_error():
    for text in ("a\ud800b", "\udfff", "ok\udc80"):
        with pytest.raises(ValueError, match="surrogate"):
            q.value(text)
    assert q.value("a\u00e9b").to_py() == "a\u00e9b"  # valid text still converts
    assert q.value("a\x00b").to_py() == "a\x00b"
    with pytest.raises(ValueError, match="surrogate"):
        q.value(["a\ud800", 1])  # inside a list (a cell)
    with pytest.raises(ValueError, match="surrogate"):
        q.zeros(3, dtype="\ud800")  # as a dtype name
    # comparing never raises: no stored text equals a string with a lone surrogate
    assert (q.value("a") == "a\ud800") is False and (q.value("a") != "a\ud800") is True
    assert q.value("a") == "a"


@pytest.mark.parametrize("decimals", [400, -400, 309, -309, 308, -308, 40, -40])
@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
def test_round_with_huge_decimals_matches_numpy(decimals, dtype):
    data = (np.array([1.5, -2.25, 0.0, 1e300, np.inf]) * (1 + 1j if dtype[0] == "c" else 1)
            ).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.round(data, decimals)
        got = np.asarray(np.round(q.value(data), decimals))
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype


def test_round_of_integers_and_decimals_past_int64():
    data = np.array([15, -7, 0], np.int64)
    np.testing.assert_array_equal(np.asarray(np.round(q.value(data), 400)),
                                  np.round(data, 400))
    for decimals in (2**63, 2**70, -(2**70)):
        with pytest.raises(OverflowError):
            np.round(np.ones(2), decimals)  # NumPy: a C long
        with pytest.raises(OverflowError, match="decimals.*int64"):
            np.round(q.value(np.ones(2)), decimals)


PLUGIN = BUILD_DIR / "tests" / "plugins" / "good_plugin.so"


@pytest.mark.skipif(not PLUGIN.exists(), reason="needs the test plugins")
def test_plugin_objects_refuse_pickling_with_the_documented_message():
    plugin = q.import_native(str(PLUGIN))
    c = plugin.counter("button")
    documented = r"cannot pickle a native object of type 'counter': its plugin declares no way"
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        with pytest.raises(TypeError, match=documented):
            pickle.dumps(c, protocol=protocol)
    with pytest.raises(TypeError, match=r"cannot copy a native object of type 'counter'"):
        copy.copy(c)
    with pytest.raises(TypeError, match=r"cannot copy a native object of type 'counter'"):
        copy.deepcopy(c)
    assert c.label == "button"  # the object is untouched


@pytest.mark.parametrize("make", [
    lambda: q.zeros(2**63),
    lambda: q.zeros((2**64,)),
    lambda: q.zeros([3, 2**63]),
    lambda: q.uninit(2**70),
    lambda: xp.empty((2**70,)),
    lambda: q.ones(2**63, 2),
])
def test_sizes_past_int64_say_so(make):
    with pytest.raises(OverflowError, match="does not fit in int64"):
        make()


def test_negative_sizes_still_say_non_negative():
    with pytest.raises(ValueError, match="non-negative"):
        q.zeros(-1)
    with pytest.raises(ValueError, match="non-negative"):
        q.zeros((3, -(2**70)))
