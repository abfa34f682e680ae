"""Indexing against NumPy: qvalue __getitem__ / __setitem__ follow NumPy 2's rules exactly.

Two parts: explicit regression tests, one per form that once differed (issue 13), and a
differential test that draws a few thousand random (shape, key, value) cases from a seeded
generator and checks each against NumPy: the same shape, dtype and values (a scalar where
NumPy gives a scalar, a view where NumPy gives a view, a copy where it copies), or both raise
(isthmus with NumPy's exception type; never a crash), and a failed assignment leaves the value
unchanged. The seeded generator keeps the run deterministic and within a few seconds; the
hypothesis-driven fuzzer under tests/fuzz/python covers the same ground with shrinking.
"""

import random

import numpy as np
import pytest

import isthmus as q

BIG = [2**63 - 1, -(2**63), 2**63, -(2**63) - 1, 2**64, 2**70, -(2**70)]


def base(shape, dtype="int64"):
    """Distinct values (as far as the dtype allows) in C order."""
    n = int(np.prod(shape, dtype=np.int64))
    return (np.arange(n, dtype=np.int64) % 251 + 1).astype(dtype).reshape(shape)


def same(got, exp):
    """isthmus's result `got` matches NumPy's `exp`: kind (scalar or array), shape, dtype, values."""
    if isinstance(exp, np.generic):
        assert isinstance(got, q.qvalue) and got.kind == "scalar", (got, exp)
    else:
        assert isinstance(got, q.qvalue) and got.kind == "tensor", (got, exp)
    arr = np.asarray(got)
    exp = np.asarray(exp)
    assert arr.shape == exp.shape, (arr.shape, exp.shape)
    assert arr.dtype == exp.dtype, (arr.dtype, exp.dtype)
    assert np.array_equal(arr, exp), (arr, exp)


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
    dimensions; that holds for leading 1s and for empty values (fuzz finding, issue 13)."""
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


# ---- the differential test ----


class QV:
    """A key item that is a qvalue on the isthmus side and its array on NumPy's."""

    def __init__(self, arr):
        self.arr = arr


def for_numpy(key):
    if isinstance(key, tuple):
        return tuple(k.arr if isinstance(k, QV) else k for k in key)
    return key.arr if isinstance(key, QV) else key


def for_isthmus(key):
    if isinstance(key, tuple):
        return tuple(q.value(k.arr) if isinstance(k, QV) else k for k in key)
    return q.value(key.arr) if isinstance(key, QV) else key


def draw_int(rng, n):
    r = rng.random()
    if r < 0.04:
        return rng.choice(BIG)
    i = rng.randint(-n - 2, n + 1)
    if r < 0.15:
        return rng.choice([np.int64, np.int32, np.intp, np.int8])(max(-128, min(127, i)))
    if r < 0.2:
        return np.array(i)
    return i


def draw_slice(rng):
    def part():
        r = rng.random()
        if r < 0.35:
            return None
        if r < 0.42:
            return rng.choice(BIG + [2**62])
        return rng.randint(-6, 6)

    r = rng.random()
    if r < 0.03:
        step = 0
    elif r < 0.12:
        step = rng.choice([2**63 - 1, -(2**63) + 1, -(2**63), 2**70, -(2**70), 2**62])
    elif r < 0.4:
        step = None
    else:
        step = rng.choice([1, 2, 3, -1, -2, -3])
    return slice(part(), part(), step)


def draw_int_array(rng, n):
    size = rng.choice([0, 1, 2, 3, 4, 6])
    vals = [rng.randint(-n - 1, n) for _ in range(size)]
    if rng.random() < 0.3:
        return vals if rng.random() < 0.7 else [vals, vals] if vals else [[]]
    dt = rng.choice(["int64", "int32", "int8", "uint8", "uint64", "int16"])
    if dt.startswith("u"):
        vals = [v % max(n + 1, 1) for v in vals]
    arr = np.array(vals, dtype=dt)
    if size in (4, 6) and rng.random() < 0.4:
        arr = arr.reshape(2, -1)
    if size >= 4 and rng.random() < 0.3:
        arr = arr[::2]  # not contiguous
    return QV(arr) if rng.random() < 0.2 else arr


def draw_mask(rng, shape, axis):
    k = rng.randint(1, max(1, len(shape) - axis))
    mshape = tuple(shape[axis:axis + k])
    if rng.random() < 0.1 or not mshape:
        mshape = tuple(rng.randint(0, 3) for _ in range(rng.randint(1, 2)))
    bits = np.array([rng.random() < 0.5 for _ in range(int(np.prod(mshape, dtype=np.int64)))],
                    dtype=bool).reshape(mshape)
    r = rng.random()
    if r < 0.15 and bits.ndim == 1:
        return bits.tolist()
    if r < 0.3:
        return QV(bits)
    return bits


def draw_item(rng, shape, axis):
    n = shape[axis] if axis < len(shape) else 1
    r = rng.random()
    if r < 0.22:
        return draw_int(rng, n), 1
    if r < 0.45:
        return draw_slice(rng), 1
    if r < 0.53:
        return None, 0
    if r < 0.61:
        return Ellipsis, 0
    if r < 0.75:
        return draw_int_array(rng, n), 1
    if r < 0.86:
        m = draw_mask(rng, shape, axis)
        return m, np.ndim(m.arr if isinstance(m, QV) else m)
    if r < 0.94:
        return rng.choice([True, False, np.True_, np.False_, np.array(True)]), 0
    return rng.choice([1.0, np.float32(0), [0.5], "x", np.array([1.0]), [[0], [0, 1]]]), 1


