"""Indexing against NumPy: qvalue __getitem__ / __setitem__ follow NumPy 2's rules exactly.

Explicit regression tests, one per form that once differed. The seeded differential
test against NumPy is test_indexing_differential.py; the hypothesis-driven fuzzer under
tests/fuzz/python covers the same ground with shrinking.
"""

import random

import numpy as np
import pytest

import isthmus as q
from indexing_helpers import BIG, base, same


# ---- regressions: one test per form that differed from NumPy ----


@pytest.mark.parametrize(
    "shape,key",
    [
        ((3,), (0, None)),
        ((3,), (None, 0)),
        ((3,), (-1, None, None)),
        ((3,), (0, ...)),
        ((3,), (..., 0)),
        ((3,), (0, ..., None)),
        ((2, 3), (0, 1, None)),
        ((2, 3), (None, 0, 1)),
        ((2, 3), (1, None, 2)),
        ((2, 3), (0, 1, ...)),
        ((), None),
        ((), (None,)),
        ((), (None, None)),
        ((), (...,)),
        ((), (..., None)),
        ((), (None, ...)),
        ((), ()),
        ((3,), (np.int64(1), None)),
        ((3,), (np.array(1), None)),
        ((3,), (0, True)),
        ((3,), (0, None, False)),
    ],
)
def test_integer_with_newaxis_keeps_the_new_axis(shape, key):
    a = base(shape)
    same(q.value(a)[key], a[key])


@pytest.mark.parametrize(
    "key", [[], ([],), ([], 0), (0, []), ([[]],), [[], []], (slice(None), []), ([], ...)]
)
def test_empty_list_is_an_empty_integer_index(key):
    a = base((2, 3))
    same(q.value(a)[key], a[key])
    b, qb = a.copy(), q.value(a)
    b[key] = 7
    qb[key] = 7
    same(qb, b)


@pytest.mark.parametrize(
    "shape,key",
    [
        ((2, 4), (None, [1, 0], ..., [0], None)),  # the example: (2, 1, 1)
        ((2, 3, 4), (None, [1, 0], ..., [0], None)),
        ((2, 4), ([1, 0], ..., [0])),  # a zero-width Ellipsis still separates
        ((2, 4), (0, ..., [1, 0])),
        ((2, 3, 4), ([0, 1], slice(None), [0, 2])),
        ((2, 3, 4), (0, slice(None), [0, 1])),  # an integer beside an array is an array
        ((2, 3, 4), (slice(None), 0, [0, 1])),  # adjacent: stays in place
        ((2, 3, 4), ([0, 1], None, [0, 1])),
        ((2, 3, 4), (True, [0, 1], [0, 2])),  # a 0-d bool is an index too
        ((2, 3, 4), ([0, 1], True, [0, 2])),
        ((2, 3, 4), ([0, 1], ..., True)),
        ((2, 3, 4), (np.array([[True, False, True], [False, True, True]]), [0, 1, 2, 3])),
        ((2, 3, 4), ([1], slice(None), np.array([True, False, True, True]))),
    ],
)
def test_advanced_indices_land_where_numpy_puts_them(shape, key):
    a = base(shape)
    same(q.value(a)[key], a[key])
    b, qb = a.copy(), q.value(a)
    b[key] = -a[key]
    qb[key] = -a[key]
    same(qb, b)


@pytest.mark.parametrize("big", BIG)
@pytest.mark.parametrize("form", ["int", "tuple", "with_array", "list", "numpy"])
def test_huge_integers_raise_index_error(big, form):
    a = base((3, 4))
    qa = q.value(a)
    key = {
        "int": big,
        "tuple": (0, big),
        "with_array": ([0, 1], big),
        "list": [big],
        "numpy": np.array([big]) if -(2**63) <= big < 2**64 else [big],
    }[form]
    if form == "int" and big in (2**63 - 1, -(2**63)):
        pass  # in int64: an ordinary out-of-bounds index
    with pytest.raises(Exception) as np_err:
        a[key]
    # NumPy raises OverflowError for [2**63, 2**64) (its intp conversion), IndexError else;
    # isthmus always raises IndexError: the index is out of bounds.
    assert np_err.type in (IndexError, OverflowError)
    with pytest.raises(IndexError):
        qa[key]
    with pytest.raises(IndexError):
        qa[key] = 1
    same(qa, a)


