# Regression reproducers of memory-safety faults: each once crashed, read or wrote out of
# bounds, or answered differently from NumPy; now each raises a typed error or matches NumPy.
import gc
import sys

import numpy as np
import pytest

import isthmus as q

BIG = 2**32


# ---- 1. size arithmetic (Note [checked sizes]) ----


@pytest.mark.parametrize(
    "make",
    [
        lambda: q.zeros(BIG, BIG),
        lambda: q.ones(BIG, BIG),
        lambda: q.uninit(BIG, BIG),
        lambda: q.full((BIG, BIG), 1.0),
        lambda: q.rand(BIG, BIG),
        lambda: q.zeros(0, 2**62, 2**62),
        lambda: q.zeros(1).expand(2**62, 4),
        lambda: q.broadcast_to(q.zeros(1), (2**62, 4)),
        lambda: q.typename("mat[??]")(BIG, BIG),
        lambda: q.arange(0, 2**62),
        lambda: q.zeros(0).reshape(2**62, 2**62, 0),
    ],
    ids=[
        "zeros",
        "ones",
        "uninit",
        "full",
        "rand",
        "zero_dim_product",
        "expand",
        "broadcast_to",
        "typename",
        "arange",
        "reshape",
    ],
)
def test_too_big_raises_like_numpy(make):
    with pytest.raises(ValueError, match="array is too big"):
        make()


def test_too_big_matches_numpy_messages():
    for shape in [(BIG, BIG), (0, 2**62, 2**62)]:
        with pytest.raises(ValueError, match="array is too big"):
            np.empty(shape)
        with pytest.raises(ValueError, match="array is too big"):
            q.zeros(*shape)


def test_large_but_representable_allocation_is_a_memory_error():
    # 2^60 bytes fits int64 but no machine: MemoryError, as NumPy, and the process lives on.
    with pytest.raises(MemoryError):
        q.zeros(2**60, dtype="int8")
    assert float(q.ones(3).sum()) == 3.0


def test_too_big_cell_raises():
    with pytest.raises(ValueError, match="array is too big"):
        q.typename("vec[mat]")(2**62)
    with pytest.raises((ValueError, MemoryError)):
        q.typename("vec[mat]")(2**40)


# ---- 2. list operands are owned by the operand (Note [operand lifetime]) ----


def test_list_operands():
    np.testing.assert_array_equal((q.ones(3) + [1, 2, 3]).to_py(), [2, 3, 4])
    np.testing.assert_array_equal(([1, 2, 3] - q.ones(3)).to_py(), [0, 1, 2])
    np.testing.assert_array_equal(
        (q.ones((2, 2)) @ [[1, 0], [0, 1]]).to_py(), np.ones((2, 2)) @ np.eye(2)
    )
    np.testing.assert_array_equal(q.where(q.ones(2) > 0, [1, 2], [3, 4]).to_py(), [1, 2])
    for _ in range(200):  # a freed operand would be reused by the next allocation
        r = q.ones(64) * [float(i) for i in range(64)]
        np.testing.assert_array_equal(r.to_py(), np.arange(64, dtype=np.float32))


# ---- 3. cells never contain themselves (Note [cell cycles]) ----


def test_cell_containing_itself_is_refused():
    c = q.typename("vec[??]")(3)
    with pytest.raises(ValueError, match="cannot contain itself"):
        c[0] = c
    d = q.typename("vec[??]")(1)
    d[0] = c
    with pytest.raises(ValueError, match="cannot contain itself"):
        c[1] = d  # c -> d -> c
    assert str(c) == "{none, none, none}"  # unchanged and printable


def test_self_referential_list_raises_recursion_error():
    lst = ["a"]
    lst.append(lst)
    with pytest.raises(RecursionError):
        q.value(lst)


def test_deeply_nested_cells_free_and_print():
    top = q.typename("vec[??]")(1)
    cur = top
    for _ in range(100_000):  # built top-down: no assignment check can bound the depth
        nxt = q.typename("vec[??]")(1)
        cur[0] = nxt
        cur = nxt
    assert "{...}" in str(top)  # printing stops at its depth limit
    with pytest.raises(RecursionError):
        top.to_py()
    del top, cur, nxt
    gc.collect()  # freeing 1e5 levels must not recurse 1e5 deep


