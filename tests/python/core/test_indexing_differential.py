"""Indexing against NumPy, differential: a few thousand random (shape, key, value) cases from a
seeded generator, each checked against NumPy (the same shape, dtype and values, a view where
NumPy gives a view, a copy where it copies), or both raise (isthmus with NumPy's exception
type; never a crash), and a failed assignment leaves the value unchanged. The regressions, one
test per form that once differed, are in test_indexing_numpy.py.
"""

import random

import numpy as np

import isthmus as q
from indexing_helpers import BIG, base, same


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
