# qvalue basics: constructors, dtypes, Quasar types, size/print, attributes, text, cells, indexing.
import ctypes

import numpy as np
import pytest

import isthmus as q


# ---- constructors ----


def test_value_from_int_list_uses_numpy_inference():
    a = q.value([5, 4, 3, 2, 1])
    assert a.kind == "tensor"
    assert a.dtype == np.int64 and a.shape == (5,)
    assert a.to_py().tolist() == [5, 4, 3, 2, 1]


def test_value_from_float_list_is_scalar_dtype():
    a = q.value([[1.5, 2], [3, 4]])
    assert a.dtype == np.float32 and a.shape == (2, 2)
    np.testing.assert_array_equal(a.to_py(), np.array([[1.5, 2], [3, 4]], np.float32))
    assert q.value([1j, 2]).dtype == np.complex64
    assert q.value([True, False]).dtype == np.bool_
    assert q.value((1.0, 2.0)).dtype == np.float32
    assert q.value([[1, np.float64(2.5)]]).dtype == np.float32


def test_value_from_wide_int_list_keeps_numpys_float64():
    # NumPy makes float64 of ints past int64's and uint64's ranges together; no float is in the
    # list, so the scalar dtype (float32) would only round the integers (fuzz finding)
    x = [[0, -2147483649], [0, 2**63]]
    a = q.value(x)
    assert a.dtype == np.float64
    np.testing.assert_array_equal(a.to_py(), np.asarray(x))
    assert q.value([-1, 2**63, 0.5]).dtype == np.float32  # a float: the scalar dtype


def test_value_with_dtype():
    assert q.value([1, 2], dtype="float64").dtype == np.float64
    assert q.value([1, 2], dtype=np.int8).dtype == np.int8
    assert q.value([1, 2], dtype=np.dtype("uint16")).dtype == np.uint16
    assert q.value([1.5, 2.5], dtype="f8").dtype == np.float64
    b = q.value([1.0, 2.0], dtype="bfloat16")
    assert b.dtype == "bfloat16" and b.shape == (2,)
    assert b.astype("float32").to_py().tolist() == [1.0, 2.0]


def test_value_scalars():
    s = q.value(2.0)
    assert s.kind == "scalar" and s.dtype == np.float32 and s.shape == () and s.ndim == 0
    assert float(s) == 2.0
    assert q.value(3).dtype == np.int64 and int(q.value(3)) == 3
    assert q.value(True).dtype == np.bool_ and bool(q.value(True))
    assert q.value(1 + 2j).dtype == np.complex64 and complex(q.value(1 + 2j)) == 1 + 2j
    assert q.value(2**63).dtype == np.uint64
    assert q.value(np.float16(1.5)).dtype == np.float16
    assert q.value(np.int16(-7)).dtype == np.int16 and int(q.value(np.int16(-7))) == -7
    assert q.value(2.5, dtype="float64").dtype == np.float64
    assert q.value(2.7, dtype="int32").to_py() == 2
    pyval = q.value(2.5).to_py()
    assert isinstance(pyval, np.float32) and pyval == 2.5
    with pytest.raises(OverflowError, match="64 bits"):  # NumPy 2 raises OverflowError too
        q.value(2**70)


def test_value_strings_none_and_cells():
    s = q.value("hello")
    assert s.kind == "string" and str(s) == "hello" and len(s) == 5 and s.to_py() == "hello"
    assert repr(s) == "qvalue('hello')"
    n = q.value(None)
    assert n.kind == "none" and n.to_py() is None and not n
    c = q.value(["a", 1.5, [1, 2]])
    assert c.kind == "cell" and len(c) == 3 and c.shape == (3,)
    assert c[0].kind == "string" and c[1].kind == "scalar" and c[2].kind == "tensor"
    items = c.to_py()
    assert items[0] == "a" and items[1] == np.float32(1.5) and items[2].tolist() == [1, 2]


def test_value_copies():
    x = np.arange(4.0)
    a = q.value(x)
    x[0] = 100
    assert a.to_py()[0] == 0
    assert a.dtype == np.float64  # arrays keep their dtype
    b = q.value(a)
    b[1] = 50
    assert a.to_py()[1] == 1
    c = q.value(a, dtype="int32")
    assert c.dtype == np.int32


def test_value_bad_inputs():
    with pytest.raises(ValueError):
        q.value([[1, 2], [3]])  # ragged
    with pytest.raises(TypeError):
        q.value([object()])
    with pytest.raises(TypeError, match="dtype"):
        q.value([1.0], dtype="nonsense")
    with pytest.raises(TypeError, match="does not apply"):
        q.value("abc", dtype="float32")
    with pytest.raises(TypeError):
        q.value({"a": 1})


