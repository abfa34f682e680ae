# NumPy's protocols on qvalues (__array_ufunc__, __array_function__, __format__) against NumPy.
import operator
import warnings
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import isthmus as q
from isthmus import numpy_protocols as npp

# The references are NumPy 2's results (NEP 50 promotion, NumPy 2's sign and floor); the
# protocols themselves work with NumPy 1.24+ too (test_numpy.py and test_operators.py run there).
pytestmark = pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.0.0",
                                reason="the references are NumPy 2's results")

# Where isthmus's result differs from NumPy's for the same call (docs/numpy-protocols.md,
# "Dtypes"): (ufunc name, NumPy's dtype kind of the operands) -> isthmus's documented result, as
# a NumPy reference, or the exception isthmus raises where NumPy computes.
ORDERED = ("less", "less_equal", "greater", "greater_equal", "maximum", "minimum")
DOCUMENTED = {
    ("reciprocal", "i"): lambda x: np.reciprocal(x.astype(np.float64)),  # float64
    ("reciprocal", "b"): lambda x: np.reciprocal(x.astype(np.float64)),
    ("rint", "i"): lambda x: x.copy(),  # integers are unchanged and keep their dtype
    ("rint", "b"): lambda x: x.copy(),
    ("conjugate", "b"): lambda x: x.copy(),  # bool stays bool (NumPy: int8)
    ("square", "b"): lambda x: x.copy(),
    ("sign", "b"): lambda x: x.copy(),  # NumPy refuses bool
    ("positive", "b"): lambda x: x.copy(),
    **{(name, "c"): TypeError for name in ORDERED},  # complex numbers are not ordered
}


def tol(dtype):
    """rtol for comparing with NumPy (isthmus's math is within 4 ulp, docs/ops.md)."""
    dt = np.dtype(dtype)
    if dt == np.float16:
        return 2e-3
    if dt in (np.float32, np.complex64):
        return 2e-5
    return 1e-12


def check(got, want):
    """got (a qvalue) has NumPy's values and dtype."""
    assert isinstance(got, q.qvalue), type(got)
    g = np.asarray(got)
    w = np.asarray(want)
    assert g.shape == w.shape
    assert g.dtype == w.dtype
    if w.dtype.kind in "fc" or g.dtype.kind in "fc":
        rtol = tol(w.dtype if w.dtype.kind in "fc" else g.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * 1e-3, equal_nan=True)
    else:
        np.testing.assert_array_equal(g, w)


def same(got, want):
    """Recursive check of a function's result against NumPy's: qvalues where NumPy has arrays."""
    if isinstance(want, (list, tuple)):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
    elif isinstance(want, (np.ndarray, np.generic)):
        check(got, want)
    else:
        assert type(got) is type(want) and got == want


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


def ufunc_id(u):
    return u.__name__


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


# ---- ufunc keywords ----


def test_out_qvalue_and_numpy_array():
    x = np.linspace(-1, 1, 12).reshape(3, 4)
    X = q.value(x)
    out = q.zeros(3, 4, dtype="float64")
    r = np.exp(X, out=out)
    assert r is out
    check(out, np.exp(x))
    o = np.zeros((3, 4))
    r = np.add(X, 1, out=o)
    assert r is o
    np.testing.assert_allclose(o, x + 1)
    r = np.add(X, 1, out=(o,))  # NumPy's tuple form
    assert r is o
    o32 = np.zeros((3, 4), dtype=np.float32)
    np.multiply(X, 2, out=o32)  # same_kind: float64 into float32
    np.testing.assert_allclose(o32, (x * 2).astype(np.float32))
    big = q.zeros(2, 3, 4, dtype="float64")  # the result broadcasts into a larger out
    np.add(X, 1, out=big)
    check(big, np.broadcast_to(x + 1, (2, 3, 4)))


def test_out_aliasing_an_input():
    x = np.arange(12.0).reshape(3, 4)
    X = q.value(x)
    r = np.add(X, X.T.T * 2, out=X)
    assert r is X
    check(X, x * 3)
    np.subtract(X, X[::-1], out=X)  # the reversed view reads the old values
    check(X, x * 3 - (x * 3)[::-1])
    Y = q.value(np.arange(4.0))
    np.negative(Y, out=Y)
    check(Y, -np.arange(4.0))


def test_out_numpy_array_that_cannot_be_shared():
    x = np.arange(4.0)
    o = np.zeros(4, dtype=">f8")  # byte-swapped: written through NumPy instead
    assert np.add(q.value(x), 1, out=o) is o
    np.testing.assert_array_equal(o, x + 1)
    o = np.full(4, -1.0, dtype=">f8")
    np.add(q.value(x), 1, out=o, where=np.array([True, False, True, False]))
    np.testing.assert_array_equal(o, [1.0, -1.0, 3.0, -1.0])


