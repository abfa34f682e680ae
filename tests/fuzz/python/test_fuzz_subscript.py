"""Differential fuzzer: qvalue subscripts (get and set) against NumPy.

The rule: for any shape and key, isthmus gives NumPy's result (shape, dtype and values; views
write through where NumPy's do), or both raise, isthmus with IndexError, ValueError, TypeError
or OverflowError; a failed assignment leaves the value unchanged. Never a crash.
"""

import numpy as np
from hypothesis import strategies as st

import isthmus as q
from fuzzing import corpus_line, replay, run_for

ALLOWED = (IndexError, ValueError, TypeError, OverflowError)
BIG = [2**63 - 1, -(2**63), 2**63, -(2**63) - 1, 2**64, 2**62, -(2**62), 2**31, -(2**31) - 1]
DTYPES = ["int64", "float64", "uint8", "int32", "bool"]


def base(shape, dtype):
    """Distinct values (where the dtype allows) in C order."""
    n = int(np.prod(shape, dtype=np.int64))
    return (np.arange(n, dtype=np.int64) % 251 + 1).astype(dtype).reshape(shape)


def outcome(fn):
    """(result, None) or (None, exception)."""
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 - sorted out by the caller
        return None, e


def describe(case):
    return "corpus line: " + corpus_line(*case)


def check_same(exp, got, what, case):
    exp = np.asarray(exp)
    shape = tuple(got.shape) if isinstance(got, q.qvalue) else np.shape(got)
    assert shape == exp.shape, f"{what}: shape {shape} != NumPy's {exp.shape}; {describe(case)}"
    try:
        got = np.asarray(got)
    except Exception as e:  # noqa: BLE001
        raise AssertionError(f"{what}: the result cannot be read ({type(e).__name__}: {e}); "
                             f"{describe(case)}") from e
    assert got.shape == exp.shape, f"{what}: shape {got.shape} != NumPy's {exp.shape}; {describe(case)}"
    assert got.dtype == exp.dtype, f"{what}: dtype {got.dtype} != NumPy's {exp.dtype}; {describe(case)}"
    assert np.array_equal(got, exp), f"{what}: values differ from NumPy's; {describe(case)}"


def check_errors(np_err, q_err, what, case):
    if q_err is not None and not isinstance(q_err, ALLOWED):
        raise AssertionError(f"{what}: isthmus raised {type(q_err).__name__}: {q_err}; "
                             f"{describe(case)}") from q_err
    if np_err is None and q_err is not None:
        raise AssertionError(f"{what}: isthmus raised {type(q_err).__name__}: {q_err}, NumPy "
                             f"did not; {describe(case)}") from q_err
    if np_err is not None and q_err is None:
        raise AssertionError(f"{what}: NumPy raised {type(np_err).__name__}: {np_err}, isthmus "
                             f"did not; {describe(case)}")


def check(case):
    """case = (shape, dtype, key, value, mode): mode 'get' (value unused), 'set', 'view'."""
    shape, dtype, key, value, mode = case
    na = base(shape, dtype)
    qa = q.value(na.copy())
    if mode == "set":
        if isinstance(value, str) and value == "self":  # a[key] = a[key][::-1]: overlapping
            np_res, np_err = outcome(lambda: na.__setitem__(key, na[key][::-1]))
            q_res, q_err = outcome(lambda: qa.__setitem__(key, qa[key][::-1]))
        else:
            np_res, np_err = outcome(lambda: na.__setitem__(key, value))
            q_res, q_err = outcome(lambda: qa.__setitem__(key, value))
        check_errors(np_err, q_err, "setitem", case)
        if q_err is not None:
            check_same(base(shape, dtype), qa, "setitem that raised changed the value", case)
        else:
            check_same(na, qa, "setitem", case)
        return
    np_res, np_err = outcome(lambda: na[key])
    q_res, q_err = outcome(lambda: qa[key])
    check_errors(np_err, q_err, "getitem", case)
    if np_err is not None:
        check_same(base(shape, dtype), qa, "getitem that raised changed the value", case)
        return
    check_same(np_res, q_res, "getitem", case)
    if mode == "view" and isinstance(np_res, np.ndarray) and np_res.size and \
            np.shares_memory(np_res, na):
        # NumPy's result is a view: so must isthmus's be, writing through to the same elements.
        np_res[...] = 0
        _, q_err = outcome(lambda: q_res.__setitem__(Ellipsis, 0))
        check_errors(None, q_err, "write through a view", case)
        check_same(na, qa, "write through a view", case)