@pytest.mark.parametrize("make, fill", [(q.zeros, 0), (q.ones, 1)])
def test_zeros_ones(make, fill):
    for A in (make(20, 20, 3), make([20, 20, 3]), make((20, 20, 3)), make(np.int64(20), 20, 3)):
        assert A.shape == (20, 20, 3) and A.dtype == np.float32
        assert (A.to_py() == fill).all()
    assert make(2, dtype="int16").dtype == np.int16
    assert make(2, dtype=np.complex128).to_py().tolist() == [fill, fill]
    assert make().shape == ()
    assert make(0, 3).shape == (0, 3)


def test_uninit_accepts_the_seeds_spelling():
    A = q.zeros(4, 5)
    B = q.uninit(list(A.size()))
    assert B.shape == (4, 5) and B.dtype == np.float32
    assert q.uninit(3, dtype="uint8").dtype == np.uint8


@pytest.mark.parametrize(
    "args, exc",
    [((2.5,), TypeError), ((-1,), ValueError), ((2, "3"), TypeError), (("ab",), TypeError),
     ((True,), TypeError), (([2, -3],), ValueError), (([2.0],), TypeError)],
)
def test_size_arguments_are_checked(args, exc):
    with pytest.raises(exc):
        q.zeros(*args)


# ---- Quasar types ----


def test_typename_builds_values():
    w = q.typename("vec[mat]")(4)
    assert w.kind == "cell" and len(w) == 4
    assert all(x.kind == "tensor" and x.shape == (0, 0) for x in w)
    m = q.typename("mat")(3, 4)
    assert m.shape == (3, 4) and m.dtype == np.float32 and (m.to_py() == 0).all()
    assert q.typename("ivec")(3).dtype == np.int32
    assert q.typename("cube")([2, 3, 4]).shape == (2, 3, 4)
    t = q.typename("cube{3}")
    assert str(t) == "cube" and repr(t) == "qtype('cube')" and t == "cube" and t.rank == 3
    assert q.typename("cube{:}").rank is None and q.typename("vec[mat]").kind == "cell"
    assert q.typename("vec[mat]").element == q.typename("mat")


def test_type_tests():
    A = q.zeros(2, 3, 4)
    assert q.type(A, "cube{:}") and q.type(A, "cube") and not q.type(A, "mat")
    assert q.type(q.zeros(3), "vec") and q.type(q.value(1.0), "scalar")
    assert q.type(np.zeros((2, 2), np.float32), "mat")
    assert q.type(A, q.typename("cube"))
    assert q.typename("vec").matches(q.zeros(3))
    with pytest.raises(ValueError, match="position"):
        q.type(A, "cube{")
    with pytest.raises(TypeError):
        q.type(A, 3)


def test_typename_errors():
    with pytest.raises(ValueError, match="expected"):
        q.typename("vec[mat")
    with pytest.raises(ValueError):
        q.typename("mat")(3)  # wrong number of sizes


# ---- size, print, attributes, text ----


def test_size():
    A = q.zeros(4, 5, 6)
    assert q.size(A) == (4, 5, 6) == A.size() == A.shape
    assert q.size(A, [0, 1]) == (4, 5)
    assert q.size(A, 2) == 6 and A.size(-1) == 6
    assert q.size(np.zeros((2, 7))) == (2, 7)
    assert A.numel() == 120 and A.ndim == 3 and len(A) == 4
    assert A.nbytes == 480 and A.itemsize == 4
    with pytest.raises(IndexError):
        q.size(A, 3)


def test_print(capsys):
    A = q.value([[1, 2], [3, 4]])
    q.print(A)
    q.print("x =", q.value(2.0))
    out = capsys.readouterr().out
    assert out == "[[1 2]\n [3 4]]\nx = 2.0\n"


def test_attributes_and_text():
    A = q.value([[1.5, 2.0], [3.0, 4.0]])
    assert A.device == "cpu"
    assert isinstance(A.dtype, np.dtype) and A.dtype == np.float32 and A.dtype == "float32"
    assert str(A) == str(A.to_py())
    assert repr(A) == "qvalue([[1.5 2. ]\n        [3.  4. ]], dtype=float32)"
    assert repr(q.value(2.0)) == "qvalue(2.0, dtype=float32)"
    with pytest.raises(TypeError, match="0-d"):
        len(q.zeros())
    with pytest.raises(TypeError, match="no shape"):
        q.value("s").shape


def test_numbers_from_values():
    assert float(q.value([2.5])) == 2.5
    assert int(q.value([[7]])) == 7
    assert [10, 20, 30][q.value(1)] == 20
    assert q.value([3]).item() == 3
    with pytest.raises(TypeError, match="one-element"):
        float(q.zeros(2))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(q.zeros(2))
    with pytest.raises(TypeError, match="integer"):
        [1, 2][q.value(1.0)]


