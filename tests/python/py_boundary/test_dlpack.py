# DLPack: qvalue.__dlpack__/__dlpack_device__, q.from_dlpack, capsules, flags, deleters, errors.
import gc
import weakref

import numpy as np
import pytest

import isthmus as q
from memory_helpers import address
from dlpack_helpers import (IS_COPIED, READ_ONLY, Producer, capsule_name, kDLBfloat, kDLBool,
                            kDLComplex, kDLCPU, kDLCUDAHost, kDLFloat, kDLFloat8_e4m3fn, kDLInt,
                            kDLOpaqueHandle, kDLUInt, legacy_struct, random_array,
                            versioned_struct)

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]
DL_CODES = {"b": kDLBool, "i": kDLInt, "u": kDLUInt, "f": kDLFloat, "c": kDLComplex}

rng = np.random.default_rng(20240611)


def sample(dtype, shape=(3, 4)):
    return random_array(rng, dtype, shape)


def one(dtype):
    return np.ones((), dtype=dtype)[()]


class Holder:
    """Hands out a given capsule, as a producer would (lets NumPy consume our capsules)."""

    def __init__(self, cap):
        self.cap = cap

    def __dlpack__(self, **kwargs):
        return self.cap

    def __dlpack_device__(self):
        return (kDLCPU, 0)


# ---- export: qvalue -> NumPy ----


@pytest.mark.parametrize("dtype", DTYPES)
def test_export_every_dtype_shares_memory(dtype):
    x = sample(dtype)
    A = q.value(x)
    n = np.from_dlpack(A)
    assert n.dtype == x.dtype and n.shape == x.shape
    assert n.ctypes.data == address(A)
    np.testing.assert_array_equal(n, x)
    n[0, 0] = one(dtype)  # NumPy -> isthmus
    assert A.to_py()[0, 0] == one(dtype)
    A[2, 3] = q.value(np.zeros((), dtype=dtype))  # isthmus -> NumPy
    assert n[2, 3] == 0


@pytest.mark.parametrize("dtype", DTYPES + ["bfloat16"])
def test_export_capsule_describes_the_tensor(dtype):
    A = q.value(sample("float32" if dtype == "bfloat16" else dtype, (2, 5))).astype(dtype)
    cap = A.__dlpack__(max_version=(1, 0))
    m = versioned_struct(cap)
    t = m.dl_tensor
    if dtype == "bfloat16":
        assert (t.dtype.code, t.dtype.bits, t.dtype.lanes) == (kDLBfloat, 16, 1)
    else:
        dt = np.dtype(dtype)
        assert (t.dtype.code, t.dtype.bits, t.dtype.lanes) == (DL_CODES[dt.kind],
                                                               dt.itemsize * 8, 1)
    assert (t.device.device_type, t.device.device_id) == (kDLCPU, 0)
    assert t.ndim == 2 and [t.shape[i] for i in range(2)] == [2, 5]
    assert [t.strides[i] for i in range(2)] == [5, 1]  # in elements
    assert t.data == address(A) and t.byte_offset == 0
    assert (m.version.major, m.version.minor) == (1, 1) and m.flags == 0


def test_bfloat16_round_trip_through_capsules():
    x = sample("float32", (4, 3))
    A = q.value(x).astype("bfloat16")
    B = q.from_dlpack(A.__dlpack__(max_version=(1, 0)))
    assert B.dtype == "bfloat16" and address(B) == address(A)
    np.testing.assert_array_equal(B.astype("float32").to_py(), A.astype("float32").to_py())
    B[0, 0] = 7.0
    assert A.astype("float32").to_py()[0, 0] == 7.0
    C = q.from_dlpack(A.__dlpack__())  # legacy capsule
    assert C.dtype == "bfloat16" and address(C) == address(A)