# ---- strategies ----

def int_index(dim):
    return st.one_of(st.integers(-dim - 2, dim + 2), st.sampled_from(BIG),
                     st.integers(-dim - 2, dim + 2).map(np.int64))


slice_part = st.one_of(st.none(), st.integers(-6, 6), st.sampled_from(BIG))
slices = st.builds(slice, slice_part, slice_part,
                   st.one_of(st.none(), st.integers(-4, 4), st.sampled_from(BIG)))


@st.composite
def int_array(draw, dim):
    vals = draw(st.lists(st.one_of(st.integers(-dim - 1, dim + 1), st.sampled_from(BIG[:2])),
                         max_size=6))
    dt = draw(st.sampled_from(["int64", "int32", "intp", "uint8", "int8"]))
    a = np.array(vals, dtype=np.int64)
    if dt in ("uint8", "int8"):
        a = a[(a >= -128) & (a < 128)]
        if dt == "uint8":
            a = np.abs(a)
    a = a.astype(dt)
    if a.size in (4, 6) and draw(st.booleans()):
        a = a.reshape(2, -1)
    return a


@st.composite
def mask(draw, shape, axis):
    """A boolean mask over shape[axis:axis+k], or sometimes of a wrong shape."""
    k = draw(st.integers(0, max(0, len(shape) - axis)))
    mshape = tuple(shape[axis:axis + k])
    if draw(st.integers(0, 7)) == 0:
        mshape = tuple(draw(st.lists(st.integers(0, 4), max_size=3)))
    n = int(np.prod(mshape, dtype=np.int64))
    bits = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return np.array(bits, dtype=bool).reshape(mshape)


@st.composite
def key_item(draw, shape, axis):
    dim = shape[axis] if axis < len(shape) else 1
    kind = draw(st.integers(0, 11))
    if kind <= 2:
        return draw(int_index(dim))
    if kind <= 5:
        return draw(slices)
    if kind == 6:
        return None
    if kind == 7:
        return Ellipsis
    if kind == 8:
        return draw(st.one_of(st.lists(st.integers(-dim - 1, dim + 1), max_size=4),
                              st.just([]), st.just([[0, 1], [1, 0]])))
    if kind == 9:
        return draw(int_array(dim))
    if kind == 10:
        return draw(mask(shape, axis))
    return draw(st.sampled_from([True, False, np.True_, np.False_]))


@st.composite
def cases(draw):
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=4)))
    dtype = draw(st.sampled_from(DTYPES))
    if draw(st.integers(0, 3)) == 0:
        key = draw(key_item(shape, 0))
    else:
        items, axis = [], 0
        for _ in range(draw(st.integers(0, 5))):
            item = draw(key_item(shape, axis))
            items.append(item)
            axis += 0 if item is None or item is Ellipsis else \
                (item.ndim if isinstance(item, np.ndarray) and item.dtype == bool else 1)
        key = tuple(items)
    mode = draw(st.sampled_from(["get", "view", "set"]))
    value = None
    if mode == "set":
        try:
            rshape = np.empty(shape)[key].shape
        except Exception:  # noqa: BLE001 - NumPy refuses the key: any value will do
            rshape = ()
        kind = draw(st.integers(0, 6))
        if kind == 0:
            value = draw(st.integers(-3, 300))
        elif kind == 1:
            value = draw(st.sampled_from(BIG + [-1, 256, 2**32]))
        elif kind == 2:
            value = draw(st.floats(0, 100))
        elif kind == 3:
            value = "self"
        else:  # an array broadcasting to the result (a suffix of its shape, 1s allowed)
            cut = draw(st.integers(0, len(rshape)))
            vshape = tuple(1 if draw(st.integers(0, 3)) == 0 else d for d in rshape[cut:])
            value = -base(vshape, "int64")
            if kind == 5:
                value = value.tolist()
            elif kind == 6 and draw(st.booleans()):
                value = value.reshape(vshape + (1,))  # one dimension too many: both raise
    return shape, dtype, key, value, mode


def test_corpus():
    replay("subscript", 5, check)


def test_fuzz_subscript():
    run_for(cases(), check)
