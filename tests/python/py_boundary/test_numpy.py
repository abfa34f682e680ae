# Zero-copy NumPy exchange: buffer protocol, __array_interface__, from_py/asvalue, pins, lifetimes.
import gc
import sys
import threading
import weakref

import numpy as np
import pytest

import isthmus as q
from memory_helpers import address

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]


def sample(dtype, shape=(3, 4)):
    x = (np.arange(np.prod(shape)).reshape(shape) % 5).astype(dtype)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * x[::-1]
    return x


# ---- qvalue -> NumPy ----


def test_asarray_shares_memory():
    A = q.value([[1.0, 2.0], [3.0, 4.0]])
    n = np.asarray(A)
    assert n.__array_interface__["data"][0] == address(A)
    assert n.dtype == np.float32 and n.shape == (2, 2) and n.flags.writeable
    n[0, 1] = 20  # NumPy -> isthmus
    assert A.to_py()[0, 1] == 20
    A[1, 0] = 30  # isthmus -> NumPy
    assert n[1, 0] == 30
    assert A._pinned_to() == q.MEMRESOURCE_CPU
    del n
    gc.collect()
    assert A._pinned_to() == -1  # the export's owner released the pin


def test_memoryview_and_buffer_owner():
    A = q.value([1, 2, 3], dtype="int32")
    m = memoryview(A)
    assert m.format == "i" and m.shape == (3,) and m.tolist() == [1, 2, 3] and not m.readonly
    assert type(m.obj).__name__ == "_export_owner"
    assert A._pinned_to() == q.MEMRESOURCE_CPU
    m.release()
    assert A._pinned_to() == -1


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_exports_zero_copy(dtype):
    x = sample(dtype)
    A = q.value(x)
    n = np.asarray(A)
    assert n.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(n, x)
    assert n.__array_interface__["data"][0] == address(A)
    np.testing.assert_array_equal(A.to_py(), x)


def test_strided_views_export_with_strides():
    x = np.arange(24, dtype=np.float64).reshape(4, 6)
    A = q.value(x)
    for key in [(slice(None), slice(None, None, 2)), (slice(None, None, -1),), (1,),
                (slice(1, 3), slice(4, 0, -2))]:
        v = A[key]
        n = np.asarray(v)
        np.testing.assert_array_equal(n, x[key])
        assert n.__array_interface__["data"][0] == address(v)
    # consumers that need contiguity are refused cleanly
    with pytest.raises(BufferError, match="strided"):
        np.frombuffer(A[:, ::2])
    assert np.frombuffer(A).tolist() == list(range(24))


def test_array_interface_property():
    A = q.value([[1, 2, 3], [4, 5, 6]], dtype="int16")
    ai = A.__array_interface__
    assert ai["version"] == 3 and ai["shape"] == (2, 3) and ai["typestr"] == "<i2"
    assert ai["data"] == (address(A), False) and ai["strides"] is None
    t = A[:, ::2].__array_interface__
    assert t["strides"] == (6, 4)

    class Holder:  # a consumer that only knows __array_interface__
        def __init__(self, ai):
            self.__array_interface__ = ai

    B = q.value([1.0, 2.0])
    n = np.asarray(Holder(B.__array_interface__))
    n[0] = 9
    assert B.to_py()[0] == 9
    assert B._pinned_to() == q.MEMRESOURCE_CPU  # pinned for the rest of B's life


def test_array_protocol():
    A = q.value([1.0, 2.0])
    n = A.__array__()
    assert n.__array_interface__["data"][0] == address(A)
    c = A.__array__(copy=True)
    assert c.__array_interface__["data"][0] != address(A)
    d = np.array(A, dtype=np.float64)
    assert d.dtype == np.float64 and d.tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="copy"):
        A.__array__(np.float64, copy=False)
    s = np.asarray(q.value(2.5))
    assert s.shape == () and s.dtype == np.float32 and s == 2.5
    np.testing.assert_array_equal(np.add(A, 1), [2.0, 3.0])


def test_numpy_view_outlives_qvalue():
    A = q.value(np.arange(1000, dtype=np.float64))
    ref = weakref.ref(A)
    n = np.asarray(A)
    del A
    gc.collect()
    assert ref() is None  # the qvalue is gone, the owner keeps the storage
    assert n.sum() == sum(range(1000))
    n[:] = 1
    assert n.sum() == 1000


def test_bfloat16_export_raises_type_error():
    B = q.value([1.0, 2.0], dtype="bfloat16")
    for f in (np.asarray, memoryview, lambda b: b.to_py(), lambda b: b.__array_interface__):
        with pytest.raises(TypeError, match="bfloat16"):
            f(B)
    assert B.astype("float32").to_py().tolist() == [1.0, 2.0]
    assert B._pinned_to() == -1


def test_non_tensors_do_not_export():
    with pytest.raises(TypeError):
        memoryview(q.value("abc"))
    with pytest.raises(TypeError):
        memoryview(q.value(1.0))
    with pytest.raises(AttributeError):
        q.value("abc").__array_interface__


def test_to_py_copies():
    A = q.value([1.0, 2.0])
    n = A.to_py()
    assert n.__array_interface__["data"][0] != address(A)
    n[0] = 5
    assert A.to_py()[0] == 1
    assert A._pinned_to() == -1


# ---- NumPy -> qvalue ----


def test_from_py_shares_memory():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    A = q.from_py(x)
    assert address(A) == x.ctypes.data
    assert A.dtype == np.float32 and A.shape == (3, 4)
    x[0, 0] = 100  # NumPy -> isthmus
    assert A.to_py()[0, 0] == 100
    A[2, 3] = -1  # isthmus -> NumPy
    assert x[2, 3] == -1
    assert A._pinned_to() == q.MEMRESOURCE_CPU
    assert np.shares_memory(np.asarray(A), x)