def test_out_noncontiguous_view():
    base = q.zeros(4, 6, dtype="float64")
    view = base[:, ::2]
    x = np.arange(12.0).reshape(4, 3)
    np.sqrt(x, out=view)
    want = np.zeros((4, 6))
    want[:, ::2] = np.sqrt(x)
    check(base, want)


def test_where_with_and_without_out():
    x = np.arange(6.0).reshape(2, 3)
    mask = np.array([True, False, True])
    out = q.full((2, 3), -1.0, dtype="float64")
    r = np.multiply(q.value(x), 10, out=out, where=mask)
    assert r is out
    want = np.full((2, 3), -1.0)
    np.multiply(x, 10, out=want, where=mask)
    check(out, want)
    r = np.add(q.value(x), 1, where=q.value(mask))  # no out: zeros where the mask is false
    check(r, np.where(mask, x + 1, 0))
    o = np.full((2, 3), 7, dtype=np.int64)
    np.add(q.value(np.ones((2, 3), np.int64)), 1, out=o, where=mask)
    np.testing.assert_array_equal(o, np.broadcast_to(np.where(mask, 2, 7), (2, 3)))
    with pytest.raises(TypeError):
        np.add(q.value(x), 1, where=np.array([1, 0, 1]))  # not a bool mask


def test_dtype_keyword():
    i = np.arange(1, 7, dtype=np.int32)
    I = q.value(i)
    check(np.add(I, I, dtype=np.float64), np.add(i, i, dtype=np.float64))
    check(np.multiply(I, 3, dtype="int64"), np.multiply(i, 3, dtype="int64"))
    f = np.linspace(0.1, 2, 6)
    check(np.exp(q.value(f), dtype=np.float32), np.exp(f, dtype=np.float32))
    check(np.less(q.value(f), 1, dtype=bool), np.less(f, 1, dtype=bool))
    with pytest.raises(TypeError):
        np.divide(I, I, dtype=np.int32)  # NumPy has no such loop
    with pytest.raises(TypeError):
        np.less(q.value(f), 1, dtype=np.float64)
    with pytest.raises(TypeError):
        np.add(I, I, dtype="bfloat16")  # not a NumPy dtype
    with pytest.raises(TypeError):
        np.add(I, I, dtype="nonsense")


@pytest.mark.parametrize("casting", ["no", "equiv", "safe", "same_kind", "unsafe"])
def test_casting_rules_match_numpy(casting):
    f64 = np.linspace(-2, 2, 6)
    f32 = f64.astype(np.float32)
    i32 = np.arange(6, dtype=np.int32)
    cases = [
        (np.add, (f64, f64), np.float64),
        (np.add, (f32, f64), np.float64),
        (np.add, (f64, f64), np.float32),
        (np.add, (f64, f64), np.int32),
        (np.add, (i32, i32), np.float64),
        (np.exp, (i32,), np.float64),
        (np.exp, (f64,), np.float32),
        (np.negative, (i32,), np.int64),
    ]
    for ufunc, ops, out_dtype in cases:
        want_out = np.zeros(6, out_dtype)
        try:
            ufunc(*ops, out=want_out, casting=casting)
            error = None
        except TypeError as e:
            error = e
        out = q.full(6, 3, dtype=np.dtype(out_dtype).name)
        Q = [q.value(o) for o in ops]
        if error is None:
            ufunc(*Q, out=out, casting=casting)
            check(out, want_out)
        else:
            with pytest.raises(TypeError, match="Cannot cast ufunc"):
                ufunc(*Q, out=out, casting=casting)
            check(out, np.full(6, 3, out_dtype))  # unchanged


def test_casting_with_dtype_checks_the_inputs():
    f64 = np.linspace(0, 1, 4)
    with pytest.raises(TypeError, match="input"):
        np.add(q.value(f64), q.value(f64), dtype=np.float32, casting="safe")
    check(np.add(q.value(f64), 1, dtype=np.float32, casting="same_kind"),
          np.add(f64, 1, dtype=np.float32))