# ---- cells as sequences ----


def test_cells_are_sequences():
    c = q.typename("vec[vec]")(3)
    assert len(c) == 3 and [x.shape for x in c] == [(0,)] * 3
    c[1] = q.value([1.0, 2.0])
    c[-1] = "three"
    assert c[1].to_py().tolist() == [1.0, 2.0] and str(c[2]) == "three"
    assert [x.kind for x in c] == ["tensor", "tensor", "string"]
    assert len(list(iter(c))) == 3
    with pytest.raises(IndexError):
        c[3]
    with pytest.raises(TypeError):
        c["a"]
    m = q.typename("mat[vec]")(2, 3)
    assert len(m) == 6 and m.shape == (2, 3)
    m[1, 2] = 5
    assert m[1, 2].kind == "scalar" and m[5].kind == "scalar"
    with pytest.raises(IndexError):
        m[2, 0]


# ---- basic indexing ----


def test_basic_indexing_matches_numpy():
    x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    A = q.value(x)
    for key in [0, -1, (1, 2), (slice(None), 2, 3), (Ellipsis, 1), (slice(None, None, -1),),
                (None, 1), (slice(1, None, 2), Ellipsis, slice(None, 2)), ()]:
        got = A[key]
        want = x[key]
        np.testing.assert_array_equal(np.asarray(got.to_py()), want)
    assert A[1, 2, 3].kind == "scalar" and float(A[1, 2, 3]) == x[1, 2, 3]
    assert len(list(A)) == 3


def test_basic_index_assignment():
    A = q.zeros(3, 4)
    A[1] = 5
    A[:, 2] = q.value([1.0, 2.0, 3.0])
    A[0, 0] = np.float64(9)
    A[2, :2] = np.array([7, 8])
    want = np.zeros((3, 4), np.float32)
    want[1] = 5
    want[:, 2] = [1, 2, 3]
    want[0, 0] = 9
    want[2, :2] = [7, 8]
    np.testing.assert_array_equal(A.to_py(), want)
    with pytest.raises(ValueError):
        A[0] = q.value([1.0, 2.0])  # does not broadcast
    with pytest.raises(IndexError):
        A[3] = 1
    np.testing.assert_array_equal(A.to_py(), want)  # unchanged by the failures


def test_views_alias_like_numpy():
    A = q.zeros(3, 4)
    row = A[1]
    row[:] = 2
    assert (A.to_py()[1] == 2).all()


# ---- locks ----


def test_lock_gives_a_ctypes_usable_address():
    A = q.value([1.0, 2.0, 3.0])
    p = A.lock(q.LOCK_READWRITE, q.MEMRESOURCE_CPU)
    assert isinstance(p, int) and p != 0
    buf = (ctypes.c_float * 3).from_address(p)
    assert list(buf) == [1.0, 2.0, 3.0]
    buf[1] = 20.0
    A.unlock(q.LOCK_READWRITE, q.MEMRESOURCE_CPU)
    assert A.to_py().tolist() == [1.0, 20.0, 3.0]
    p2 = A.lock(q.LOCK_READ, q.MEMRESOURCE_DEVICE0)  # DEVICE0 = the init() device = cpu
    assert p2 == p
    A.unlock(q.LOCK_READ, q.MEMRESOURCE_DEVICE0)


def test_lock_of_a_view_points_at_its_first_element():
    A = q.value(np.arange(12, dtype=np.int32).reshape(3, 4))
    v = A[1, 1:]
    p = v.lock(q.LOCK_READ)
    assert ctypes.c_int32.from_address(p).value == 5
    v.unlock(q.LOCK_READ)


def test_lock_bad_inputs():
    A = q.zeros(2)
    for mode in (0, 4, -1):
        with pytest.raises(ValueError, match="lock mode"):
            A.lock(mode, q.MEMRESOURCE_CPU)
    with pytest.raises(ValueError):
        A.lock(q.LOCK_READ, 17)
    with pytest.raises(NotImplementedError):
        A.lock(q.LOCK_READ, q.MEMRESOURCE_SINGLE_OPENCL)
    with pytest.raises(RuntimeError):
        A.unlock(q.LOCK_WRITE, q.MEMRESOURCE_CPU)  # never locked
    A.lock(q.LOCK_READ)
    A.unlock(q.LOCK_READ)
    with pytest.raises(RuntimeError):
        A.unlock(q.LOCK_READ)  # double unlock
    with pytest.raises(TypeError, match="tensor"):
        q.value(1.0).lock(q.LOCK_READ)
    with pytest.raises(TypeError):
        A.lock("read")
    assert A.to_py().tolist() == [0.0, 0.0]