def test_capsule_names_versioned_and_legacy():
    A = q.value([1.0, 2.0, 3.0])
    assert capsule_name(A.__dlpack__()) == "dltensor"
    assert capsule_name(A.__dlpack__(max_version=None)) == "dltensor"
    assert capsule_name(A.__dlpack__(max_version=(0, 8))) == "dltensor"
    assert capsule_name(A.__dlpack__(max_version=(1, 0))) == "dltensor_versioned"
    assert capsule_name(A.__dlpack__(max_version=(1, 3))) == "dltensor_versioned"
    assert capsule_name(A.__dlpack__(max_version=(2, 0))) == "dltensor_versioned"
    legacy = legacy_struct(A.__dlpack__())
    assert legacy.dl_tensor.data == address(A) and legacy.dl_tensor.ndim == 1
    # a consumer renames the capsule it took
    cap = A.__dlpack__(max_version=(1, 0))
    n = np.from_dlpack(Holder(cap))
    assert capsule_name(cap) == "used_dltensor_versioned"
    cap2 = A.__dlpack__()
    B = q.from_dlpack(cap2)
    assert capsule_name(cap2) == "used_dltensor"
    assert n.ctypes.data == address(A) == address(B)


def test_dlpack_device():
    assert q.value([1, 2]).__dlpack_device__() == (kDLCPU, 0)
    assert q.value(2.5).__dlpack_device__() == (kDLCPU, 0)


def test_export_pins_until_the_consumer_releases():
    A = q.value(sample("float64", (3, 3)))
    assert A._pinned_to() == -1
    cap = A.__dlpack__(max_version=(1, 0))
    assert A._pinned_to() == q.MEMRESOURCE_CPU
    del cap  # never consumed: the capsule's destructor calls the deleter once
    gc.collect()
    assert A._pinned_to() == -1
    n = np.from_dlpack(A)
    m = np.from_dlpack(A)
    assert A._pinned_to() == q.MEMRESOURCE_CPU
    del n
    gc.collect()
    assert A._pinned_to() == q.MEMRESOURCE_CPU  # m still holds its own export
    del m
    gc.collect()
    assert A._pinned_to() == -1  # each export's deleter ran exactly once (the pins balance)


def test_export_outlives_its_qvalue():
    x = sample("float32", (5, 2))
    A = q.value(x)
    n = np.from_dlpack(A)
    del A
    gc.collect()
    junk = [q.value(sample("float32", (5, 2))) for _ in range(8)]  # reuse freed memory, if any
    np.testing.assert_array_equal(n, x)
    n += 1
    np.testing.assert_array_equal(n, x + 1)
    del junk


def test_export_strided_views():
    x = sample("float64", (6, 8))
    A = q.from_py(x.T)  # a transposed (Fortran-order) view
    n = np.from_dlpack(A)
    assert n.strides == x.T.strides and n.ctypes.data == x.ctypes.data
    np.testing.assert_array_equal(n, x.T)
    S = A[1::2, ::3]  # sliced with steps
    s = np.from_dlpack(S)
    np.testing.assert_array_equal(s, x.T[1::2, ::3])
    assert s.ctypes.data == address(S)
    s[0, 0] = -5
    assert x[0, 1] == -5  # through two views onto one buffer
    # broadcast: zero strides
    base = sample("float32", (4,))
    b = np.lib.stride_tricks.as_strided(base, shape=(3, 4), strides=(0, 4))
    Bq = q.from_py(b)
    nb = np.from_dlpack(Bq)
    assert nb.strides == (0, 4) and nb.ctypes.data == base.ctypes.data
    np.testing.assert_array_equal(nb, np.broadcast_to(base, (3, 4)))


def test_export_negative_strides_copies():
    x = sample("int32", (5,))
    A = q.from_py(x)[::-1]
    cap = A.__dlpack__(max_version=(1, 0))
    m = versioned_struct(cap)
    assert m.flags & IS_COPIED and m.dl_tensor.strides[0] == 1
    n = np.from_dlpack(A)
    np.testing.assert_array_equal(n, x[::-1])
    assert n.ctypes.data != x.ctypes.data
    with pytest.raises(BufferError, match="negative strides"):
        A.__dlpack__(copy=False)
    assert A._pinned_to() == q.MEMRESOURCE_CPU  # (x is wrapped: pinned for its life)