def test_bad_ufunc_keywords():
    X = q.value(np.arange(4.0))
    before = X.to_py().copy()
    with pytest.raises(ValueError, match="casting must be one of"):
        np.add(X, 1, casting="bogus")
    with pytest.raises(TypeError, match="order"):
        np.add(X, 1, order="F")
    with pytest.raises(TypeError, match="signature"):
        np.add(X, 1, signature=(None, None, np.float64))
    with pytest.raises(TypeError, match="axes"):
        np.matmul(q.ones(2, 2), q.ones(2, 2), axes=[(0, 1), (0, 1), (0, 1)])
    check(np.add(X, 1, order="C", subok=False), before + 1)
    ro = np.zeros(4)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        np.add(X, 1, out=ro)
    out = q.zeros(3, dtype="float64")
    with pytest.raises(ValueError, match="non-broadcastable"):
        np.add(X, 1, out=out)
    check(out, np.zeros(3))
    with pytest.raises(TypeError, match="kind"):
        np.add(X, 1, out=q.value(1.0))  # a scalar is not an output array
    with pytest.raises(TypeError):
        np.add(X, "a")
    with pytest.raises(TypeError):
        np.exp(q.value("text"))
    np.testing.assert_array_equal(X.to_py(), before)


# ---- reduce and accumulate ----


@pytest.mark.parametrize("ufunc", list(npp.HANDLED_REDUCTIONS), ids=ufunc_id)
def test_reduce_matches_numpy(ufunc):
    rng = np.random.default_rng(7)
    x = rng.uniform(0.5, 1.5, (3, 4, 5))
    if ufunc in (np.logical_and, np.logical_or):
        x = x > 0.9
    X = q.asvalue(x[:, ::-1])  # a non-contiguous view
    xv = x[:, ::-1]
    check(ufunc.reduce(X), ufunc.reduce(xv))  # NumPy's default axis is 0
    check(ufunc.reduce(X, axis=None), ufunc.reduce(xv, axis=None))
    check(ufunc.reduce(X, axis=(0, 2), keepdims=True), ufunc.reduce(xv, axis=(0, 2),
                                                                    keepdims=True))
    mask = rng.uniform(size=(4, 5)) > 0.3
    init = {np.maximum: 0.7, np.minimum: 1.1}.get(ufunc, None)
    kw = {} if init is None else {"initial": init}
    check(ufunc.reduce(X, axis=0, where=mask, **kw), ufunc.reduce(xv, axis=0, where=mask, **kw))
    if ufunc not in (np.logical_and, np.logical_or):
        check(ufunc.reduce(X, axis=2, initial=2.0), ufunc.reduce(xv, axis=2, initial=2.0))
        out = q.zeros(4, 5, dtype="float32")
        r = ufunc.reduce(X, axis=0, out=out)
        assert r is out
        check(out, ufunc.reduce(xv, axis=0).astype(np.float32))
    empty = np.zeros((0, 3), dtype=x.dtype)
    check(ufunc.reduce(q.asvalue(empty), axis=0, **kw), ufunc.reduce(empty, axis=0, **kw))


def test_reduce_dtypes_and_errors():
    i = np.arange(1, 13, dtype=np.int32).reshape(3, 4)
    I = q.value(i)
    check(np.add.reduce(I), np.add.reduce(i))  # int32 sums in int64, as NumPy
    check(np.add.reduce(I, dtype=np.int32), np.add.reduce(i, dtype=np.int32))
    check(np.multiply.reduce(I, axis=1, dtype=np.float64),
          np.multiply.reduce(i, axis=1, dtype=np.float64))
    check(np.add.reduce(I, axis=1, initial=-1.5), np.add.reduce(i, axis=1, initial=-1.5))
    with pytest.raises(ValueError, match="identity"):
        np.maximum.reduce(I, where=np.ones((3, 4), bool))
    with pytest.raises(ValueError):
        np.maximum.reduce(q.zeros(0, 3), axis=0)  # no identity, no elements
    with pytest.raises(IndexError):
        np.add.reduce(I, axis=2)
    with pytest.raises(TypeError, match="bogus"):
        np.add.reduce(I, bogus=1)
    np.testing.assert_array_equal(I.to_py(), i)


@pytest.mark.parametrize("ufunc", list(npp.HANDLED_ACCUMULATIONS), ids=ufunc_id)
def test_accumulate_matches_numpy(ufunc):
    x = np.random.default_rng(8).uniform(0.5, 1.5, (3, 4))
    X = q.asvalue(x.T)
    check(ufunc.accumulate(X), ufunc.accumulate(x.T))
    check(ufunc.accumulate(X, axis=1), ufunc.accumulate(x.T, axis=1))
    i = np.arange(1, 7, dtype=np.int16)
    check(ufunc.accumulate(q.value(i)), ufunc.accumulate(i))
    check(ufunc.accumulate(q.value(i), dtype=np.float32), ufunc.accumulate(i, dtype=np.float32))
    out = q.zeros(4, 3, dtype="float64")
    assert ufunc.accumulate(X, out=out) is out
    check(out, ufunc.accumulate(x.T))
    with pytest.raises(TypeError):
        ufunc.accumulate(q.value(1.0))


# ---- the functions table ----