def test_deep_cells_raise_whatever_the_recursion_limit(run_python):
    # See Note [native nesting limit]: a library raising sys.setrecursionlimit (torch.compile's
    # inductor does) must not turn RecursionError into a C stack overflow
    res = run_python("""
        import sys
        import isthmus as q
        q.init("cpu")
        sys.setrecursionlimit(200_000)
        top = cur = q.typename("vec[??]")(1)
        for _ in range(100_000):
            nxt = q.typename("vec[??]")(1)
            cur[0] = nxt
            cur = nxt
        for convert in (top.to_py, lambda: q.value([[[1]]] * 2).to_py()):
            try:
                convert()
                print("converted")
            except RecursionError as e:
                print("RecursionError:", e)
    """)
    lines = res.stdout.splitlines()
    assert lines[0].startswith("RecursionError: maximum nesting depth (1000) exceeded while "
                               "converting a cell to a list"), res.stdout
    assert lines[1:] == ["converted"]  # ordinary nesting is unaffected


# ---- 5. slice lengths never overflow (Note [slice length]) ----


@pytest.mark.parametrize("step", [2**63 - 1, -(2**63 - 1), 2**62, -(2**63)])
def test_huge_slice_steps(step):
    A = np.arange(12.0).reshape(4, 3)
    B = q.value(A.astype(np.float32))
    np.testing.assert_array_equal(B[::step].to_py(), A[::step])
    np.testing.assert_array_equal(B[1::step].to_py(), A[1::step])
    np.testing.assert_array_equal(q.value(np.arange(4.0))[::step].to_py(), np.arange(4.0)[::step])


# ---- 7. broadcast views are read-only (Note [read-only broadcast views]) ----


def _broadcast():
    B = q.value(np.arange(3, dtype=np.float32))
    return B, B.expand(2, 3)


@pytest.mark.parametrize(
    "write",
    [
        lambda E: E.__setitem__((0, 0), 5),
        lambda E: E.__setitem__(Ellipsis, 5),
        lambda E: E.__setitem__(slice(None), q.ones(3)),
        lambda E: E.fill(5),
        lambda E: E.__setitem__(([0, 1], [0, 1]), 5),
        lambda E: E.__iadd__(1),
        lambda E: q.put_along_axis(E, q.value([[0], [0]]), 7.0, 1),
    ],
    ids=["item", "ellipsis", "slice", "fill", "advanced", "iadd", "put_along_axis"],
)
def test_broadcast_view_writes_raise(write):
    B, E = _broadcast()
    with pytest.raises(ValueError, match="read-only"):
        write(E)
    np.testing.assert_array_equal(B.to_py(), [0, 1, 2])


def test_broadcast_views_export_read_only():
    B, E = _broadcast()
    a = np.asarray(E)
    assert not a.flags.writeable
    np.testing.assert_array_equal(a, [[0, 1, 2], [0, 1, 2]])
    assert E.__array_interface__["data"][1] is True
    m = memoryview(E)
    assert m.readonly
    with pytest.raises(BufferError, match="legacy DLPack"):
        E.__dlpack__()
    np.testing.assert_array_equal(np.from_dlpack(E), a)  # versioned: read-only flag
    assert not np.from_dlpack(E).flags.writeable
    # A copy is writable, and so is a broadcast view that repeats nothing.
    C = E.contiguous()
    C[0, 0] = 5
    assert float(C[0, 0]) == 5 and float(B[0]) == 0
    one = q.value(np.arange(3, dtype=np.float32)).expand(1, 3)
    one[0, 0] = 9
    assert np.asarray(one).flags.writeable


def test_broadcast_to_is_read_only():
    V = q.broadcast_to(q.zeros(3), (4, 3))
    with pytest.raises(ValueError, match="read-only"):
        V[0] = 1


# ---- 8. NumPy 2's conversion of out-of-range Python numbers (Note [exact number conversion])


@pytest.mark.parametrize(
    "value, dtype, exc",
    [
        (300, "int8", OverflowError),
        (-1, "uint8", OverflowError),
        (2**63, "int64", OverflowError),
        (2**64, "uint64", OverflowError),
        (-(2**63) - 1, "int64", OverflowError),
        (300.0, "int8", OverflowError),
        (float("nan"), "int32", ValueError),
        (float("inf"), "int64", OverflowError),
        (float("-inf"), "uint8", OverflowError),
        (1 + 2j, "int32", TypeError),
        (1 + 2j, "float32", TypeError),
    ],
)
def test_out_of_range_numbers_raise_as_numpy(value, dtype, exc):
    with pytest.raises(exc):
        np.array(value, dtype=dtype)
    with pytest.raises(exc):
        q.value(value, dtype=dtype)
    with pytest.raises(exc):
        q.full((2,), value, dtype=dtype)
    A = q.zeros(3, dtype=dtype)
    with pytest.raises(exc):
        A[0] = value
    with pytest.raises(exc):
        A[[0, 1]] = value
    with pytest.raises(exc):
        A.fill(value)
    np.testing.assert_array_equal(A.to_py(), np.zeros(3, dtype=dtype))