def test_export_0d_and_empty():
    Z = q.value(np.array(3.5))
    z = np.from_dlpack(Z)
    assert z.shape == () and z == 3.5 and z.ctypes.data == address(Z)
    E = q.zeros(0, 3)
    e = np.from_dlpack(E)
    assert e.shape == (0, 3) and e.dtype == np.float32
    s = np.from_dlpack(q.value(2.5))  # a scalar value: a new 0-d tensor
    assert s.shape == () and s == 2.5


def test_export_copy_flags():
    x = sample("float64", (3, 2))
    A = q.value(x)
    cap = A.__dlpack__(max_version=(1, 0), copy=True)
    m = versioned_struct(cap)
    assert m.flags == IS_COPIED and m.dl_tensor.data != address(A)
    c = np.from_dlpack(Holder(cap))
    c[0, 0] = 100
    assert A.to_py()[0, 0] == x[0, 0]  # independent
    assert A._pinned_to() == -1  # the copy is pinned, not A
    cap = A.__dlpack__(max_version=(1, 0), copy=False)
    assert versioned_struct(cap).flags == 0 and versioned_struct(cap).dl_tensor.data == address(A)
    n = np.from_dlpack(A, copy=True)
    assert n.ctypes.data != address(A)
    np.testing.assert_array_equal(n, x)
    scalar_cap = q.value(1.5).__dlpack__(max_version=(1, 0))
    assert versioned_struct(scalar_cap).flags == IS_COPIED
    with pytest.raises(BufferError, match="scalar"):
        q.value(1.5).__dlpack__(copy=False)


def test_export_bad_arguments():
    x = sample("float32", (2, 2))
    A = q.value(x)
    cases = [
        (dict(stream=1), ValueError, "stream must be None"),
        (dict(stream=-1), ValueError, "stream must be None"),
        (dict(stream="s"), TypeError, "stream must be None"),
        (dict(max_version=(1,)), ValueError, "max_version"),
        (dict(max_version=(1, 0, 0)), ValueError, "max_version"),
        (dict(max_version="1.0"), TypeError, "max_version"),
        (dict(max_version=(1, "0")), TypeError, "max_version"),
        (dict(max_version=(1.0, 0)), TypeError, "max_version"),
        (dict(max_version=(-1, 0)), ValueError, "max_version"),
        (dict(dl_device=(kDLCUDAHost, 0)), BufferError, "kDLCUDAHost"),
        (dict(dl_device=(kDLCPU, 1)), BufferError, "device id must be 0"),
        (dict(dl_device=(kDLCPU,)), ValueError, "dl_device"),
        (dict(dl_device="cpu"), TypeError, "dl_device"),
        (dict(copy="yes"), TypeError, "copy must be"),
        (dict(copy=1), TypeError, "copy must be"),
    ]
    for kwargs, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            A.__dlpack__(**kwargs)
        assert A._pinned_to() == -1  # nothing was exported
    with pytest.raises(TypeError):
        A.__dlpack__(None)  # keyword-only, as the spec says
    np.testing.assert_array_equal(A.to_py(), x)
    for bad in (q.value("text"), q.value(["a", 1])):
        with pytest.raises(BufferError, match="only tensor and scalar"):
            bad.__dlpack__()
        with pytest.raises(BufferError, match="only tensor and scalar"):
            bad.__dlpack_device__()
        with pytest.raises(BufferError):
            np.from_dlpack(bad)


# ---- import: producers -> qvalue ----


@pytest.mark.parametrize("dtype", DTYPES)
def test_import_every_dtype_shares_memory(dtype):
    x = sample(dtype)
    A = q.from_dlpack(x)
    assert A.dtype == x.dtype and A.shape == x.shape
    assert address(A) == x.ctypes.data
    np.testing.assert_array_equal(A.to_py(), x)
    A[1, 2] = q.value(np.ones((), dtype=dtype))  # isthmus -> NumPy
    assert x[1, 2] == one(dtype)
    x[0, 0] = 0  # NumPy -> isthmus
    assert A.to_py()[0, 0] == 0