RNG = np.random.default_rng(11)
F = RNG.uniform(-2, 2, (4, 6))
FT = F.T  # non-contiguous
C = F[:, :3] + 1j * F[:, 3:]
I = RNG.integers(0, 5, (4, 6)).astype(np.int32)
B = F > 0
V = RNG.uniform(-2, 2, 6)
M = RNG.uniform(size=(4, 6)) > 0.4
E = np.zeros((0, 3))

# name -> calls; each call gets `a`, which turns a NumPy array into the argument (the array
# itself for the reference, a qvalue sharing it for isthmus), and returns (args, kwargs).
FUNCTION_CASES = {
    "sum": [lambda a: ((a(F),), {}), lambda a: ((a(FT),), dict(axis=1, keepdims=True)),
            lambda a: ((a(I),), dict(dtype=np.int16)), lambda a: ((a(F),), dict(initial=3.0)),
            lambda a: ((a(F),), dict(axis=0, where=M)), lambda a: ((a(E),), dict(axis=0))],
    "prod": [lambda a: ((a(F),), dict(axis=0)), lambda a: ((a(I),), dict(axis=(0, 1))),
             lambda a: ((a(F),), dict(axis=1, where=M, initial=2.0))],
    "mean": [lambda a: ((a(F),), {}), lambda a: ((a(I),), dict(axis=1)),
             lambda a: ((a(FT),), dict(axis=0, keepdims=True)),
             lambda a: ((a(F),), dict(axis=1, where=M)), lambda a: ((a(C),), dict(axis=0)),
             lambda a: ((a(F),), dict(dtype=np.float32))],
    "max": [lambda a: ((a(F),), {}), lambda a: ((a(FT),), dict(axis=1)),
            lambda a: ((a(F),), dict(axis=0, where=M, initial=-5.0)),
            lambda a: ((a(E),), dict(axis=0, initial=1.0))],
    "min": [lambda a: ((a(I),), dict(axis=1, keepdims=True)),
            lambda a: ((a(F),), dict(initial=-1.0))],
    "amax": [lambda a: ((a(F),), dict(axis=1))],
    "amin": [lambda a: ((a(F),), dict(axis=0))],
    "any": [lambda a: ((a(B),), dict(axis=1)), lambda a: ((a(F),), {}),
            lambda a: ((a(B),), dict(axis=0, where=M))],
    "all": [lambda a: ((a(B),), dict(axis=0, keepdims=True)), lambda a: ((a(I),), {}),
            lambda a: ((a(B),), dict(where=M))],
    "var": [lambda a: ((a(F),), {}), lambda a: ((a(F),), dict(axis=1, ddof=1)),
            lambda a: ((a(C),), dict(axis=0)), lambda a: ((a(I),), dict(axis=0)),
            lambda a: ((a(F),), dict(axis=1, where=M)),
            lambda a: ((a(F),), dict(axis=0, correction=1))],
    "std": [lambda a: ((a(FT),), dict(axis=0)), lambda a: ((a(F),), dict(keepdims=True)),
            lambda a: ((a(C),), dict(axis=1, where=M[:, :3], ddof=1))],
    "argmin": [lambda a: ((a(F),), {}), lambda a: ((a(FT),), dict(axis=1))],
    "argmax": [lambda a: ((a(F),), dict(axis=0, keepdims=True)), lambda a: ((a(I),), {})],
    "cumsum": [lambda a: ((a(F),), {}), lambda a: ((a(I),), dict(axis=1)),
               lambda a: ((a(I),), dict(axis=0, dtype=np.float32))],
    "cumprod": [lambda a: ((a(F),), dict(axis=0)), lambda a: ((a(I),), dict(axis=1))],
    "concatenate": [lambda a: (([a(F), a(I)],), {}), lambda a: (([a(F), a(F)],), dict(axis=1)),
                    lambda a: (([a(F), a(V)],), dict(axis=None)),
                    lambda a: (([a(I), a(I)],), dict(dtype=np.float32))],
    "concat": [lambda a: (([a(F), a(F)],), dict(axis=-1))],
    "stack": [lambda a: (([a(F), a(FT.T)],), {}), lambda a: (([a(V), a(V)],), dict(axis=1))],
    "split": [lambda a: ((a(F), 2), {}), lambda a: ((a(F), [1, 4]), dict(axis=1))],
    "array_split": [lambda a: ((a(F), 4), dict(axis=1)), lambda a: ((a(V), 4), {})],
    "flip": [lambda a: ((a(F),), {}), lambda a: ((a(F),), dict(axis=1))],
    "fliplr": [lambda a: ((a(F),), {})],
    "flipud": [lambda a: ((a(FT),), {})],
    "tile": [lambda a: ((a(V), (2, 2)), {}), lambda a: ((a(F), 2), {})],
    "repeat": [lambda a: ((a(F), 2), {}), lambda a: ((a(F), 3), dict(axis=0)),
               lambda a: ((a(V), a(np.arange(6))), {})],
    "pad": [lambda a: ((a(F), 1), {}), lambda a: ((a(F), ((1, 2), (0, 1))), dict(mode="edge")),
            lambda a: ((a(F), 2), dict(mode="reflect")),
            lambda a: ((a(F), 2), dict(mode="symmetric")),
            lambda a: ((a(F), 1), dict(mode="wrap")),
            lambda a: ((a(F), 1), dict(constant_values=9.5))],
    "reshape": [lambda a: ((a(F), (3, 8)), {}), lambda a: ((a(FT), -1), {}),
                lambda a: ((a(F),), dict(shape=(2, -1), copy=True))],
    "transpose": [lambda a: ((a(F),), {}), lambda a: ((a(F[None]), (2, 0, 1)), {})],
    "permute_dims": [lambda a: ((a(F[None]),), dict(axes=(1, 2, 0)))],
    "moveaxis": [lambda a: ((a(F[None]), 0, -1), {}),
                 lambda a: ((a(F[None]), [0, 1], [2, 0]), {})],
    "swapaxes": [lambda a: ((a(F[None]), 0, 2), {})],
    "squeeze": [lambda a: ((a(F[None, :, None]),), {}),
                lambda a: ((a(F[None, :, None]),), dict(axis=0))],
    "expand_dims": [lambda a: ((a(F), 1), {}), lambda a: ((a(F), (0, -1)), {})],
    "broadcast_to": [lambda a: ((a(V), (3, 6)), {})],
    "ravel": [lambda a: ((a(F),), {}), lambda a: ((a(FT),), {})],
    "nonzero": [lambda a: ((a(B),), {}), lambda a: ((a(I),), {})],
    "flatnonzero": [lambda a: ((a(I),), {})],
    "argwhere": [lambda a: ((a(B),), {})],
    "take": [lambda a: ((a(F), a(np.array([0, 5, 3]))), {}),
             lambda a: ((a(F), a(np.array([1, 0]))), dict(axis=0)),
             lambda a: ((a(F), a(np.array([7, -9]))), dict(axis=1, mode="wrap")),
             lambda a: ((a(F), a(np.array([7, -9]))), dict(axis=1, mode="clip"))],
    "take_along_axis": [lambda a: ((a(F), a(np.argsort(F, axis=1))), dict(axis=1)),
                        lambda a: ((a(V), a(np.argsort(V))), dict(axis=None))],
    "where": [lambda a: ((a(B), a(F), a(I)), {}), lambda a: ((a(B),), {}),
              lambda a: ((a(B), a(F), 0.5), {})],
    "clip": [lambda a: ((a(F), -1, 1), {}), lambda a: ((a(F), None, a(V)), {}),
             lambda a: ((a(I),), dict(min=1, max=3))],
    "dot": [lambda a: ((a(F), a(FT)), {}), lambda a: ((a(V), a(V)), {})],
    "vdot": [lambda a: ((a(C), a(C)), {})],
    "inner": [lambda a: ((a(F), a(F)), {})],
    "outer": [lambda a: ((a(V), a(F[0])), {})],
    "zeros_like": [lambda a: ((a(F),), {}), lambda a: ((a(I),), dict(dtype=np.float32)),
                   lambda a: ((a(F),), dict(shape=(2, 5)))],
    "ones_like": [lambda a: ((a(C),), {})],
    "full_like": [lambda a: ((a(F), 2.5), {}), lambda a: ((a(I), 7.9), {}),
                  lambda a: ((a(F), a(V)), {})],
    "copy": [lambda a: ((a(FT),), {})],
    "astype": [lambda a: ((a(F), np.int32), {}), lambda a: ((a(I), "float32"), {})],
    "round": [lambda a: ((a(F),), {}), lambda a: ((a(F), 2), {}), lambda a: ((a(F * 100), -1), {}),
              lambda a: ((a(I),), {}), lambda a: ((a(C), 1), {})],
    "around": [lambda a: ((a(F), 1), {})],
    "real": [lambda a: ((a(C),), {}), lambda a: ((a(F),), {})],
    "imag": [lambda a: ((a(C),), {})],
    "isclose": [lambda a: ((a(F), a(F + 1e-9)), {}),
                lambda a: ((a(np.array([np.nan, np.inf, 1.0])),
                            a(np.array([np.nan, np.inf, 1.1]))), dict(equal_nan=True)),
                lambda a: ((a(I), 2), dict(atol=0.5))],
    "allclose": [lambda a: ((a(F), a(F * (1 + 1e-7))), {}), lambda a: ((a(F), a(FT.T + 1)), {})],
    "array_equal": [lambda a: ((a(F), a(FT.T)), {}), lambda a: ((a(F), a(V)), {}),
                    lambda a: ((a(np.array([np.nan])), a(np.array([np.nan]))),
                               dict(equal_nan=True))],
    "shape": [lambda a: ((a(F),), {})],
    "ndim": [lambda a: ((a(F[None]),), {})],
    "size": [lambda a: ((a(F),), {}), lambda a: ((a(F),), dict(axis=1))],
}
# Functions checked by tests of their own below (in place; uninitialised values).
OWN_TESTS = {"put_along_axis", "empty_like"}


