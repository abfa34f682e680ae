# NumPy's ufuncs on qvalues (__array_ufunc__): the mapping table, operators, random differentials.
import operator
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import isthmus as q
from isthmus import numpy_protocols as npp
from numpy_protocols_helpers import DOCUMENTED, check, ufunc_id

# The references are NumPy 2's results (NEP 50 promotion, NumPy 2's sign and floor); the
# protocols themselves work with NumPy 1.24+ too (test_numpy.py and test_operators.py run there).
pytestmark = pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.0.0",
                                reason="the references are NumPy 2's results")

# ---- ufuncs: the mapping table, every entry against NumPy ----

UNIT = {"arcsin", "arccos", "arctanh"}
POSITIVE = {"log", "log2", "log10", "sqrt", "reciprocal", "power", "arccosh"}
INTEGER_ONLY = {"bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift",
                "right_shift"}


def operand(name, dtype, shape, rng, second=False):
    """Random values in the ufunc's domain (integers small and positive)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dt.kind in "iu":
        lo, hi = (0, 6) if name in ("left_shift", "right_shift") and second else (1, 6)
        return rng.integers(lo, hi, shape).astype(dt)
    if dt.kind == "c":
        return (operand(name, "float64", shape, rng, second)
                + 0.5j * operand(name, "float64", shape, rng, second)).astype(dt)
    if name in UNIT:
        x = rng.uniform(-0.9, 0.9, shape)
    elif name == "arccosh":
        x = rng.uniform(1.1, 4, shape)
    elif name in POSITIVE and not (name == "power" and second):
        x = rng.uniform(0.5, 3, shape)
    elif name == "log1p":
        x = rng.uniform(-0.5, 3, shape)
    elif name in ("floor_divide", "remainder") and second:
        x = rng.uniform(0.5, 3, shape) * rng.choice([-1, 1], shape)
    else:
        x = rng.uniform(-3, 3, shape)
    return np.asarray(x).astype(dt)


LAYOUTS = ["contiguous", "strided", "broadcast", "empty", "0d"]


def layout_operands(name, nin, dtype, layout, rng):
    """NumPy operands in the given layout (views where the layout says so)."""
    if name == "matmul":
        shapes = {"contiguous": ((3, 4), (4, 2)), "broadcast": ((2, 3, 4), (4, 2)),
                  "empty": ((0, 4), (4, 2)), "0d": ((4,), (4,)), "strided": ((3, 4), (4, 2))}
        a, b = (operand(name, dtype, s, rng) for s in shapes[layout])
        if layout == "strided":
            a = np.ascontiguousarray(a.T).T  # Fortran order: a transposed view
            b = operand(name, dtype, (2, 8), rng)[:, ::2].T
        return [a, b]
    if layout == "strided":
        ops = [operand(name, dtype, (3, 8), rng, i > 0)[:, ::2] for i in range(nin)]
        if nin == 2:
            ops[1] = np.ascontiguousarray(ops[1].T).T
        return ops
    shape = {"contiguous": (3, 4), "broadcast": (3, 4), "empty": (0, 4), "0d": ()}[layout]
    ops = [operand(name, dtype, shape, rng, i > 0) for i in range(nin)]
    if layout == "broadcast":
        row = operand(name, dtype, (4,), rng, nin > 1)
        ops[-1] = row if nin > 1 else np.broadcast_to(row, shape)  # unary: a stride-0 view
    return ops


UFUNCS = sorted(npp.HANDLED_UFUNCS, key=ufunc_id)


def as_qvalues(ops, layout):
    """The operands as qvalues over the same memory (a stride-0 view for broadcast unary)."""
    if layout == "broadcast" and len(ops) == 1:
        return [q.broadcast_to(q.value(ops[0][0]), ops[0].shape)]
    return [q.asvalue(x) for x in ops]


def expected(ufunc, ops):
    """NumPy's result, or isthmus's documented one; (result, None) or (None, exception type)."""
    doc = DOCUMENTED.get((ufunc.__name__, ops[0].dtype.kind))
    with np.errstate(all="ignore"):
        if doc is not None:
            return (None, doc) if isinstance(doc, type) else (doc(*ops), None)
        try:
            return ufunc(*ops), None
        except (TypeError, ValueError) as e:  # NumPy refuses it (float bit ops, 0-d matmul)
            return None, TypeError if isinstance(e, TypeError) else ValueError


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "complex128", "bool"])
@pytest.mark.parametrize("ufunc", UFUNCS, ids=ufunc_id)
def test_every_mapped_ufunc_matches_numpy(ufunc, dtype):
    name = ufunc.__name__
    if name in INTEGER_ONLY and dtype[0] in "fc":
        dtype = "uint8" if dtype == "float32" else "int64"
    rng = np.random.default_rng(zlib.crc32(f"{name}-{dtype}".encode()))
    for layout in LAYOUTS:
        ops = layout_operands(name, ufunc.nin, dtype, layout, rng)
        want, error = expected(ufunc, ops)
        Q = as_qvalues(ops, layout)
        before = [np.array(x) for x in ops]
        if error is not None:
            with pytest.raises(error):
                ufunc(*Q)
        else:
            check(ufunc(*Q), want)  # all qvalues
            if ufunc.nin == 2:  # a NumPy array on either side, and a qvalue on the other
                check(ufunc(ops[0], Q[1]), want)
                check(ufunc(Q[0], ops[1]), want)
        for x, b in zip(ops, before):
            np.testing.assert_array_equal(x, b)  # inputs unchanged


SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -2.5])


@pytest.mark.parametrize("ufunc", [u for u in UFUNCS if u.__name__ not in INTEGER_ONLY
                                   and u.__name__ != "matmul"], ids=ufunc_id)
def test_mapped_ufuncs_on_nan_and_inf(ufunc):
    x = SPECIAL if ufunc.nin == 1 else np.repeat(SPECIAL, SPECIAL.size)
    ops = [x] if ufunc.nin == 1 else [x, np.tile(SPECIAL, SPECIAL.size)]
    with np.errstate(all="ignore"):
        want = ufunc(*ops)
    check(ufunc(*[q.asvalue(o) for o in ops]), want)


def test_python_and_numpy_scalars_keep_their_strength():
    X = q.value(np.arange(4, dtype=np.int32))
    r = np.add(X, 1)  # a Python int is weak
    assert isinstance(r, q.qvalue) and r.dtype == np.int32
    r = np.add(X, np.int64(1))  # a NumPy scalar is strong
    assert r.dtype == np.int64
    r = np.multiply(2.5, X)
    check(r, np.multiply(2.5, np.arange(4, dtype=np.int32)))
    r = np.add(X, [1.5, 2, 3, 4])  # a list is read by NumPy (float64), not as `scalar`
    check(r, np.add(np.arange(4, dtype=np.int32), [1.5, 2, 3, 4]))
    s = np.exp(q.value(1.0))  # a scalar qvalue gives a scalar qvalue
    assert isinstance(s, q.qvalue) and s.kind == "scalar"
    assert float(s) == pytest.approx(np.exp(np.float32(1.0)), rel=1e-6)


def test_positive_and_aliases_share_entries():
    for alias, canonical in [("divide", "true_divide"), ("abs", "absolute"), ("mod", "remainder"),
                             ("bitwise_not", "invert"), ("conj", "conjugate")]:
        assert getattr(np, alias) is getattr(np, canonical)
        assert getattr(np, canonical) in npp.HANDLED_UFUNCS
    x = np.array([1.5, -2.0])
    check(np.positive(q.asvalue(x)), np.positive(x))


# ---- operators between NumPy arrays and qvalues (they now go through __array_ufunc__) ----

OPERATORS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
             operator.mod, operator.pow, operator.lt, operator.le, operator.gt, operator.ge,
             operator.eq, operator.ne]


@pytest.mark.parametrize("op", OPERATORS, ids=lambda o: o.__name__)
def test_ndarray_operator_qvalue_is_a_qvalue(op):
    rng = np.random.default_rng(5)
    x = rng.uniform(0.5, 2, (3, 4))
    y = rng.uniform(0.5, 2, (4,)).astype(np.float32)
    check(op(x, q.asvalue(y)), op(x, y))
    check(op(y, q.asvalue(x)), op(y, x))
    check(op(np.float64(1.5), q.asvalue(y)), op(np.float64(1.5), y))


def test_ndarray_inplace_operator_writes_into_the_array():
    x = np.arange(6.0).reshape(2, 3)
    y = np.array([1.0, 2.0, 3.0])
    want = x * y + 1
    r = x
    r *= q.asvalue(y)
    r += q.value(1.0)
    assert r is x  # NumPy's in-place operator returns its own array, written in place
    np.testing.assert_array_equal(x, want)
    i = np.arange(3, dtype=np.int32)
    with pytest.raises(TypeError):
        i /= q.asvalue(y)  # same_kind: float64 into int32
    np.testing.assert_array_equal(i, [0, 1, 2])
    m = np.arange(4.0).reshape(2, 2)
    m @= q.value(np.eye(2) * 2)  # matmul into the array
    np.testing.assert_array_equal(m, np.arange(4.0).reshape(2, 2) * 2)



# ---- hypothesis: a few ufuncs on random shapes, dtypes and values ----

DIFF_UFUNCS = [np.add, np.multiply, np.maximum, np.subtract, np.less, np.floor_divide]


@settings(max_examples=40, deadline=None)
@given(
    data=st.data(),
    ufunc=st.sampled_from(DIFF_UFUNCS),
    dtype=st.sampled_from([np.float64, np.float32, np.int32, np.int64, np.uint8]),
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4),
)
def test_differential_ufuncs(data, ufunc, dtype, shapes):
    elements = (st.one_of(st.floats(-1e3, 1e3, width=32),
                          st.sampled_from([np.nan, np.inf, -np.inf]))
                if np.dtype(dtype).kind == "f" else st.integers(1, 100))
    a, b = (data.draw(hnp.arrays(dtype, s, elements=elements)) for s in shapes.input_shapes)
    with np.errstate(all="ignore"):
        want = ufunc(a, b)
    check(ufunc(q.asvalue(a), b), want)
    check(ufunc(a, q.asvalue(b)), want)


@settings(max_examples=30, deadline=None)
@given(x=hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
                    elements=st.floats(-50, 50)),
       ufunc=st.sampled_from([np.exp, np.sin, np.tanh, np.sqrt, np.floor]))
def test_differential_unary(x, ufunc):
    with np.errstate(all="ignore"):
        want = ufunc(x)
    check(ufunc(q.asvalue(x)), want)