def test_import_strided_0d_empty():
    x = sample("float64", (6, 5))
    for view in (x.T, x[::2, 1::2], x[::-1, ::-2], x[None, :, 3]):
        A = q.from_dlpack(view)
        assert address(A) == view.__array_interface__["data"][0]
        np.testing.assert_array_equal(A.to_py(), view)
    z = np.array(4.25)
    Z = q.from_dlpack(z)
    assert Z.shape == () and float(Z) == 4.25 and address(Z) == z.ctypes.data
    E = q.from_dlpack(np.zeros((3, 0), dtype=np.int16))
    assert E.shape == (3, 0) and E.dtype == np.int16


def test_import_zero_strides():
    base = sample("float32", (4,))
    p = Producer(base)
    p.shape, p.strides = (3, 4), (0, 1)
    A = q.from_dlpack(p)
    assert A.shape == (3, 4) and address(A) == base.ctypes.data
    np.testing.assert_array_equal(A.to_py(), np.broadcast_to(base, (3, 4)))
    base[1] = 9
    assert (A.to_py()[:, 1] == 9).all()


def test_import_read_only_is_copied_or_refused():
    ro = sample("float64", (4,))
    ro.flags.writeable = False
    A = q.from_dlpack(ro)  # NumPy flags the capsule READ_ONLY: isthmus copies
    assert address(A) != ro.ctypes.data
    np.testing.assert_array_equal(A.to_py(), ro)
    A[0] = 123.0
    assert ro[0] != 123.0  # the read-only memory was never written
    with pytest.raises(ValueError, match="read-only"):
        q.from_dlpack(ro, copy=False)
    # the flag from any producer: copied at once, the producer's deleter called right away
    buf = sample("int32", (5,))
    p = Producer(buf, flags=READ_ONLY)
    B = q.from_dlpack(p)
    assert p.deleted == 1 and address(B) != buf.ctypes.data
    np.testing.assert_array_equal(B.to_py(), buf)
    with pytest.raises(ValueError, match="read-only"):
        q.from_dlpack(p, copy=False)
    gc.collect()
    assert p.deleted == 2  # the refused capsule went back to its producer


def test_import_copy_flags():
    x = sample("float32", (3, 3))
    C = q.from_dlpack(x, copy=True)
    assert address(C) != x.ctypes.data
    np.testing.assert_array_equal(C.to_py(), x)
    x[0, 0] = 50
    assert C.to_py()[0, 0] != 50
    S = q.from_dlpack(x, copy=False)
    assert address(S) == x.ctypes.data
    # a producer that copies for us (IS_COPIED): its copy is taken as is, no second copy
    src = sample("int64", (4,))
    theirs = src.copy()
    p = Producer(src, copied=theirs)
    D = q.from_dlpack(p, copy=True)
    assert p.calls[-1]["copy"] is True and address(D) == theirs.ctypes.data
    # a producer that ignores copy=True (no IS_COPIED): isthmus copies
    p2 = Producer(src)
    E = q.from_dlpack(p2, copy=True)
    assert address(E) != src.ctypes.data and p2.deleted == 1
    np.testing.assert_array_equal(E.to_py(), src)
    # copy=None passes no copy keyword; copy=False passes False
    q.from_dlpack(p2)
    assert "copy" not in p2.calls[-1] and p2.calls[-1]["max_version"] == (1, 1)
    q.from_dlpack(p2, copy=False)
    assert p2.calls[-1]["copy"] is False
    q.from_dlpack(p2, device="cpu")
    assert p2.calls[-1]["dl_device"] == (kDLCPU, 0)
    del D, E


def test_import_misaligned_is_copied():
    raw = rng.integers(0, 255, size=64).astype(np.uint8)
    p = Producer(raw)
    p.dtype, p.shape, p.strides = (kDLFloat, 64, 1), (3,), (1,)
    p.byte_offset = 9  # element 0 at raw + 9: not 8-byte aligned
    B = q.from_dlpack(p)
    assert p.deleted == 1  # copied, and the producer's memory given back at once
    expected = np.frombuffer(raw.tobytes()[9:33], dtype=np.float64)
    np.testing.assert_array_equal(B.to_py(), expected)
    with pytest.raises(ValueError, match="aligned"):
        q.from_dlpack(p, copy=False)