@pytest.mark.parametrize(
    "value, dtype",
    [
        (127, "int8"),
        (-128, "int8"),
        (255, "uint8"),
        (2**63 - 1, "int64"),
        (2**64 - 1, "uint64"),
        (2.7, "int8"),
        (-2.7, "int16"),
        (True, "int8"),
        (1e300, "float32"),
        (3, "complex64"),
        (2**64, "bool"),  # any nonzero Python int is True, however wide (fuzz finding)
        (-(2**70), "bool"),
        (2**64, "float64"),
        (0j, "bool"),  # a complex number's truth, as NumPy (fuzz finding)
        (1j, "bool"),
        (complex(float("nan"), 0), "bool"),
    ],
)
def test_in_range_numbers_convert_as_numpy(value, dtype):
    with np.errstate(over="ignore"):
        expected = np.array(value, dtype=dtype)
    np.testing.assert_array_equal(q.value(value, dtype=dtype).to_py(), expected)
    A = q.zeros(2, dtype=dtype)
    A[0] = value
    assert A.to_py()[0] == expected


@pytest.mark.parametrize(
    "value, dtype",
    [
        (np.int64(2**63 - 1), "int8"),  # wraps all 64 bits (fuzz finding: went through double)
        (np.int64(2**63 - 1), "int32"),
        (np.uint64(2**64 - 1), "int16"),
        (np.int64(-1), "uint64"),
        (np.int64(2**53 + 1), "float64"),
        (np.int32(-7), "uint8"),
        (np.float64(-2.7), "int8"),
        (np.float32(3.5), "uint16"),
        (np.complex128(0j), "bool"),
        (np.complex64(1j), "bool"),
        (np.bool_(True), "int64"),
    ],
)
def test_numpy_scalars_are_cast_as_astype(value, dtype):
    expected = np.asarray(value).astype(dtype)
    got = q.value(value, dtype=dtype)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got.to_py(), expected)


def test_weak_scalar_out_of_range_is_overflow_error():
    with pytest.raises(OverflowError, match="out of bounds for int8"):
        q.zeros(3, dtype="int8") + 300
    with pytest.raises(OverflowError):
        q.zeros(3, dtype="int8") + 2**70
    np.testing.assert_array_equal((q.zeros(3, dtype="uint8") - 1).to_py(), [255] * 3)


def test_typed_scalars_still_cast():
    # NumPy scalars and typed values cast (wrap), as astype does.
    assert int(q.value(np.int64(300), dtype="int8")) == np.int64(300).astype(np.int8)


# ---- 9. clear messages ----


def test_huge_integers_in_indices_and_shapes():
    A = q.zeros(3)
    with pytest.raises(IndexError):
        A[2**63]
    with pytest.raises(IndexError):
        A[-(2**64)]
    with pytest.raises((ValueError, OverflowError), match=r"2\*\*63|9223372036854775808|too big|out of"):
        A.reshape(2**63)
    with pytest.raises((ValueError, OverflowError)):
        q.zeros(2**63)
    with pytest.raises((ValueError, OverflowError, IndexError)):
        q.zeros(2, 3).transpose(2**63, 0)


@pytest.mark.parametrize(
    "call",
    [
        lambda: q.eye(2**63),
        lambda: q.eye(2, 2**64),
        lambda: q.eye(2, k=-(2**63) - 1),
        lambda: q.linspace(0, 1, 2**63),
        lambda: q.randint(2**63),
        lambda: q.randint(0, 2**64),
    ],
)
def test_huge_integers_in_creation_sizes(call):
    # a typed error naming the argument, never pybind11's "incompatible function arguments"
    with pytest.raises(OverflowError, match="does not fit in int64"):
        call()


def test_creation_sizes_take_integers_only():
    with pytest.raises(TypeError, match="must be an int"):
        q.eye(2.5)
    with pytest.raises(TypeError, match="must be an int"):
        q.linspace(0, 1, "3")
    assert q.eye(np.int64(2), k=np.int32(1)).to_py().tolist() == [[0, 1], [0, 0]]
    assert q.linspace(0, 1, num=np.uint8(3)).shape == (3,)


def test_bad_type_names_have_clear_messages():
    with pytest.raises((ValueError, TypeError)) as info:
        q.typename("vec[\ud800]")
    assert "Invoked with" not in str(info.value)


def test_nul_byte_in_plugin_path():
    with pytest.raises(ValueError, match="NUL"):
        q.import_native("/tmp/a\x00b.so")


def test_process_alive_after_everything():
    assert sys.getrefcount(q) > 0
    assert float(q.ones(4).sum()) == 4.0