def function_cases():
    for fn in sorted(npp.HANDLED_FUNCTIONS, key=lambda f: f.__name__):
        for i, case in enumerate(FUNCTION_CASES.get(fn.__name__, [])):
            yield pytest.param(fn, case, id=f"{fn.__name__}-{i}")


def test_every_handled_function_has_cases():
    names = {fn.__name__ for fn in npp.HANDLED_FUNCTIONS} - OWN_TESTS
    missing = sorted(n for n in names if not FUNCTION_CASES.get(n))
    assert not missing, f"HANDLED_FUNCTIONS entries without a test case: {missing}"


@pytest.mark.parametrize("fn,case", list(function_cases()))
def test_every_handled_function_matches_numpy(fn, case):
    args, kwargs = case(lambda x: x)
    qargs, qkwargs = case(q.asvalue)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = fn(*args, **kwargs)
    before = [np.array(x) for x in (F, I, B, V, C)]
    same(fn(*qargs, **qkwargs), want)
    for x, b in zip((F, I, B, V, C), before):
        np.testing.assert_array_equal(x, b)  # inputs unchanged


def test_put_along_axis_writes_in_place():
    x = np.arange(12.0).reshape(3, 4)
    idx = np.array([[0], [2], [1]])
    X = q.value(x)
    np.put_along_axis(X, idx, q.value(-1.0), axis=1)
    np.put_along_axis(x, idx, -1.0, axis=1)
    check(X, x)
    T = q.value(np.arange(12.0).reshape(4, 3)).T  # a transposed view, axis=None (flattened)
    t = np.arange(12.0).reshape(4, 3).T.copy()
    np.put_along_axis(T, q.value([0, 5]), q.value([9.0, 8.0]), axis=None)
    np.put_along_axis(t, np.array([0, 5]), np.array([9.0, 8.0]), axis=None)
    check(T, t)


