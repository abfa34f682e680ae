"""Differential fuzzers: value construction (q.value, q.zeros/ones/full) against NumPy, and the
type-name parser (q.typename).

Rules: q.value(x, dtype=d) with an explicit dtype gives np.asarray(x, dtype=d)'s shape, dtype
and values, or both raise (isthmus with OverflowError, ValueError or TypeError: NumPy 2 raises
OverflowError for out-of-range Python ints); without a dtype, isthmus picks its own dtypes
(Python floats are the scalar dtype, float32) but the same shape and values. Sizes follow
NumPy's checks (negative sizes and byte counts past int64 raise ValueError). q.typename(s)
returns a type whose canonical name parses back to it and which matches the value it builds,
or raises ValueError.
"""

import math

import numpy as np
from hypothesis import strategies as st

import isthmus as q
from fuzzing import SECONDS, corpus_line, replay, run_for

ALLOWED = (OverflowError, ValueError, TypeError)
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]
INT64_MAX = 2**63 - 1
MAX_BYTES = 1 << 24


def outcome(fn):
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 - sorted out by the caller
        return None, e


def errors_agree(np_err, q_err, what, line):
    if q_err is not None and not isinstance(q_err, ALLOWED):
        raise AssertionError(f"{what}: isthmus raised {type(q_err).__name__}: {q_err}; {line}") from q_err
    if np_err is None and q_err is not None:
        raise AssertionError(f"{what}: isthmus raised {type(q_err).__name__}: {q_err}, NumPy "
                             f"did not; {line}") from q_err
    if np_err is not None and q_err is None:
        raise AssertionError(f"{what}: NumPy raised {type(np_err).__name__}: {np_err}, isthmus "
                             f"did not; {line}")


def has_float(x):
    """True when x holds a Python or NumPy float or complex (isthmus makes those its scalar
    dtypes, float32 and complex64, where NumPy makes float64 and complex128)."""
    if isinstance(x, (list, tuple)):
        return any(has_float(e) for e in x)
    return isinstance(x, (float, complex, np.floating, np.complexfloating))


def float_outside(x, dtype):
    """True when x holds a float that does not fit dtype's integers (NumPy's cast is undefined)."""
    if isinstance(x, (list, tuple)):
        return any(float_outside(e, dtype) for e in x)
    if not isinstance(x, (float, np.floating)) or np.dtype(dtype).kind not in "iub":
        return False
    if not math.isfinite(x):
        return True
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    return info is not None and not (info.min <= x <= info.max)


# ---- q.value ----

def check_value(case):
    x, dtype = case
    line = "corpus line: " + corpus_line(x, dtype)
    with np.errstate(all="ignore"):
        exp, np_err = outcome(lambda: np.asarray(x, dtype=dtype))
    got, q_err = outcome(lambda: q.value(x, dtype=dtype))
    if np_err is None and exp.dtype.kind in "OUSV":
        # NumPy made an object or string array: isthmus may refuse, but only with a typed error.
        if q_err is not None and not isinstance(q_err, ALLOWED):
            raise AssertionError(f"q.value: {type(q_err).__name__}: {q_err}; {line}") from q_err
        return
    if dtype is not None and float_outside(x, dtype):
        # A float outside an integer dtype: NumPy raises for some (1e300, inf, nan) and wraps
        # others (300.0 -> int8); the cast is undefined, so only a typed error is asked for.
        if q_err is not None and not isinstance(q_err, ALLOWED):
            raise AssertionError(f"q.value: {type(q_err).__name__}: {q_err}; {line}") from q_err
        return
    errors_agree(np_err, q_err, "q.value", line)
    if np_err is not None:
        return
    arr = np.asarray(got)
    assert arr.shape == exp.shape, f"q.value: shape {arr.shape} != NumPy's {exp.shape}; {line}"
    if dtype is not None:
        assert arr.dtype == exp.dtype, f"q.value: dtype {arr.dtype} != NumPy's {exp.dtype}; {line}"
        ok = np.array_equal(arr, exp, equal_nan=arr.dtype.kind in "fc")
    else:
        # isthmus's own dtype choice: compare the values in the wider of the two.
        wide = np.result_type(arr.dtype, exp.dtype)
        with np.errstate(all="ignore"):
            ok = np.array_equal(arr.astype(wide), exp.astype(wide),
                                equal_nan=wide.kind in "fc") or has_float(x)
    assert ok, f"q.value: values {arr!r} != NumPy's {exp!r}; {line}"


def int_near_bounds():
    bounds = []
    for d in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
        i = np.iinfo(d)
        bounds += [int(i.min) - 1, int(i.min), int(i.max), int(i.max) + 1]
    return st.one_of(st.integers(-3, 3), st.sampled_from(bounds + [2**100, -(2**100)]))