def draw_key(rng, shape):
    items, axis = [], 0
    for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 3, 4, 5])):
        item, used = draw_item(rng, shape, axis)
        items.append(item)
        axis += used
    if len(items) == 1 and rng.random() < 0.5:
        return items[0]
    return tuple(items)


def draw_source(rng):
    """A base array and a view of it to index: itself, transposed or reversed."""
    shape = tuple(rng.choice([0, 1, 2, 3, 4]) for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 4])))
    dtype = rng.choice(["int64", "float64", "int8", "uint8", "bool", "float32", "complex128"])
    r = rng.random()
    if len(shape) >= 2 and r < 0.2:
        view = lambda x: x.T  # noqa: E731
    elif len(shape) >= 1 and r < 0.35:
        view = lambda x: x[::-1]  # noqa: E731
    else:
        view = lambda x: x  # noqa: E731
    return base(shape, dtype), view


def draw_value(rng, rshape, dtype):
    r = rng.random()
    if r < 0.25:
        v = rng.choice([0, 1, 7, 100])
        return bool(v) if dtype == np.bool_ else v
    if r < 0.3:
        return rng.choice([True, 2.5, -1.25]) if dtype.kind in "fc" else True
    cut = rng.randint(0, len(rshape))
    vshape = tuple(1 if rng.random() < 0.25 else d for d in rshape[cut:])
    if rng.random() < 0.15:
        vshape = (1,) + vshape
    if rng.random() < 0.07:
        vshape = vshape + (2,)  # does not broadcast (usually)
    v = (-base(vshape)).astype(rng.choice(["int64", "float64", "int16", "bool"]))
    r = rng.random()
    if r < 0.15:
        return v.tolist()
    if r < 0.3:
        return QV(v)
    return v


def outcome(fn):
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 - compared by the caller
        return None, e


def same_error(np_err, q_err):
    if np_err is None or q_err is None:
        return np_err is None and q_err is None
    if isinstance(np_err, OverflowError):  # NumPy's intp conversion of [2**63, 2**64)
        return isinstance(q_err, (IndexError, OverflowError))
    return type(q_err) is type(np_err) and isinstance(q_err, (IndexError, ValueError, TypeError))


def check_case(rng, stats):
    whole, view = draw_source(rng)
    a, qa = view(whole.copy()), view(q.value(whole))
    orig = a.copy()
    key = draw_key(rng, a.shape)
    nkey, qkey = for_numpy(key), for_isthmus(key)
    ctx = f"shape {a.shape} {a.dtype}, key {key!r}"

    exp, np_err = outcome(lambda: a[nkey])
    got, q_err = outcome(lambda: qa[qkey])
    assert same_error(np_err, q_err), f"getitem: NumPy {np_err!r}, isthmus {q_err!r}; {ctx}"
    same(qa, orig)
    if np_err is None:
        try:
            same(got, exp)
        except AssertionError as e:
            raise AssertionError(f"getitem: {e}; {ctx}") from None
        stats["get"] += 1
        # A view where NumPy gives a view (writes go through), a copy where NumPy copies:
        # after zeroing both results, the sources are equal again.
        if isinstance(exp, np.ndarray) and exp.size and rng.random() < 0.3:
            exp[...] = 0
            got[...] = 0
            try:
                same(qa, a)
            except AssertionError as e:
                shares = np.shares_memory(exp, a)
                raise AssertionError(f"view: NumPy's shares memory: {shares}: {e}; {ctx}") from None
    else:
        stats["get_err"] += 1

    # setitem on fresh copies
    rshape = exp.shape if np_err is None else ()
    val = draw_value(rng, np.shape(exp) if np_err is None else rshape, a.dtype)
    nval = val.arr if isinstance(val, QV) else val
    qval = q.value(val.arr) if isinstance(val, QV) else val
    b, qb = view(whole.copy()), view(q.value(whole))
    with np.errstate(all="ignore"):
        _, np_err = outcome(lambda: b.__setitem__(nkey, nval))
    _, q_err = outcome(lambda: qb.__setitem__(qkey, qval))
    ctx += f", value {val.arr if isinstance(val, QV) else val!r}"
    if isinstance(np_err, (OverflowError, TypeError)) and not isinstance(nval, (list, np.ndarray)):
        # Python scalars NumPy refuses for the dtype: the scalar rules (another test's job).
        return
    if np.ndim(nval) > 0 and isinstance(exp, np.generic):
        # One element and a value of 1 or more dimensions: NumPy's per-dtype setitem takes a
        # bool target's truth value of a list ([0] is True) where isthmus raises ValueError,
        # and raises TypeError or ValueError by dtype where isthmus raises ValueError.
        if isinstance(nval, list) or np_err is not None:
            assert isinstance(q_err, ValueError), f"setitem: isthmus {q_err!r}; {ctx}"
            stats["set_err"] += 1
            return
    assert same_error(np_err, q_err), f"setitem: NumPy {np_err!r}, isthmus {q_err!r}; {ctx}"
    try:
        same(qb, orig if np_err is not None else b)
    except AssertionError as e:
        raise AssertionError(f"setitem: {e}; {ctx}") from None
    stats["set" if np_err is None else "set_err"] += 1


CASES = 4000


def test_differential_against_numpy():
    rng = random.Random(20240613)
    stats = {"get": 0, "get_err": 0, "set": 0, "set_err": 0}
    for _ in range(CASES):
        check_case(rng, stats)
    # The generator must reach both outcomes often enough to mean something.
    assert stats["get"] > CASES // 3 and stats["get_err"] > CASES // 20, stats
    assert stats["set"] > CASES // 4 and stats["set_err"] > CASES // 20, stats