def test_empty_like_has_the_shape_and_dtype():
    for kw in ({}, {"dtype": np.int16}, {"shape": (2, 5)}):
        got, want = np.empty_like(q.value(F), **kw), np.empty_like(F, **kw)
        assert isinstance(got, q.qvalue)
        assert got.shape == want.shape and got.dtype == want.dtype


def test_function_out_keywords():
    X = q.value(F)
    out = q.zeros(6, dtype="float64")
    assert np.sum(X, axis=0, out=out) is out
    check(out, F.sum(axis=0))
    o = np.zeros(4, dtype=np.int32)
    assert np.max(X, axis=1, out=o) is o  # reductions cast unsafely, as NumPy's
    np.testing.assert_array_equal(o, F.max(axis=1).astype(np.int32))
    co = q.zeros(8, 6, dtype="float64")
    assert np.concatenate([X, X], out=co) is co
    check(co, np.concatenate([F, F]))
    with pytest.raises(TypeError, match="Cannot cast"):
        np.concatenate([X, X], out=q.zeros(8, 6, dtype="int32"))
    with pytest.raises(TypeError, match="both"):
        np.concatenate([X, X], out=co, dtype=np.float64)
    d = q.zeros(4, 4, dtype="float64")
    assert np.dot(X, X.T, out=d) is d
    check(d, F @ F.T)
    with pytest.raises(ValueError, match="not acceptable"):
        np.dot(X, X.T, out=q.zeros(4, 4, dtype="float32"))
    r = q.zeros(4, 6, dtype="float64")
    assert np.clip(X, -1, 1, out=r) is r
    check(r, np.clip(F, -1, 1))
    with pytest.raises(TypeError, match="Cannot cast"):
        np.round(X, out=q.zeros(4, 6, dtype="int32"))
    t = q.zeros(2, dtype="float64")
    assert np.take(X, [0, 1], out=t) is t
    check(t, F.ravel()[:2])
    am = q.zeros(6, dtype="int64")
    assert np.argmax(X, axis=0, out=am) is am
    check(am, F.argmax(axis=0))
    for name in ("mean", "var", "std", "cumsum", "prod"):
        o = q.zeros(*np.shape(getattr(np, name)(F, axis=0)), dtype="float64")
        assert getattr(np, name)(X, axis=0, out=o) is o
        check(o, getattr(np, name)(F, axis=0))


