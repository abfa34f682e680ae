"""Hostile input at the boundary: bool memory holding bytes other than 0 and 1 (Note [bool
bytes]), written plugin arguments that cannot be shared (Note [written arguments]), element
writes into zero-stride imports (Note [read-only broadcast views]) and DLPack byte offsets
(Note [dlpack byte offset])."""
import ctypes
import gc
import pickle

import numpy as np
import pytest

import isthmus as q

from conftest import BUILD_DIR
from dlpack_helpers import Producer

GOOD = str(BUILD_DIR / "tests" / "plugins" / "good_plugin.so")

# The reported bytes: argsort over them corrupted the heap ("munmap_chunk(): invalid pointer").
HOSTILE = [217, 163, 130, 69, 78, 10, 19]
MIXED = [0, 2, 255, 1, 0, 128]


def raw_bools(values):
    """A NumPy bool view over the given bytes (a zero-copy view, as users make them)."""
    return np.array(values, np.uint8).view(bool)


def as_numpy_reads(b):
    """What NumPy means by a bool byte: nonzero is true."""
    return b.view(np.uint8) != 0


# ---- bool bytes ------------------------------------------------------------------------------


def bool_sources():
    torch = pytest.importorskip("torch")
    return {
        "numpy": lambda vals: raw_bools(vals),
        "numpy strided": lambda vals: np.repeat(np.array(vals, np.uint8), 2).view(bool)[::2],
        "torch": lambda vals: torch.tensor(vals, dtype=torch.uint8).view(torch.bool),
        "dlpack": lambda vals: Producer(raw_bools(vals)),
    }


@pytest.mark.parametrize("source", ["numpy", "numpy strided", "torch", "dlpack"])
def test_bool_bytes_are_read_as_nonzero(source):
    make = bool_sources()[source]
    for vals in (HOSTILE, MIXED):
        ref = np.array(vals, np.uint8) != 0
        v = q.asvalue(make(vals))
        assert v.dtype == "bool"
        np.testing.assert_array_equal(v.to_py(), ref)
        assert np.asarray(v.to_py()).view(np.uint8).max() <= 1  # normalised storage
        assert int(q.sum(v)) == int(ref.sum())
        np.testing.assert_array_equal(v.astype("int64").to_py(), ref.astype(np.int64))
        np.testing.assert_array_equal(q.cumsum(v).to_py(), np.cumsum(ref))
        np.testing.assert_array_equal(q.argsort(v).to_py(), np.argsort(ref, kind="stable"))
        np.testing.assert_array_equal(q.sort(v).to_py(), np.sort(ref))
        np.testing.assert_array_equal(q.logical_not(v).to_py(), ~ref)
        np.testing.assert_array_equal(q.nonzero(v)[0].to_py(), np.nonzero(ref)[0])


def test_bool_bytes_from_a_pickle_payload():
    v = q.asvalue(np.array([False, True, False, True, True, False]))
    fn, args = v.__reduce__()
    payload = list(args[0])
    data_at = [i for i, x in enumerate(payload) if isinstance(x, (bytes, bytearray))]
    assert len(data_at) == 1
    payload[data_at[0]] = bytes(MIXED)
    crafted = fn(type(args[0])(payload))
    ref = np.array(MIXED, np.uint8) != 0
    np.testing.assert_array_equal(crafted.to_py(), ref)
    np.testing.assert_array_equal(q.argsort(crafted).to_py(), np.argsort(ref, kind="stable"))
    assert int(q.sum(crafted)) == 4
    # the same through pickle.loads of a payload edited in the stream
    blob = pickle.dumps(v, protocol=4)  # bytes in band, as written
    fixed = bytes([0, 1, 0, 1, 1, 0])
    assert blob.count(fixed) == 1
    loaded = pickle.loads(blob.replace(fixed, bytes(MIXED)))
    np.testing.assert_array_equal(loaded.to_py(), ref)


def test_valid_bool_memory_is_still_shared():
    a = np.array([True, False, True])
    v = q.asvalue(a)
    v[1] = True
    assert a[1]  # zero-copy: the write reached NumPy's memory
    s = np.array([True, False, True, False])[::2]
    w = q.asvalue(s)
    w[1] = False
    assert not s[1]


def test_bool_bytes_refused_without_a_copy():
    b = raw_bools(MIXED)
    with pytest.raises(ValueError, match="bytes other than 0 and 1"):
        q.from_py(b, copy=False)
    with pytest.raises(ValueError, match="bytes other than 0 and 1"):
        q.from_dlpack(Producer(b), copy=False)
    np.testing.assert_array_equal(b.view(np.uint8), MIXED)  # the producer's bytes unchanged