def test_import_legacy_producer_fallback():
    x = sample("float32", (2, 3))
    p = Producer(x, versioned=False)
    p.accepts_keywords = False
    A = q.from_dlpack(p)
    assert address(A) == x.ctypes.data and p.calls[-1] == {}
    C = q.from_dlpack(p, copy=True)  # the legacy capsule cannot say IS_COPIED: isthmus copies
    assert address(C) != x.ctypes.data
    np.testing.assert_array_equal(C.to_py(), x)


def test_import_null_strides_and_byte_offset():
    x = sample("int16", (3, 4))
    p = Producer(x)
    p.null_strides = True
    A = q.from_dlpack(p)
    np.testing.assert_array_equal(A.to_py(), x)
    p2 = Producer(x)
    p2.shape, p2.strides, p2.byte_offset = (2, 4), (4, 1), 4 * 2  # from row 1 on
    B = q.from_dlpack(p2)
    assert address(B) == x.ctypes.data + 8
    np.testing.assert_array_equal(B.to_py(), x[1:])


def test_import_host_memory_devices():
    x = sample("float32", (3,))
    p = Producer(x)
    p.device = (kDLCUDAHost, 0)  # pinned host memory: readable by the CPU
    A = q.from_dlpack(p)
    assert address(A) == x.ctypes.data


def test_deleter_called_exactly_once():
    x = sample("float64", (4, 4))
    p = Producer(x)
    A = q.from_dlpack(p)
    V = A[1:, ::2]  # a view keeps the storage (and the producer's memory) alive
    del A
    gc.collect()
    assert p.deleted == 0
    np.testing.assert_array_equal(V.to_py(), x[1:, ::2])
    del V
    gc.collect()
    assert p.deleted == 1
    # a capsule never consumed: its destructor calls the deleter
    cap = p.capsule()
    del cap
    gc.collect()
    assert p.deleted == 2
    # legacy capsules likewise
    L = q.from_dlpack(Producer(x, versioned=False).capsule())
    del L
    p3 = Producer(x, versioned=False)
    B = q.from_dlpack(p3)
    del B
    gc.collect()
    assert p3.deleted == 1


def test_import_keeps_the_source_alive():
    x = sample("float32", (16,))
    expected = x.copy()
    r = weakref.ref(x)
    A = q.from_dlpack(x)
    del x
    gc.collect()
    assert r() is not None  # NumPy's deleter holds the array
    np.testing.assert_array_equal(A.to_py(), expected)
    del A
    gc.collect()
    assert r() is None  # released exactly when the last view went


def test_from_dlpack_of_qvalues():
    A = q.value(sample("float32", (3, 2)))
    assert address(q.from_dlpack(A)) == address(A)
    C = q.from_dlpack(A, copy=True)
    assert address(C) != address(A)
    np.testing.assert_array_equal(C.to_py(), A.to_py())
    s = q.from_dlpack(q.value(2.5))
    assert s.kind == "scalar" and float(s) == 2.5
    with pytest.raises(TypeError, match="only tensor and scalar"):
        q.from_dlpack(q.value("text"))


def test_dlpack_producers_everywhere_a_qvalue_is():
    x = sample("float64", (3, 4))
    y = sample("float64", (3, 4))
    p = Producer(x)
    A = q.asvalue(p)  # zero-copy
    assert address(A) == x.ctypes.data
    B = q.from_py(Producer(x))
    assert address(B) == x.ctypes.data
    C = q.value(Producer(x))  # value() copies
    assert address(C) != x.ctypes.data
    np.testing.assert_array_equal(C.to_py(), x)
    Y = q.value(y)
    np.testing.assert_allclose((Y + Producer(x)).to_py(), y + x)
    np.testing.assert_allclose((Producer(x) * Y).to_py(), x * y)
    F = q.value(Producer(x), dtype="float32")
    assert F.dtype == np.float32
    np.testing.assert_allclose(F.to_py(), x.astype(np.float32))


