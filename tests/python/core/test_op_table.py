# Every row of the op table against NumPy, and the files generated from the table are current.
import importlib.util
import math
import pathlib
import zlib

import numpy as np
import pytest

import isthmus as q

ROOT = pathlib.Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("gen_ops", ROOT / "scripts" / "gen_ops.py")
gen_ops = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen_ops)

ROWS = q._op_table()
UNARY = [r for r in ROWS if r["arity"] == 1]
BINARY = [r for r in ROWS if r["arity"] == 2]


# ---- the table, its parser and what is generated from it ----


def test_generated_stubs_and_docs_are_current():
    stale = [str(p.relative_to(ROOT)) for p in gen_ops.stale()]
    assert not stale, (
        f"{stale} differ from what the op table generates; regenerate with "
        f"`{gen_ops.COMMAND}` and commit the result"
    )


def test_the_generator_reads_the_table_the_module_was_built_from():
    assert gen_ops.parse() == ROWS


def test_every_python_name_is_bound_with_the_rows_doc():
    for r in ROWS:
        for i, name in enumerate(r["python"]):
            fn = getattr(q, name)
            assert r["doc"].rstrip(".") in fn.__doc__, name
            if i > 0:
                assert f"(alias of {r['python'][0]})" in fn.__doc__


def test_names_are_unique():
    names = [n for r in ROWS for n in r["python"]]
    assert len(names) == len(set(names))
    assert len({r["name"] for r in UNARY}) == len(UNARY)
    assert len({r["name"] for r in BINARY}) == len(BINARY)


# ---- every row against NumPy ----

# Ops NumPy lacks or defines differently (documented in the table's doc column); everything
# else is compared with NumPy's function of the row's first Python name NumPy has.
def _reciprocal(x):
    x = np.asarray(x)
    return np.reciprocal(x if x.dtype.kind in "fc" else x.astype(np.float64))


def _real_math(f):
    """NumPy's math-ufunc rules for a function NumPy lacks (erf): bool and integers compute in
    result_type(x, float16), floats in their own type; the values are math's, in float64."""
    def ref(x):
        x = np.asarray(x)
        if x.dtype.kind == "c":
            raise TypeError(f"{f.__name__} is not defined for complex numbers")
        out = np.asarray(np.frompyfunc(f, 1, 1)(x.astype(np.float64)), dtype=np.float64)
        return np.asarray(out, dtype=np.result_type(x, np.float16))
    return ref


REFERENCES = {
    "rsqrt": lambda x: np.asarray(1, dtype=np.result_type(x, np.float16)) / np.sqrt(x),
    "reciprocal": _reciprocal,  # integers give float64 here, not an integer reciprocal
    "erf": _real_math(math.erf),
    "erfc": _real_math(math.erfc),
}
# Rules under which a bool input comes back unchanged (the table's rule docs say so), where
# NumPy differs for some ops: sign(bool) has no loop, square(bool) and conj(bool) give int8,
# round(bool) float16; floor, ceil and abs of bool keep bool in NumPy as here.
BOOL_IDENTITY_RULES = {"same", "magnitude", "keep_int", "keep_int_real", "complex_only"}


def reference(row):
    if row["name"] in REFERENCES:
        return REFERENCES[row["name"]]
    for n in row["python"]:
        if hasattr(np, n):
            return getattr(np, n)
    pytest.fail(
        f"op {row['name']}: NumPy has none of {row['python']}; add its reference to "
        "REFERENCES in tests/python/core/test_op_table.py"
    )


def _approx(row, dtype=None):
    """Whether results may differ from NumPy's by rounding (SLEEF/libm functions; complex
    arithmetic, whose formulas differ from NumPy's in the last bit: |z| by hypot, z*z with
    one rounding fewer, 1/z by Smith's division)."""
    if dtype is not None and np.dtype(dtype).kind == "c" and row["name"] in ANNEX_G:
        return True
    return row["rule"] in ("math", "math_real") or row["name"] in ("pow", "rsqrt")


# Complex ops whose special values follow C99 Annex G (as glibc's complex functions, which the
# rest of isthmus's complex math is), where NumPy's differ: 1 / (0 + 0j) is inf + nan j here
# (NumPy nan + nan j), 1 / (inf + 1j) is 0, and (inf + nan j)**2 is inf + nan j. Compared with
# NumPy on finite nonzero values; docs/ops.md lists the difference.
ANNEX_G = {"reciprocal", "rsqrt", "square", "abs"}


def _tolerance(row, dt, operand=None):
    if not _approx(row, operand):
        return 0.0, 0.0
    dt = np.dtype(dt)
    if dt.kind == "c":  # each part to its real type's precision
        dt = np.dtype(dt.char.lower())
    if dt == np.float16:
        return 2e-3, 2e-3
    if dt == np.float32:
        return 4e-6, 1e-6
    return 1e-13, 1e-14


SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5]