scalars = st.one_of(
    int_near_bounds(), st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.5, -1.5, 1e300, -1e300, 65504.0, 65520.0, 3.4e38, 1e39, 2.0**63, 2.0**64]),
    st.complex_numbers(max_magnitude=1e6),
    int_near_bounds().map(lambda v: np.int64(v) if -(2**63) <= v <= INT64_MAX else v),
)
values = st.one_of(
    scalars,
    st.lists(scalars, max_size=4),
    st.lists(st.lists(int_near_bounds(), min_size=2, max_size=2), max_size=3),
    st.sampled_from([[], [[]], [[1], [2, 3]], [[1, 2], 3], ()]),
)
value_cases = st.tuples(values, st.one_of(st.none(), st.sampled_from(DTYPES)))


# ---- q.zeros / q.ones / q.full ----

def check_sizes(case):
    fn, sizes, dtype = case
    line = "corpus line: " + corpus_line(fn, sizes, dtype)
    itemsize = np.dtype(dtype).itemsize
    nonzero = 1
    for n in sizes:
        nonzero *= n if n else 1
    valid = all(n >= 0 for n in sizes) and nonzero * itemsize <= INT64_MAX and len(sizes) <= 32
    total = itemsize * math.prod(sizes) if valid else 0
    if valid and total > MAX_BYTES:
        return  # well-formed but too big to allocate here
    make_np = {"zeros": lambda: np.zeros(sizes, dtype), "ones": lambda: np.ones(sizes, dtype),
               "full": lambda: np.full(sizes, 7, dtype)}[fn]
    make_q = {"zeros": lambda: q.zeros(*sizes, dtype=dtype),
              "ones": lambda: q.ones(*sizes, dtype=dtype),
              "full": lambda: q.full(tuple(sizes), 7, dtype=dtype)}[fn]
    exp, np_err = outcome(make_np) if valid or len(sizes) <= 32 else (None, ValueError("rank"))
    got, q_err = outcome(make_q)
    errors_agree(np_err, q_err, f"q.{fn}", line)
    if np_err is None:
        arr = np.asarray(got)
        assert arr.shape == exp.shape and arr.dtype == exp.dtype and np.array_equal(arr, exp), \
            f"q.{fn}: {arr.shape} {arr.dtype} differs from NumPy's; {line}"


size = st.one_of(st.integers(0, 4), st.sampled_from([-1, 2**31, 2**32, 2**62, 2**63 - 1, 2**63]))
size_cases = st.tuples(st.sampled_from(["zeros", "ones", "full"]),
                       st.lists(size, max_size=5),
                       st.sampled_from(["float32", "float64", "int8", "complex128", "bool"]))


# ---- q.typename ----

TOKENS = ["vec", "mat", "cube", "cvec", "cmat", "ccube", "ivec", "imat", "icube", "vec2", "vec3",
          "vec4", "cvec4", "ivec2", "scalar", "cscalar", "int", "int8", "uint64", "float16",
          "bfloat16", "complex128", "bool", "string", "??", "?", "{", "}", "[", "]", ":", "'",
          "clamped", "circular", "mirror", "checked", "unchecked", " ", "\t", "0", "1", "2", "32",
          "33", "99999999999999999999", "-1", ",", "\x00", "é", "\n", "cube{:}", "vec[", "]]"]
names = st.one_of(st.lists(st.sampled_from(TOKENS), max_size=12).map("".join),
                  st.text(max_size=20))


def check_typename(case):
    (name,) = case
    line = "corpus line: " + corpus_line(name)
    t, err = outcome(lambda: q.typename(name))
    if err is not None:
        assert isinstance(err, ValueError), f"q.typename raised {type(err).__name__}: {err}; {line}"
        assert "\n" not in str(err), f"q.typename message has a newline: {err!r}; {line}"
        return
    canon = str(t)
    back, err = outcome(lambda: q.typename(canon))
    assert err is None and str(back) == canon, f"canonical name {canon!r} does not round-trip; {line}"
    v, err = outcome(lambda: t())
    assert err is None, f"{canon}() raised {type(err).__name__}: {err}; {line}"
    assert t.matches(v) and q.type(v, canon), f"{canon} does not match {canon}(); {line}"


def test_corpus_value():
    replay("value", 2, check_value)


def test_corpus_sizes():
    replay("sizes", 3, check_sizes)


def test_corpus_typename():
    replay("typename", 1, check_typename)


# The three share the file's budget.
def test_fuzz_value():
    run_for(value_cases, check_value, SECONDS / 3)


def test_fuzz_sizes():
    run_for(size_cases, check_sizes, SECONDS / 3)


def test_fuzz_typename():
    run_for(names.map(lambda s: (s,)), check_typename, SECONDS / 3)