def stable_descending(ref):
    """NumPy's stable descending argsort: a flip of the ascending sort of the flipped row."""
    return ref.size - 1 - np.flip(np.argsort(np.flip(ref), kind="stable"))


def test_bool_memory_written_after_import_sorts_as_numpy():
    # Shared while it held 0 and 1; the producer then writes other bytes. Sorts and searches
    # read byte != 0 (no bucket comes from a raw byte), whatever the bytes.
    rng = np.random.default_rng(7)
    for n in (9, 4096):  # the comparison sort (short rows) and the radix sort
        u = np.zeros(n, np.uint8)
        v = q.asvalue(u.view(bool))
        for _ in range(3):
            u[:] = rng.integers(0, 256, n) * (rng.random(n) < 0.5)
            ref = u != 0
            np.testing.assert_array_equal(q.argsort(v).to_py(), np.argsort(ref, kind="stable"))
            np.testing.assert_array_equal(q.argsort(v, descending=True).to_py(),
                                          stable_descending(ref))
            s = q.sort(v).to_py()
            assert s.view(np.uint8).max() <= 1
            np.testing.assert_array_equal(s, np.sort(ref))
            srt = np.sort(ref)
            np.testing.assert_array_equal(q.searchsorted(q.asvalue(srt), v).to_py(),
                                          np.searchsorted(srt, ref))
            np.testing.assert_array_equal(
                q.searchsorted(q.asvalue(srt), v, side="right").to_py(),
                np.searchsorted(srt, ref, side="right"))


# ---- written plugin arguments ----------------------------------------------------------------


@pytest.fixture(scope="module")
def good():
    return q.import_native(GOOD)


def test_written_argument_that_cannot_be_shared_is_refused(good):
    x = np.arange(6.0).reshape(2, 3)
    cases = []
    ro = np.zeros((2, 3))
    ro.flags.writeable = False
    cases.append((ro, "read-only"))
    swapped = np.zeros((2, 3), ">f8")
    cases.append((swapped, "byte order"))
    cases.append(([[0.0] * 3] * 2, "list"))
    for out, why in cases:
        before = np.array(out, copy=True)
        for checked in (False, True):
            with q.checked(checked):
                with pytest.raises(ValueError, match=r"argument 2 \(y\) is written.*" + why):
                    q.parallel_do((2, 3), x, out, 2.0, 1.0, good.axpb)
        np.testing.assert_array_equal(np.asarray(out), before)
    # a plugin function's written argument: the same rule
    ro1 = np.zeros(3)
    ro1.flags.writeable = False
    with pytest.raises(ValueError, match=r"argument 1 \(y\) is written.*read-only"):
        good.fill_inplace(ro1, 5.0)
    assert not ro1.any()
    # what can be shared still is, and the writes land
    y = np.zeros((2, 3))
    q.parallel_do((2, 3), x, y, 2.0, 1.0, good.axpb)
    np.testing.assert_array_equal(y, 2 * x + 1)
    ys = np.zeros((2, 6))[:, ::2]  # strided, writable: shared
    q.parallel_do((2, 3), x, ys, 2.0, 1.0, good.axpb)
    np.testing.assert_array_equal(ys, 2 * x + 1)
    f = np.zeros(4)
    good.fill_inplace(f, 2.5)
    np.testing.assert_array_equal(f, 2.5)
    # read arguments are still converted as before (a list, a read-only array)
    y = np.zeros((2, 3))
    q.parallel_do((2, 3), x.tolist(), y, 1.0, 0.0, good.axpb)
    np.testing.assert_array_equal(y, x)
    x.flags.writeable = False
    q.parallel_do((2, 3), x, y, 3.0, 0.0, good.axpb)
    np.testing.assert_array_equal(y, 3 * x)


def test_written_torch_argument(good):
    torch = pytest.importorskip("torch")
    x = torch.arange(6.0, dtype=torch.float64).reshape(2, 3)
    y = torch.zeros(2, 3, dtype=torch.float64)
    q.parallel_do((2, 3), x, y, 2.0, 1.0, good.axpb)
    torch.testing.assert_close(y, 2 * x + 1)
    # a bool tensor holding other bytes could only be imported as a copy: refused when written
    f = np.zeros(6, np.uint8)
    f[[1, 4]] = [2, 9]
    with pytest.raises(ValueError, match=r"argument 1 \(y\) is written.*other than 0 and 1"):
        good.fill_inplace(torch.from_numpy(f).view(torch.bool), 1.0)
    np.testing.assert_array_equal(f, [0, 2, 0, 0, 9, 0])


# ---- zero-stride imports are read-only element by element ------------------------------------