def test_huge_integers_in_slices_clamp_as_in_python():
    a = base((5,))
    for key in [slice(2**100), slice(-(2**100), 2**100), slice(None, None, 2**100),
                slice(None, None, -(2**100)), slice(2**63, -(2**63) - 5, -(2**63))]:
        same(q.value(a)[key], a[key])


@pytest.mark.parametrize(
    "key",
    [True, False, np.True_, np.False_, (True,), (False, 0), (0, True), (..., False),
     (True, True), np.array(True), np.array(False), (np.array(True), 1), (None, True)],
)
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_boolean_scalars_and_0d_masks(shape, key):
    a = base(shape)
    try:
        exp = a[key]
    except IndexError:
        with pytest.raises(IndexError):
            q.value(a)[key]
        return
    same(q.value(a)[key], exp)
    b, qb = a.copy(), q.value(a)
    b[key] = 9
    qb[key] = 9
    same(qb, b)


@pytest.mark.parametrize("idx", [np.array(1), np.array(-1, dtype=np.int8),
                                 np.array(2, dtype=np.uint64), np.int32(1), np.uint8(0),
                                 np.int64(-2)])
def test_0d_integer_arrays_and_numpy_integers_act_as_integers(idx):
    a = base((3, 4))
    same(q.value(a)[idx], a[idx])
    same(q.value(a)[idx, 1], a[idx, 1])
    same(q.value(a)[1, idx], a[1, idx])
    same(q.value(a)[idx, [0, 1]], a[idx, [0, 1]])
    same(q.value(a)[idx, None], a[idx, None])


def test_0d_integer_array_beside_a_slice_copies_as_numpy():
    # NumPy: a 0-d integer array in a key that is not all integers makes a copy, not a view.
    a = base((3, 4))
    qa = q.value(a)
    r = qa[np.array(1), :]
    r[...] = 0
    same(qa, a)
    v = qa[1, :]  # a plain int: a view
    v[...] = 0
    assert np.asarray(qa)[1].sum() == 0


def test_basic_results_are_views_and_0d_results_too():
    a = base((3, 4))
    qa = q.value(a)
    r = qa[0, 1, ...]  # NumPy: a 0-d view
    assert r.kind == "tensor" and r.shape == ()
    r = qa[1, 2, ...]
    r[...] = 100
    assert np.asarray(qa)[1, 2] == 100
    assert qa[1, 2].kind == "scalar"


@pytest.mark.parametrize(
    "shape,key",
    [
        ((3,), 3), ((3,), -4), ((2, 3), (0, 3)), ((2, 3), (-3, 0)), ((3,), [3]), ((3,), [-4]),
        ((2, 3), ([0, 1], [0, 3])), ((3,), (0, 0)), ((), 0), ((2,), (..., ...)),
        ((2,), (0, ..., ...)), ((3,), 1.0), ((3,), np.float64(1)), ((3,), [1.0]),
        ((3,), np.array([1.0])), ((3,), "a"), ((3,), [None]), ((3,), {}), ((3,), object()),
        ((3,), slice(1.0)), ((3,), slice(None, None, 0)), ((3,), [True, False]),
        ((2, 3), np.ones((3, 2), bool)), ((2, 3), (slice(None), [True, False])),
        ((2, 3), ([0, 1], [0, 1, 2])), ((3,), [[0], [0, 1]]), ((3,), np.array([], np.float32)),
        ((1, 1, 1), (None,) * 63 + ([0],) * 2), ((2, 3), (0, 0, 0)), ((2,), (True, 0, 0)),
    ],
)
def test_bad_keys_raise_numpys_error_and_leave_the_value_alone(shape, key):
    a = base(shape)
    qa = q.value(a)
    with pytest.raises(Exception) as np_err:
        a[key]
    with pytest.raises(np_err.type):
        qa[key]
    with pytest.raises(np_err.type):
        qa[key] = 5
    same(qa, a)


def test_out_of_range_index_array_writes_nothing():
    a = base((4, 3))
    qa = q.value(a)
    with pytest.raises(IndexError):
        qa[[0, 1, 4]] = 0
    with pytest.raises(IndexError):
        qa[[0, 1], [0, -4]] = np.array([1, 2])
    with pytest.raises(IndexError):
        qa[np.array([0, 2**63], dtype=np.uint64)] = 0
    same(qa, a)