def test_asvalue():
    x = np.ones(5, dtype=np.int64)
    A = q.asvalue(x)
    assert address(A) == x.ctypes.data
    assert q.asvalue(A) is A
    assert q.asvalue([1.0, 2.0]).dtype == np.float32  # lists as value()
    assert q.asvalue(3).kind == "scalar"


@pytest.mark.parametrize("dtype", DTYPES)
def test_from_py_every_dtype(dtype):
    x = sample(dtype)
    A = q.from_py(x)
    assert address(A) == x.ctypes.data
    assert A.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(A.to_py(), x)


def test_from_py_non_contiguous_is_zero_copy():
    base = np.arange(60, dtype=np.float64).reshape(6, 10)
    for x in (base[::2, 1::3], base.T, base[::-1, ::-2], base[:, 3]):
        A = q.from_py(x)
        assert address(A) == x.__array_interface__["data"][0]
        np.testing.assert_array_equal(A.to_py(), x)
        A[...] = 0
        assert (x == 0).all()
        x[...] = 7
        assert (A.to_py() == 7).all()


def test_from_py_copies_when_it_must():
    # strides that are not whole elements: a structured field
    rec = np.zeros(4, dtype=[("a", np.int8), ("b", np.float32)])
    rec["b"] = [1, 2, 3, 4]
    field = rec["b"]
    A = q.from_py(field)
    assert A.to_py().tolist() == [1, 2, 3, 4]
    with pytest.raises(ValueError, match="copy"):
        q.from_py(field, copy=False)
    # read-only arrays are copied (isthmus tensors are writable)
    ro = np.arange(3.0)
    ro.flags.writeable = False
    R = q.from_py(ro)
    assert address(R) != ro.ctypes.data and R.to_py().tolist() == [0, 1, 2]
    R[0] = 5
    assert ro[0] == 0
    with pytest.raises(ValueError, match="read-only"):
        q.from_py(ro, copy=False)
    # non-native byte order
    be = np.arange(3, dtype=">i4")
    B = q.from_py(be)
    assert B.dtype == np.int32 and B.to_py().tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="byte order"):
        q.from_py(be, copy=False)
    # unaligned
    raw = np.zeros(33, dtype=np.uint8)
    un = raw[1:].view(np.float64)
    un[:] = [1, 2, 3, 4]
    U = q.from_py(un)
    assert U.to_py().tolist() == [1, 2, 3, 4]
    with pytest.raises(ValueError, match="aligned"):
        q.from_py(un, copy=False)


def test_from_py_copy_keyword():
    x = np.arange(4.0)
    C = q.from_py(x, copy=True)
    assert address(C) != x.ctypes.data
    assert address(q.from_py(x, copy=False)) == x.ctypes.data
    # See Note [inbound rule]: Python floats take the `scalar` precision wherever they cross, in
    # lists too (q.value, operators and from_py agree); NumPy arrays keep their dtype
    assert q.from_py([1.0, 2.0]).dtype == np.float32
    assert q.from_py(np.array([1.0, 2.0])).dtype == np.float64
    assert q.from_py([1, 2]).dtype == np.int64
    with pytest.raises(ValueError):
        q.from_py([1.0, 2.0], copy=False)


def test_from_py_bad_dtypes():
    for bad in (np.array(["a"]), np.array([object()]), np.zeros(2, dtype="datetime64[s]"),
                np.zeros(2, dtype=np.longdouble)):
        with pytest.raises(TypeError, match="no isthmus equivalent"):
            q.from_py(bad)
        with pytest.raises(TypeError):
            q.value(bad)


def test_qvalue_outlives_numpy_source():
    x = np.arange(100, dtype=np.float64)
    ref = weakref.ref(x) if hasattr(x, "__weakref__") else None
    rc = sys.getrefcount(x)
    A = q.from_py(x)
    assert sys.getrefcount(x) == rc + 1  # the storage holds one reference
    del x
    gc.collect()
    assert A.to_py().sum() == sum(range(100))
    B = A[10:20]
    del A
    gc.collect()
    assert B.to_py().tolist() == list(range(10, 20))
    del B
    gc.collect()
    if ref is not None:
        assert ref() is None  # released when the last view died


def test_release_runs_once_and_drops_the_reference():
    x = np.arange(10.0)
    rc = sys.getrefcount(x)
    views = [q.from_py(x)[i:] for i in range(5)]
    assert sys.getrefcount(x) == rc + 5  # one per wrap (each from_py wraps anew)
    del views
    gc.collect()
    assert sys.getrefcount(x) == rc


def test_release_on_another_thread():
    x = np.arange(10.0)
    rc = sys.getrefcount(x)
    box = [q.from_py(x)]

    def drop():
        box.clear()

    t = threading.Thread(target=drop)
    t.start()
    t.join()
    gc.collect()
    assert sys.getrefcount(x) == rc


def test_round_trip_keeps_one_memory():
    x = np.zeros(8, dtype=np.float32)
    A = q.from_py(x)
    n = np.asarray(A)
    assert np.shares_memory(n, x)
    n[3] = 1
    assert x[3] == 1 and A.to_py()[3] == 1


def test_empty_arrays():
    e = q.from_py(np.zeros((0, 3)))
    assert e.shape == (0, 3) and e.to_py().shape == (0, 3)
    assert np.asarray(q.zeros(0)).shape == (0,)