def sample(shape, dtype, rng, role=0):
    """Random values of `dtype`; floats include NaN, infinities and signed zeros."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    if dtype == np.bool_:
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    if dtype.kind in "iu":
        lo = 0 if dtype.kind == "u" or role == 1 else -40
        return rng.integers(lo, 40, n).astype(dtype).reshape(shape)
    v = rng.standard_normal(n) * 3
    if n:
        k = min(n, len(SPECIALS))
        v[rng.choice(n, k, replace=False)] = SPECIALS[:k] if role == 0 else SPECIALS[::-1][:k]
    if dtype.kind == "c":  # both parts random, the specials in either part
        w = rng.standard_normal(n) * 3
        if n:
            k = min(n, len(SPECIALS))
            w[rng.choice(n, k, replace=False)] = SPECIALS[:k]
        c = np.empty(n, dtype=np.complex128)  # not v + 1j * w: 1j * inf has a NaN real part
        c.real, c.imag = v, w
        v = c
    return v.astype(dtype).reshape(shape)


def layouts(arity, dtype, rng):
    """(label, operands) pairs: contiguous, strided, transposed, broadcast, empty and 0-d."""
    out = []
    if arity == 1:
        out.append(("contiguous", [sample((5, 7), dtype, rng)]))
        out.append(("strided", [sample((10, 14), dtype, rng)[::2, 1::3]]))
        out.append(("transposed", [sample((7, 5), dtype, rng).T]))
        out.append(("broadcast view", [np.broadcast_to(sample((1, 7), dtype, rng), (4, 7))]))
        out.append(("empty", [sample((0, 3), dtype, rng)]))
        out.append(("0-d", [sample((), dtype, rng)]))
    else:
        a, b = dtype
        out.append(("contiguous", [sample((5, 7), a, rng), sample((5, 7), b, rng, 1)]))
        out.append(("strided", [sample((10, 14), a, rng)[::2, ::2], sample((5, 7), b, rng, 1)]))
        out.append(("transposed", [sample((7, 5), a, rng).T, sample((7, 5), b, rng, 1).T]))
        out.append(("broadcast", [sample((3, 1, 6), a, rng), sample((4, 1), b, rng, 1)]))
        out.append(("empty", [sample((0, 3), a, rng), sample((3,), b, rng, 1)]))
        out.append(("0-d", [sample((), a, rng), sample((), b, rng, 1)]))
        out.append(("0-d with array", [sample((), a, rng), sample((2, 3), b, rng, 1)]))
    return out


def check_row(row, dtype, seed):
    rng = np.random.default_rng(seed)
    ref = reference(row)
    ours = getattr(q, row["python"][0])
    for label, args in layouts(row["arity"], dtype, rng):
        if row["name"] in ANNEX_G and np.dtype(args[0].dtype).kind == "c":
            args = [np.where(np.isfinite(a) & (a != 0), a, 1.5 - 0.5j).astype(a.dtype)
                    for a in args]
        what = f"{row['name']} on {dtype} ({label})"
        with np.errstate(all="ignore"):
            try:
                if row["rule"] in BOOL_IDENTITY_RULES and args[0].dtype == np.bool_:
                    want = np.array(args[0], copy=True)
                else:
                    want = np.asarray(ref(*args))
            except (TypeError, ValueError) as e:
                # NumPy refuses (bool subtract, negative integer powers, ...): so must we.
                with pytest.raises(type(e)):
                    ours(*args)
                continue
        got = np.asarray(ours(*args))
        assert got.shape == want.shape, what
        assert got.dtype == want.dtype, f"{what}: {got.dtype} != NumPy's {want.dtype}"
        rtol, atol = _tolerance(row, got.dtype, args[0].dtype)
        if rtol == 0:
            np.testing.assert_array_equal(got, want, err_msg=what)
        else:  # complex: part by part (NumPy's check needs infinite values to be equal)
            for part, g, w in (("", got, want),) if got.dtype.kind != "c" else (
                    (" (real part)", got.real, want.real), (" (imaginary part)", got.imag, want.imag)):
                np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True,
                                           err_msg=what + part)


def _seed(*parts):
    """A fixed seed per test (str hashes change between runs)."""
    return zlib.crc32(" ".join(str(np.dtype(p)) if not isinstance(p, str) else p
                               for p in parts).encode())


UNARY_DTYPES = [np.float32, np.float64, np.int32, np.int8, np.uint8, np.bool_, np.complex64, np.complex128]
BINARY_DTYPES = [
    (np.float32, np.float32),
    (np.float64, np.float64),
    (np.int32, np.int32),
    (np.int16, np.uint8),
    (np.bool_, np.bool_),
    (np.int32, np.float32),
]


@pytest.mark.parametrize("dtype", UNARY_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("row", UNARY, ids=lambda r: r["name"])
def test_unary_row_matches_numpy(row, dtype):
    check_row(row, dtype, seed=_seed(row["name"], dtype))


@pytest.mark.parametrize(
    "dtypes", BINARY_DTYPES, ids=lambda d: f"{np.dtype(d[0]).name}-{np.dtype(d[1]).name}"
)
@pytest.mark.parametrize("row", BINARY, ids=lambda r: r["name"])
def test_binary_row_matches_numpy(row, dtypes):
    check_row(row, dtypes, seed=_seed(row["name"], *dtypes))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("row", [r for r in UNARY if r["rule"] == "math_real"],
                         ids=lambda r: r["name"])
def test_real_only_math_refuses_complex_like_numpy(row, dtype):
    x = np.array([1 + 2j, -0.5j], dtype=dtype)
    if hasattr(np, row["name"]):
        with pytest.raises(TypeError):
            getattr(np, row["name"])(x)
    v = q.value(x)
    with pytest.raises(TypeError, match=f"{row['name']}: not supported for dtype complex.*real numbers only"):
        getattr(q, row["python"][0])(v)
    np.testing.assert_array_equal(np.asarray(v), x)  # the operand is unchanged