def test_tuple_and_list_keys():
    a = base((3, 4))
    qa = q.value(a)
    same(qa[(1, 2)], a[(1, 2)])  # a tuple is a multi-dimensional index
    same(qa[[1, 2]], a[[1, 2]])  # NumPy 2: a list is always an index array
    same(qa[[[1, 2]]], a[[[1, 2]]])
    same(qa[[(1, 2)]], a[[(1, 2)]])  # a tuple inside is an array too
    same(qa[((1, 2),)], a[((1, 2),)])
    same(qa[[[0, 1], [2, 0]]], a[[[0, 1], [2, 0]]])  # nested lists: a 2-d index array
    same(qa[[True, False, True]], a[[True, False, True]])
    same(qa[[0, True]], a[[0, True]])  # NumPy converts to an int array
    same(qa[range(2)], a[range(2)])


def test_qvalue_index_arrays():
    a = base((3, 4))
    qa = q.value(a)
    same(qa[q.value([2, 0])], a[[2, 0]])
    same(qa[q.value(a) > 5], a[a > 5])
    same(qa[:, q.value(np.array([1, 3], np.int32))], a[:, [1, 3]])
    same(qa[q.value(np.array(1))], a[1])
    with pytest.raises(IndexError):
        qa[q.value([1.0])]
    with pytest.raises(IndexError):
        qa[q.value(1.5)]


def test_setitem_broadcasts_the_value():
    a = base((2, 3, 4))
    for key, val in [
        ((0,), np.arange(4)),
        ((0,), np.arange(4).reshape(1, 1, 4)),  # leading 1s dropped
        ((slice(None), 0), np.arange(2).reshape(2, 1)),
        (([0, 1], 0), np.arange(4).reshape(1, 1, 1, 4)),
        ((Ellipsis,), np.arange(12).reshape(1, 3, 4)),
        ((0, 0, 0), np.array(5)),
        ((0, 0, 0, ...), np.array([[5]])),
        ((a > 10,), np.array([0])),
        ((a[:, :, 0] > 10,), np.array([[0]])),
    ]:
        b, qb = a.copy(), q.value(a)
        b[key] = val
        qb[key] = val
        same(qb, b)
        qc = q.value(a)
        qc[key] = q.value(val)
        same(qc, b)
        c = a.copy()
        try:
            c[key] = val.tolist()
        except ValueError:  # NumPy limits a list's depth to the view's rank
            with pytest.raises(ValueError):
                q.value(a)[key] = val.tolist()
            continue
        qd = q.value(a)
        qd[key] = val.tolist()
        same(qd, c)


def test_advanced_setitem_value_with_extra_dimensions():
    """NumPy reshapes a value of more dimensions than an index-array result to its trailing
    dimensions; that holds for leading 1s and for empty values (a fuzz finding)."""
    A, qA = np.zeros((0, 0), np.int64), q.zeros((0, 0), dtype="int64")
    for shape in [(0, 0, 1), (3, 0, 0), (1, 0, 0), (0, 1), (0,)]:
        A[[]] = np.empty(shape)
        qA[[]] = np.empty(shape)
        same(qA, A)
    for shape in [(0, 0, 2), (0, 5), (2,)]:
        with pytest.raises(ValueError):
            A[[]] = np.empty(shape)
        with pytest.raises(ValueError, match="could not broadcast"):
            qA[[]] = np.empty(shape)
    rng = random.Random(13)
    for _ in range(400):
        shape = tuple(rng.choice([0, 1, 2, 3]) for _ in range(rng.randint(1, 3)))
        a = base(shape)
        axis = rng.randrange(len(shape))
        key = [slice(None)] * len(shape)
        count = rng.choice([0, 1, 2]) if shape[axis] else 0
        key[axis] = [rng.randrange(shape[axis]) for _ in range(count)]
        key = tuple(key)
        val = np.full(tuple(rng.choice([0, 1, 2, 3]) for _ in range(rng.randint(0, 4))), 7)
        b, qb = a.copy(), q.value(a)
        try:
            b[key] = val
        except ValueError:
            with pytest.raises(ValueError):
                qb[key] = val
            same(qb, a)
            continue
        qb[key] = val
        same(qb, b)