def test_import_bad_inputs():
    x = sample("float32", (2, 3))
    keep = x.copy()

    def producer(**fields):
        p = Producer(x)
        for k, v in fields.items():
            setattr(p, k, v)
        return p

    cases = [
        (dict(dtype=(kDLFloat8_e4m3fn, 8, 1)), TypeError, "float8_e4m3fn"),
        (dict(dtype=(kDLFloat, 32, 4)), TypeError, "lanes=4"),
        (dict(dtype=(kDLOpaqueHandle, 64, 1)), TypeError, "no isthmus equivalent"),
        (dict(dtype=(kDLInt, 24, 1)), TypeError, "bits=24"),
        (dict(dtype=(kDLBool, 1, 1)), TypeError, "bits=1"),
        (dict(device=(4, 0)), BufferError, "kDLOpenCL"),
        (dict(version=(2, 0)), BufferError, "version 2.0"),
        (dict(ndim=-1), ValueError, "ndim"),
        (dict(ndim=40), ValueError, "ndim"),
        (dict(shape=(2, -3)), ValueError, "size -3"),
        (dict(null_data=True), ValueError, "NULL"),
        (dict(strides=(2**62, 1)), ValueError, "overflow"),
        (dict(byte_offset=2**64 - 16), ValueError, "byte_offset"),
    ]
    for fields, exc, msg in cases:
        p = producer(**fields)
        with pytest.raises(exc, match=msg):
            q.from_dlpack(p)
        gc.collect(0)  # the traceback cycle is young; a full collection costs seconds here
        # a refused capsule is not consumed: its producer's destructor freed it, once
        assert p.deleted == (1 if p.calls else 0), fields
    np.testing.assert_array_equal(x, keep)
    # NULL data is fine for an empty tensor, whatever its byte_offset (fuzz finding: the offset
    # was added to the NULL pointer)
    E = q.from_dlpack(producer(null_data=True, shape=(0, 3), byte_offset=1))
    assert E.shape == (0, 3) and E.to_py().shape == (0, 3)


def test_import_bad_objects_and_arguments():
    x = sample("float32", (3,))
    for bad in ([1, 2, 3], 3, None, object(), "dltensor"):
        with pytest.raises(TypeError, match="__dlpack__"):
            q.from_dlpack(bad)

    class NotACapsule:
        def __dlpack__(self, **kwargs):
            return 42

    with pytest.raises(TypeError, match="PyCapsule"):
        q.from_dlpack(NotACapsule())
    # a capsule used twice
    cap = q.value(x).__dlpack__(max_version=(1, 0))
    q.from_dlpack(cap)
    with pytest.raises(ValueError, match="already consumed"):
        q.from_dlpack(cap)
    with pytest.raises(ValueError, match="already consumed"):
        q.from_dlpack(Holder(cap))
    # a capsule of another kind
    import datetime
    with pytest.raises(TypeError, match="not a DLPack capsule"):
        q.from_dlpack(datetime.datetime_CAPI)
    # keyword checks
    with pytest.raises(TypeError, match="copy must be"):
        q.from_dlpack(x, copy="no")
    # device="cuda" and CUDA producers: tests/python/py_boundary/test_dlpack_cuda.py
    with pytest.raises(ValueError, match="unknown device"):
        q.from_dlpack(x, device="tpu")
    with pytest.raises(TypeError, match="device"):
        q.from_dlpack(x, device=1.5)
    with pytest.raises(TypeError):
        q.from_dlpack(x, None)  # device and copy are keyword-only
    assert address(q.from_dlpack(x, device=(kDLCPU, 0))) == x.ctypes.data


def test_requires_init():
    x = sample("float32", (2,))
    A = q.value(x)
    q.destroy()
    try:
        with pytest.raises(RuntimeError, match="init"):
            q.from_dlpack(x)
        with pytest.raises(RuntimeError, match="init"):
            A.__dlpack__()
    finally:
        q.init("cpu")
    assert A._pinned_to() == -1
