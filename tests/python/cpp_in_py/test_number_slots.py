# The operators' CPython number slots and the raw __dlpack__ methods: same results and errors as
# the named methods (Note [number slots], Note [raw dlpack method]).
import operator

import numpy as np
import pytest

import isthmus as q

BINARY = [
    (operator.add, "__add__", "__radd__"),
    (operator.sub, "__sub__", "__rsub__"),
    (operator.mul, "__mul__", "__rmul__"),
    (operator.truediv, "__truediv__", "__rtruediv__"),
    (operator.floordiv, "__floordiv__", "__rfloordiv__"),
    (operator.mod, "__mod__", "__rmod__"),
    (operator.pow, "__pow__", "__rpow__"),
]
BITWISE = [
    (operator.and_, "__and__", "__rand__"),
    (operator.or_, "__or__", "__ror__"),
    (operator.xor, "__xor__", "__rxor__"),
    (operator.lshift, "__lshift__", "__rlshift__"),
    (operator.rshift, "__rshift__", "__rrshift__"),
]
INPLACE = {
    operator.add: operator.iadd,
    operator.sub: operator.isub,
    operator.mul: operator.imul,
    operator.truediv: operator.itruediv,
    operator.floordiv: operator.ifloordiv,
    operator.mod: operator.imod,
    operator.pow: operator.ipow,
    operator.and_: operator.iand,
    operator.or_: operator.ior,
    operator.xor: operator.ixor,
    operator.lshift: operator.ilshift,
    operator.rshift: operator.irshift,
}


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def floats(rng, shape):
    return (rng.random(shape) + 0.5).astype(np.float64)


@pytest.mark.parametrize("op, fwd, ref", BINARY)
def test_slots_match_numpy_and_methods(rng, op, fwd, ref):
    x, y = floats(rng, (3, 4)), floats(rng, (4,))  # broadcast
    a, b = q.value(x), q.value(y)
    expect = op(x, y)
    np.testing.assert_allclose(np.asarray(op(a, b)), expect, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(getattr(a, fwd)(b)), expect, rtol=1e-12)
    # reflected: a Python number or a NumPy array on the left
    np.testing.assert_allclose(np.asarray(op(2.5, a)), op(2.5, x), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(getattr(a, ref)(2.5)), op(2.5, x), rtol=1e-12)
    r = op(y, a)
    assert isinstance(r, q.qvalue)  # NumPy defers to qvalue (__array_priority__)
    np.testing.assert_allclose(np.asarray(r), op(y, x), rtol=1e-12)


@pytest.mark.parametrize("op, fwd, ref", BITWISE)
def test_bitwise_slots(rng, op, fwd, ref):
    x = rng.integers(0, 60, (5,), dtype=np.int64)
    y = rng.integers(0, 5, (5,), dtype=np.int64)
    a, b = q.value(x), q.value(y)
    np.testing.assert_array_equal(np.asarray(op(a, b)), op(x, y))
    np.testing.assert_array_equal(np.asarray(op(3, b)), op(3, y))


@pytest.mark.parametrize("op", list(INPLACE))
def test_inplace_slots_write_into_the_same_value(rng, op):
    if op in (operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift):
        x = rng.integers(1, 60, (2, 3), dtype=np.int64)
        y = rng.integers(0, 4, (3,), dtype=np.int64)
    else:
        x, y = floats(rng, (2, 3)), floats(rng, (3,))
    a = q.value(x.copy())
    alias = a
    a = INPLACE[op](a, q.value(y))
    assert a is alias  # written in place, not rebound
    np.testing.assert_allclose(np.asarray(a), op(x, y), rtol=1e-12)


def test_inplace_on_a_scalar_rebinds():
    s = q.value(2.0)
    t = s
    s += 3  # scalars have no memory to write: Python computes s = s + 3
    assert float(s) == 5.0 and float(t) == 2.0


def test_unary_slots(rng):
    x = rng.standard_normal((4,))
    a = q.value(x)
    np.testing.assert_array_equal(np.asarray(-a), -x)
    np.testing.assert_array_equal(np.asarray(abs(a)), np.abs(x))
    b = q.value(np.array([True, False]))
    np.testing.assert_array_equal(np.asarray(~b), [False, True])
    i = q.value(np.array([0, 5], dtype=np.int32))
    np.testing.assert_array_equal(np.asarray(~i), ~np.array([0, 5], dtype=np.int32))
    assert float(-q.value(1.5)) == -1.5  # a scalar stays a scalar


def test_matmul_slot(rng):
    x, y = floats(rng, (3, 4)), floats(rng, (4, 2))
    np.testing.assert_allclose(np.asarray(q.value(x) @ q.value(y)), x @ y, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(x @ q.value(y)), x @ y, rtol=1e-12)


def test_errors_through_slots_leave_operands_unchanged(rng):
    x, y = floats(rng, (3,)), floats(rng, (4,))
    a, b = q.value(x.copy()), q.value(y.copy())
    with pytest.raises(ValueError, match="broadcast"):
        a + b
    with pytest.raises(ValueError, match="broadcast"):
        a += b
    np.testing.assert_array_equal(np.asarray(a), x)
    np.testing.assert_array_equal(np.asarray(b), y)
    with pytest.raises(TypeError, match="unsupported operand"):
        a + "text"  # NotImplemented both ways: Python's TypeError
    with pytest.raises(TypeError, match="unsupported operand"):
        "text" - a
    with pytest.raises(TypeError):
        pow(a, 2, 5)  # no three-argument pow
    with pytest.raises(TypeError):
        -q.value("text")
    np.testing.assert_array_equal(np.asarray(a), x)


def test_slots_before_init(run_python):
    out = run_python(
        """
        import isthmus as q
        q.init("cpu"); a = q.value([1.0, 2.0]); q.destroy()
        try:
            a + a
        except RuntimeError as e:
            print("RuntimeError", "init" in str(e))
        """
    )
    assert out.stdout.strip() == "RuntimeError True", out.stderr


def test_raw_dlpack_keywords():
    a = q.value(np.arange(4, dtype=np.float32))
    assert a.__dlpack_device__() == (1, 0)
    cap = a.__dlpack__(max_version=(1, 0), stream=None, dl_device=(1, 0), copy=None)
    assert "dltensor_versioned" in repr(cap)
    assert "dltensor" in repr(a.__dlpack__())
    with pytest.raises(TypeError, match="keyword arguments only"):
        a.__dlpack__(None)
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        a.__dlpack__(bogus=1)
    with pytest.raises(TypeError, match="__dlpack_device__"):
        a.__dlpack_device__(1)
    with pytest.raises(TypeError):
        q.qvalue.__dlpack__(3)  # the descriptor checks its object
    with pytest.raises(BufferError):
        a.__dlpack__(dl_device=(7, 0))
    assert "max_version" in q.qvalue.__dlpack__.__doc__
    np.testing.assert_array_equal(np.from_dlpack(a), np.arange(4, dtype=np.float32))