@pytest.mark.parametrize(
    "key,val",
    [((0,), np.arange(3)), ((0,), np.ones((2, 4))), (([0, 1],), np.ones((3, 3, 4))),
     ((slice(None), [0, 1]), np.ones(3)), ((0, 0, 0), np.ones(2)), ((Ellipsis,), np.ones((2, 2, 3, 4)))],
)
def test_setitem_shape_mismatch_raises_value_error_and_writes_nothing(key, val):
    a = base((2, 3, 4))
    qa = q.value(a)
    with pytest.raises(ValueError):
        a.copy()[key] = val
    with pytest.raises(ValueError):
        qa[key] = val
    same(qa, a)


@pytest.mark.parametrize(
    "shape,dtype,key,val",
    [
        ((2, 3), "float64", (0, 0), np.array([5])),  # one element takes a 0-d value only
        ((2, 3), "bool", (0, 0), np.array([5])),  # ... a bool one also a one-element value
        ((2, 3), "bool", (0, 0), np.array([[0.0]])),
        ((2, 3), "bool", (0, 0), np.array([1, 2])),
        ((2, 3), "float64", (0, 0), [5]),
        ((2, 3), "float64", (0, 0), np.array(5)),
        ((2, 3), "float64", (0, 0, ...), np.array([[5]])),  # a 0-d view: leading 1s dropped
        ((2, 3), "float64", (0, 0, ...), [5]),  # but a list may not be deeper than the view
        ((2, 3), "float64", 0, [[1, 2, 3]]),
        ((2, 3), "float64", 0, np.array([[1, 2, 3]])),
        ((2, 3), "float64", slice(None), [[[1, 2, 3]]]),
        ((2, 3), "float64", [0], [[[1, 2, 3]]]),  # index arrays: no depth limit
        ((2, 3), "float64", ([0], 0), [[[5]]]),
        ((3,), "float64", np.array([True, False, True]), [[1]]),  # a lone whole mask: <= 1-d
        ((3,), "float64", np.array([True, False, True]), [1, 2, 3]),
        ((3,), "float64", np.array([True, False, True]), [1, 2]),
        ((2, 3), "float64", (np.array([True, False]),), np.ones((1, 1, 3))),
        ((), "float64", True, [[1]]),
        ((), "float64", (), np.array([1])),
        ((), "float64", ..., np.array([1])),
        ((3,), "float64", slice(None), [0.1, 0.2, 0.3]),  # converted to float64 directly
        ((3,), "int8", slice(None), [1.7, -1.5, 2]),
        ((3,), "int8", slice(None), [300, 1, 2]),  # OverflowError, as NumPy
        ((3,), "int8", [0, 1, 2], [300, 1, 2]),
        ((3,), "int8", [0, 1, 2], np.array([300, 1, 2])),  # arrays cast unsafely (wrap)
        ((3,), "bool", slice(None), [5, 0, 2]),
        ((3,), "float64", slice(None), (1, 2, 3)),
        ((3,), "float64", slice(None), [1, 1j, 2]),
    ],
)
def test_setitem_value_rules(shape, dtype, key, val):
    a = base(shape, dtype)
    qa = q.value(a)
    try:
        a[key] = val
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)):
            qa[key] = val
        same(qa, base(shape, dtype))
        return
    qa[key] = val
    same(qa, a)


def test_setitem_narrowing_casts_as_numpy():
    for dt, val in [("int64", np.array([1.7, -2.7, 3.2])), ("uint8", np.array([300, -1, 5])),
                    ("int8", np.array([127.9, -128.5, 1.0])), ("bool", np.array([0.0, 2.5, -1])),
                    ("float32", np.array([1e-50, 3, 2**40 + 1], np.float64))]:
        a = base((3, 3), dt)
        for key in [(0,), ([0, 2],), (slice(None), 1)]:
            b, qb = a.copy(), q.value(a)
            v = val if key != ([0, 2],) else np.broadcast_to(val, (2, 3))
            with np.errstate(all="ignore"):
                b[key] = v
            qb[key] = v
            same(qb, b)


def test_int8_scalar_overflow_is_left_to_the_scalar_rules():
    # A[0] = 300 on int8 raises OverflowError, as NumPy 2 does, in both indexing paths.
    a = q.value(np.zeros(3, np.int8))
    for key in [0, slice(None), [0]]:
        with pytest.raises(OverflowError):
            a[key] = 300
    assert np.asarray(a).tolist() == [0, 0, 0]


def test_cells_still_index_as_before():
    c = q.value(["a", q.zeros(2), 3])
    assert c[0] == "a"
    assert c[-1].item() == 3