def test_unsupported_function_keywords_raise():
    X = q.value(F)
    before = F.copy()
    for call, word in [
        (lambda: np.reshape(X, (3, 8), order="F"), "order"),
        (lambda: np.ravel(X.T, order="F"), "order"),
        (lambda: np.copy(X, order="F"), "order"),
        (lambda: np.zeros_like(X, order="F"), "order"),
        (lambda: np.pad(X, 1, mode="median"), "mode"),
        (lambda: np.pad(X, 1, mode="reflect", reflect_type="odd"), "reflect_type"),
        (lambda: np.pad(X, 1, constant_values=((1, 2), (3, 4))), "constant_values"),
        (lambda: np.var(X, mean=np.zeros(1)), "mean"),
        (lambda: np.clip(X, 0, 1, dtype=np.float32), "dtype"),
        (lambda: np.round(q.value(I), -1), "decimals"),
        (lambda: np.stack([X, X], axis=None), "axis"),
        (lambda: np.zeros_like(X, device="cuda:0"), "device"),
        (lambda: np.logical_and.reduce(X, dtype=np.float64), "dtype"),
    ]:
        with pytest.raises(TypeError, match=word):
            call()
    np.testing.assert_array_equal(X.to_py(), before)
    with pytest.raises(ValueError, match="both or neither"):
        np.where(X > 0, X)
    with pytest.raises(ValueError):
        np.reshape(X.T, (24,), copy=False)  # needs a copy
    with pytest.raises(ValueError):
        np.split(X, 5)
    with pytest.raises(IndexError):
        np.sum(X, axis=3)
    with pytest.raises(ValueError, match="correction"):
        np.var(X, ddof=1, correction=1)
    with pytest.raises(ValueError, match="clipmode"):
        np.take(X, [0], mode="bogus")
    np.testing.assert_array_equal(X.to_py(), before)


def test_results_keep_isthmus_forms():
    X = q.value(F)
    s = np.sum(X)
    assert isinstance(s, q.qvalue) and s.kind == "scalar"  # a full reduction is a scalar
    assert float(s) == pytest.approx(F.sum(), rel=1e-12)
    for r in (np.sum(X, initial=1.0), np.max(X, initial=9.0), np.take(X, 3),
              np.max(X, where=np.zeros(6, bool), initial=-1.0)):
        assert r.kind == "scalar"  # as NumPy's scalars
    assert float(np.max(X, where=np.zeros(6, bool), initial=-1.0)) == -1.0
    assert isinstance(np.allclose(X, F), bool) and np.allclose(X, F)
    assert np.shape(X) == (4, 6) and np.ndim(X) == 2 and np.size(X) == 24
    parts = np.split(X, 2)
    assert isinstance(parts, list) and all(isinstance(p, q.qvalue) for p in parts)
    view = np.reshape(X, (24,))
    view[0] = 100.0  # reshape of a contiguous tensor is a view, as NumPy's
    assert float(X[0, 0]) == 100.0


def test_empty_and_zero_d_functions():
    Z = q.value(np.array(2.5))
    check(np.sum(Z), np.sum(np.array(2.5)))
    check(np.expand_dims(Z, 0), np.expand_dims(np.array(2.5), 0))
    check(np.concatenate([q.zeros(0, 3, dtype="float64"), q.ones(2, 3, dtype="float64")]),
          np.concatenate([E, np.ones((2, 3))]))
    check(np.mean(q.zeros(3, 0, dtype="float64"), axis=0), np.zeros(0))
    check(np.cumsum(q.zeros(0, dtype="float64")), np.zeros(0))
    check(np.any(q.zeros(0)), np.any(np.zeros(0)))


# ---- the fallback ----


def test_fallback_runs_numpy_and_returns_qvalues():
    x = RNG.uniform(-1, 1, (5, 4))
    X = q.value(x)
    for fn, args in [(np.median, ()), (np.sort, ()), (np.percentile, (30,)), (np.diff, ()),
                     (np.linalg.inv, ())]:
        for kw in ({}, {"axis": 0}) if fn not in (np.linalg.inv, np.percentile) else ({},):
            a = x[:4] if fn is np.linalg.inv else x
            A = X[:4] if fn is np.linalg.inv else X
            want = fn(a, *args, **kw)
            got = fn(A, *args, **kw)
            same(got, want)
    assert np.median(X).kind == "scalar"  # NumPy's scalar result as a scalar qvalue
    assert np.count_nonzero(X > 0) == np.count_nonzero(x > 0)  # Python results stay Python