def test_zero_stride_imports_are_read_only_everywhere():
    torch = pytest.importorskip("torch")
    base = torch.zeros(3)
    v = q.from_dlpack(base.expand(4, 3))
    for write in (lambda: v.__setitem__((0, 0), 5.0), lambda: v.__setitem__(0, 1.0),
                  lambda: v[1].__setitem__(2, 1.0), lambda: v.__iadd__(1)):
        with pytest.raises(ValueError, match="read-only"):
            write()
    assert not base.any()
    # a stride-0 capsule
    p = Producer(np.zeros(3))
    p.shape, p.strides = (4, 3), (0, 1)
    w = q.from_dlpack(p)
    with pytest.raises(ValueError, match="read-only"):
        w[0, 0] = 5.0
    assert not p.array.any()
    # a writable NumPy as_strided array: stride 0, and overlapping windows
    a = np.zeros(5)
    rep = np.lib.stride_tricks.as_strided(a, (4, 3), (0, 8))
    assert rep.flags.writeable
    r = q.asvalue(rep)
    with pytest.raises(ValueError, match="read-only"):
        r[0, 0] = 5.0
    win = np.lib.stride_tricks.as_strided(a, (3, 3), (8, 8))  # sliding windows share elements
    wv = q.asvalue(win)
    with pytest.raises(ValueError, match="read-only"):
        wv[0, 1] = 5.0
    assert not a.any()
    # reading works, and a copy is writable
    np.testing.assert_array_equal(wv.to_py(), win)
    c = wv.copy()
    c[0, 1] = 5.0
    assert float(c[0, 1]) == 5.0 and not a.any()
    # layouts that do not repeat elements stay writable
    t = np.zeros((4, 6))
    tv = q.asvalue(t.T[::2])
    tv[0, 0] = 1.0
    assert t[0, 0] == 1.0


# ---- DLPack byte_offset ----------------------------------------------------------------------


# (offsets past the 47-bit user address space: a smaller one may land in memory that is mapped,
# such as AddressSanitizer's shadow, which no check can tell from the producer's)
@pytest.mark.parametrize("offset", [2**63, 2**63 + 8, 2**62, 2**56, 2**47])
def test_dlpack_byte_offset_far_away_is_refused(offset):
    x = np.arange(4.0)
    p = Producer(x)
    p.byte_offset = offset
    with pytest.raises(ValueError, match="byte_offset|not mapped"):
        q.from_dlpack(p)
    gc.collect()
    np.testing.assert_array_equal(x, np.arange(4.0))


def test_dlpack_byte_offset_in_range_still_works():
    x = np.arange(8.0)
    p = Producer(x)
    p.shape, p.strides, p.byte_offset = (3,), (2,), 8  # x[1::2][:3]
    v = q.from_dlpack(p)
    np.testing.assert_array_equal(v.to_py(), x[1:7:2])


def test_plugin_string_argument_with_a_lone_surrogate(good):
    assert good.greet("a\0b") == "hello a\0b"  # NUL is text like any other character
    with pytest.raises(ValueError, match=r"greet: argument 1 \(who\).*lone surrogate"):
        good.greet("a\ud800b")
    assert good.greet("ok") == "hello ok"


@pytest.mark.parametrize("make", [
    lambda: q.native_function(),
    lambda: q.native_function.__new__(q.native_function),
    lambda: object.__new__(q.native_function),
], ids=["call", "dunder_new", "object_new"])
def test_a_native_function_cannot_be_made_empty(make, good):
    # Before, the type inherited object's constructor: q.native_function() made an object
    # without a function, whose repr or call crashed the process.
    with pytest.raises(TypeError, match=r"cannot create 'isthmus\.native_function' instances|"
                                        r"is not safe, use isthmus\.native_function\.__new__"):
        make()
    f = good.greet
    import copy
    for op in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError, match="cannot pickle 'isthmus.native_function' object"):
            op(f)
    assert f("ok") == "hello ok"  # the real one is unharmed


@pytest.mark.parametrize("name, made_by", [
    ("native_kernel", "kernels come from import_native and compile_string"),
    ("native_object", "objects come from a plugin type's constructor"),
    ("native_event", "events are attributes of native objects"),
])
def test_runtime_made_types_refuse_to_be_made_empty(name, made_by, good):
    # See Note [runtime-made types refuse __new__]: cls.__new__(cls) made an instance without its
    # C++ value, which crashed at its repr.
    cls = getattr(q, name)
    for make in (cls, lambda: cls.__new__(cls)):
        with pytest.raises(TypeError, match=rf"cannot create 'isthmus\.{name}' instances: "
                                            + made_by.replace("(", r"\(")):
            make()
    with pytest.raises(TypeError, match="is not safe"):
        object.__new__(cls)
    # the runtime still makes them
    k = good.axpb
    assert isinstance(k, q.native_kernel) and "axpb" in repr(k)