def test_fallback_for_other_ufuncs_and_methods():
    x = np.arange(1.0, 7.0)
    X = q.value(x)
    same(np.fmax(X, 3.0), np.fmax(x, 3.0))  # a ufunc isthmus lacks
    same(np.divmod(X, 4), np.divmod(x, 4))  # two outputs
    same(np.add.outer(X, X[:2]), np.add.outer(x, x[:2]))
    same(np.add.reduceat(X, [0, 3]), np.add.reduceat(x, [0, 3]))
    same(np.power.reduce(X[:3]), np.power.reduce(x[:3]))  # a reduce isthmus does not map
    np.add.at(X, [0, 0, 5], 1.0)  # writes through the shared memory
    want = x.copy()
    np.add.at(want, [0, 0, 5], 1.0)
    check(X, want)
    out = q.zeros(6, dtype="float64")
    assert np.fmax(X, 4.0, out=out) is out  # a qvalue out comes back as itself
    check(out, np.fmax(want, 4.0))
    np.testing.assert_array_equal(x, np.arange(1.0, 7.0))  # q.value copied x


def test_fallback_refuses_what_numpy_cannot_read():
    with pytest.raises(TypeError):
        np.sort(q.value(np.arange(3.0)).astype("bfloat16"))
    with pytest.raises(TypeError, match="kind"):
        np.sort(q.typename("vec[mat]")(2))  # a cell


@pytest.mark.skipif(not q.cuda_available(), reason="needs a CUDA device")
def test_fallback_refuses_device_values():
    A = q.value(np.arange(6.0)).to("cuda")
    with pytest.raises(TypeError, match="cuda"):
        np.median(A)
    with pytest.raises(TypeError, match="cuda"):
        np.fmax(A, 1.0)
    check(np.exp(A).to("cpu"), np.exp(np.arange(6.0)))  # a mapped op runs on the device


# ---- other array types ----


class Foreign:
    """An array type that overrides NumPy itself."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return "foreign ufunc"

    def __array_function__(self, func, types, args, kwargs):
        return "foreign function"


def test_foreign_overrides_win():
    X = q.value(np.arange(3.0))
    assert np.add(X, Foreign()) == "foreign ufunc"
    assert np.concatenate([X, Foreign()]) == "foreign function"


def test_masked_arrays_are_not_unmasked():
    X = q.value(np.arange(4.0))
    m = np.ma.masked_array(np.arange(4.0), mask=[0, 1, 0, 0])
    with pytest.raises(TypeError):
        np.add(m, X)  # isthmus would drop the mask: NumPy's TypeError instead
    with pytest.raises(TypeError):
        np.concatenate([m, X])
    r = m + X  # MaskedArray's own operator keeps its mask
    assert isinstance(r, np.ma.MaskedArray) and r.mask.tolist() == [False, True, False, False]


class OptsOut:
    __array_ufunc__ = None


def test_types_that_opt_out_get_numpys_type_error():
    with pytest.raises(TypeError):
        np.add(q.value(np.arange(3.0)), OptsOut())


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


# ---- __format__ ----


def test_format_scalars_and_one_element_tensors():
    assert f"{q.value(1.5):.2f}" == "1.50"
    assert f"{q.value(np.float64(2.0) / 3):.3e}" == f"{2.0 / 3:.3e}"
    assert f"{q.value(7):04d}" == "0007"
    assert f"{q.value(np.array(2.25)):.1f}" == "2.2"  # 0-d tensor (half to even, as float)
    assert f"{q.value([3.0]):g}" == "3"  # one element
    assert f"{q.value([[4]], dtype='int16'):>3}" == "  4"
    assert format(q.value(1 + 2j), ".1f") == "1.0+2.0j"
    assert f"{q.value('ab'):>4}" == "  ab"
    assert f"{q.value(True)}" == str(q.value(True))


def test_format_empty_spec_is_str():
    for v in (q.value([1.0, 2.0]), q.value(1.5), q.zeros(2, 2), q.value("s"), q.value(None)):
        assert f"{v}" == str(v) and format(v, "") == str(v)


def test_format_refuses_arrays():
    A = q.value([1.0, 2.0])
    with pytest.raises(TypeError, match="unsupported format string"):
        f"{A:.2f}"
    with pytest.raises(TypeError, match="unsupported format string"):
        format(q.zeros(0), ".1f")
    with pytest.raises(TypeError, match="unsupported format string"):
        format(q.value(None), "d")
    with pytest.raises(ValueError):
        format(q.value(1.5), "d")  # the Python number's own error
    assert A.to_py().tolist() == [1.0, 2.0]
