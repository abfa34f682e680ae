# sort/argsort (q.sort, np.sort on qvalues, the array API) and unique_* against NumPy.
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import isthmus as q
import isthmus.array_api as xp
from cuda_helpers import cuda_session, needs_gpu, on_gpu

rng = np.random.default_rng(20261127)
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]


@pytest.fixture(autouse=True)
def cpu():
    q.init("cpu")


def awkward(dtype, shape):
    """Ties, NaN, +-0 and +-inf, as far as the dtype holds them."""
    dt = np.dtype(dtype)
    pool = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 1, -1, 2.5, 2.5, 7, -3])
    x = rng.choice(pool, size=shape)
    if dt.kind == "c":
        re, x = x, np.empty(shape, dt)
        x.real, x.imag = re, rng.choice(pool, size=shape)
    if dt.kind in "biu":
        x = np.where(np.isfinite(x), np.trunc(x), 3)
        if dt.kind in "bu":
            x = np.abs(x)
    return x.astype(dt)


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "c":
        return same_bits(a.real, b.real) and same_bits(a.imag, b.imag)
    if a.dtype.kind == "f":
        a, b = a.view(f"u{a.itemsize}"), b.view(f"u{b.itemsize}")
    return a.shape == b.shape and (a == b).all()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_matches_numpy_stable_sort(dtype, axis):
    x = awkward(dtype, (5, 12))
    A = q.value(x)
    ref_idx = np.argsort(x, axis=axis, kind="stable")
    np.testing.assert_array_equal(q.argsort(A, axis).to_py(), ref_idx)
    got = q.sort(A, axis).to_py()
    assert got.dtype == x.dtype
    # NumPy's stable sort keeps -0.0/+0.0 and NaN payloads where they were: the same bits
    assert same_bits(got, np.take_along_axis(x, ref_idx, axis=axis))
    assert same_bits(got, np.sort(x, axis=axis, kind="stable"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_long_rows_take_the_radix_sort(dtype):
    # rows of 64 elements and more sort by radix (Note [radix sort]), shorter ones by comparison
    x = awkward(dtype, (3, 500))
    for descending in (False, True):
        f = np.flip(x, 1)
        ref = (np.flip(499 - np.argsort(f, axis=1, kind="stable"), 1) if descending
               else np.argsort(x, axis=1, kind="stable"))
        np.testing.assert_array_equal(q.argsort(x, descending=descending).to_py(), ref)
        assert same_bits(q.sort(x, descending=descending).to_py(),
                         np.take_along_axis(x, ref, axis=1))


@pytest.mark.parametrize("dtype", [d for d in DTYPES if np.dtype(d).kind != "c"])
@pytest.mark.parametrize("n", [300, 5000])
def test_values_only_sorts_keys_alone_and_keeps_bits(dtype, n):
    # See Note [values-only radix]: long rows without NaN or -0.0 sort their keys alone and decode
    # the values (in 11-bit digits from 4096 elements: Note [radix digits]); a row with one NaN
    # or one -0.0 (here at its end) keeps its positions. Either way the bits are those of
    # NumPy's stable sort.
    dt = np.dtype(dtype)
    x = awkward(dtype, (4, n))
    if dt.kind == "f":
        x = np.where(np.isnan(x) | ((x == 0) & np.signbit(x)), np.asarray(0.5, dt), x)
        x[2, -1] = np.nan
        x[3, -1] = -0.0
        x[1, :100] = rng.standard_normal(100).astype(dt)  # many distinct keys
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        x[1] = rng.integers(info.min, info.max, size=n, endpoint=True, dtype=dt)
    for descending in (False, True):
        f = np.flip(x, 1)
        ref = (np.flip(n - 1 - np.argsort(f, axis=1, kind="stable"), 1) if descending
               else np.argsort(x, axis=1, kind="stable"))
        assert same_bits(q.sort(x, descending=descending).to_py(),
                         np.take_along_axis(x, ref, axis=1))


ONE_ROW_SNIPPET = """
    import json
    import numpy as np
    import isthmus as q
    q.init("cpu")
    rng = np.random.default_rng(11)
    failures = []
    for dtype in %r:
        dt = np.dtype(dtype)
        for rows, n in ((1, 70001), (2, 65536)):
            if dt.kind == "f":
                x = (rng.standard_normal((rows, n)) * 1000).astype(dt)
                x[:, n // 2:] = x[:, : n - n // 2]  # every value twice: ties
            elif dt.kind == "b":
                x = rng.integers(0, 2, (rows, n)).astype(dt)
            else:
                info = np.iinfo(dt)
                x = rng.integers(info.min, info.max, (rows, n), endpoint=True, dtype=dt)
            variants = [x]
            if dt.kind == "f":  # a NaN and a -0.0: the positions path
                y = x.copy()
                y[0, 3], y[0, 9], y[-1, -1] = np.nan, -0.0, 0.0
                variants.append(y)
            for v in variants:
                for descending in (False, True):
                    ref = (np.flip(n - 1 - np.argsort(np.flip(v, 1), axis=1, kind="stable"), 1)
                           if descending else np.argsort(v, axis=1, kind="stable"))
                    got = np.asarray(q.sort(v, descending=descending).to_py())
                    idx = np.asarray(q.argsort(v, descending=descending).to_py())
                    if got.tobytes() != np.take_along_axis(v, ref, axis=1).tobytes():
                        failures.append(f"sort {dtype} {rows}x{n} {descending}")
                    if not np.array_equal(idx, ref):
                        failures.append(f"argsort {dtype} {rows}x{n} {descending}")
    print(json.dumps(failures))
"""


@pytest.mark.parametrize("threads", ["2", "3"])
def test_one_long_row_sorts_on_every_thread(run_python, monkeypatch, threads):
    # See Note [one row on every thread]: fewer rows than threads, each of 65536 elements or more:
    # the row's passes run on all threads (chunks of uneven length with 3), with the same bits
    # and positions as NumPy's stable sort on either path (Note [values-only radix])
    monkeypatch.setenv("OMP_NUM_THREADS", threads)
    dtypes = ["bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
              "float16", "float32", "float64"]
    res = run_python(ONE_ROW_SNIPPET % (dtypes,))
    assert json.loads(res.stdout.strip().splitlines()[-1]) == []


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64", "complex128"])
def test_descending_is_the_reverse_order_with_ties_in_place(dtype):
    x = awkward(dtype, (40,))
    # the array API's descending: np.flip of an ascending stable sort of np.flip(x)
    n = x.shape[0]
    ref = np.flip(n - 1 - np.argsort(np.flip(x), kind="stable"))
    np.testing.assert_array_equal(q.argsort(x, descending=True).to_py(), ref)
    assert same_bits(q.sort(x, descending=True).to_py(), x[ref])


def test_layouts_sizes_and_axis_none():
    base = rng.standard_normal((30, 50)).astype(np.float32)
    for v in (base[::3, 1::2], base.T, base[:, ::-1], np.broadcast_to(base[:1], (4, 50))):
        np.testing.assert_array_equal(q.argsort(v, 0).to_py(), np.argsort(v, 0, kind="stable"))
        np.testing.assert_array_equal(q.sort(v, 1).to_py(), np.sort(v, 1))
    big = rng.integers(0, 50, 200_001)  # long rows with many ties: the threads' pieces
    np.testing.assert_array_equal(q.argsort(big).to_py(), np.argsort(big, kind="stable"))
    many = rng.standard_normal((5000, 7))
    np.testing.assert_array_equal(q.sort(many, 1).to_py(), np.sort(many, 1))
    np.testing.assert_array_equal(q.sort(base, None).to_py(), np.sort(base, None))
    np.testing.assert_array_equal(q.argsort(base, None).to_py(),
                                  np.argsort(base, None, kind="stable"))


def test_empty_and_0d():
    for shape, axis in (((0,), 0), ((0, 3), 0), ((0, 3), 1), ((2, 0), 1)):
        e = np.zeros(shape, np.float32)
        assert q.sort(e, axis).shape == shape
        r = q.argsort(e, axis)
        assert r.shape == shape and r.dtype == np.int64
    assert q.sort(q.full((), 4.5)).to_py() == 4.5
    assert q.argsort(q.full((), 4.5)).to_py() == 0


def test_errors_are_typed_and_leave_the_input():
    x = np.array([[2.0, 1.0, 3.0]])
    A = q.value(x)
    with pytest.raises(IndexError, match="axis 2"):
        q.sort(A, 2)
    with pytest.raises(IndexError, match="axis -3"):
        q.argsort(A, -3)
    with pytest.raises(TypeError, match="axis"):
        q.sort(A, 1.5)
    with pytest.raises(TypeError, match="stable"):
        q.sort(A, stable="yes")
    np.testing.assert_array_equal(A.to_py(), x)


def test_numpy_functions_dispatch_to_isthmus():
    x = awkward("float64", (4, 6))
    A = q.value(x)
    r = np.sort(A, axis=0)
    assert isinstance(r, q.qvalue)
    assert same_bits(r.to_py(), np.sort(x, axis=0))
    r = np.argsort(A, kind="quicksort")  # every isthmus sort is stable: a valid quicksort order
    assert isinstance(r, q.qvalue)
    np.testing.assert_array_equal(r.to_py(), np.argsort(x, kind="stable"))
    np.testing.assert_array_equal(np.argsort(q.value(3.0)).to_py(), [0])  # NumPy: [0]
    with pytest.raises(np.exceptions.AxisError):
        np.sort(q.value(3.0))
    with pytest.raises(TypeError, match="order"):
        np.sort(A, order="x")
    with pytest.raises(ValueError, match="kind"):
        np.sort(A, kind="bogo")


def test_array_api_sort_and_unique():
    x = awkward("float64", (3, 5))
    X = xp.asarray(x)
    np.testing.assert_array_equal(np.asarray(xp.argsort(X, axis=0)),
                                  np.argsort(x, axis=0, kind="stable"))
    assert same_bits(np.asarray(xp.sort(X, axis=1)), np.sort(x, axis=1))
    vals, idx, inv, cnt = np.unique(x.ravel(), return_index=True, return_inverse=True,
                                    return_counts=True, equal_nan=False)
    r = xp.unique_all(X)
    assert same_bits(np.asarray(r.values), vals)  # every NaN its own value; -0.0 first
    np.testing.assert_array_equal(np.asarray(r.indices), idx)
    np.testing.assert_array_equal(np.asarray(r.inverse_indices), inv.reshape(x.shape))
    np.testing.assert_array_equal(np.asarray(r.counts), cnt)
    np.testing.assert_array_equal(np.asarray(xp.unique_counts(X).counts), cnt)
    np.testing.assert_array_equal(np.asarray(xp.unique_inverse(X).inverse_indices),
                                  inv.reshape(x.shape))
    assert same_bits(np.asarray(xp.unique_values(X)), vals)
    e = xp.unique_all(xp.asarray(np.zeros((0, 2), np.int16)))
    assert e.values.shape == (0,) and e.inverse_indices.shape == (0, 2)
    assert e.counts.dtype == np.int64


@settings(max_examples=50, deadline=None)
@given(x=hnp.arrays(st.sampled_from([np.int8, np.uint16, np.float32, np.float64]),
                    hnp.array_shapes(min_dims=1, max_dims=3, max_side=6)),
       descending=st.booleans(), data=st.data())
def test_hypothesis_against_numpy(x, descending, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    if descending:
        f = np.flip(x, axis)
        n = x.shape[axis]
        ref = np.flip(n - 1 - np.argsort(f, axis=axis, kind="stable"), axis)
    else:
        ref = np.argsort(x, axis=axis, kind="stable")
    np.testing.assert_array_equal(q.argsort(x, axis, descending=descending).to_py(), ref)
    assert same_bits(q.sort(x, axis, descending=descending).to_py(),
                     np.take_along_axis(x, ref, axis=axis))


# ---- searchsorted ----


@pytest.mark.parametrize("dtype", ["int8", "uint32", "int64", "float16", "float32", "float64",
                                   "complex128"])
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_matches_numpy(dtype, side):
    a = np.sort(awkward(dtype, (200,)), kind="stable")  # ties, NaNs last
    v = awkward(dtype, (7, 9))
    np.testing.assert_array_equal(q.searchsorted(a, v, side).to_py(),
                                  np.searchsorted(a, v, side))
    np.testing.assert_array_equal(q.searchsorted(a, v[::2, ::-3], side=side).to_py(),
                                  np.searchsorted(a, v[::2, ::-3], side=side))


def test_searchsorted_scalars_sorter_promotion_and_empty():
    a = np.array([3.0, 1.0, 2.0, np.nan, 1.0])
    order = np.argsort(a, kind="stable")
    np.testing.assert_array_equal(q.searchsorted(a, [1.0, 2.5, np.nan], sorter=order).to_py(),
                                  np.searchsorted(a, [1.0, 2.5, np.nan], sorter=order))
    r = q.searchsorted(np.arange(10), 4.5)  # a number in, a number out
    assert r == np.searchsorted(np.arange(10), 4.5) and np.ndim(r) == 0
    ints = np.arange(0, 100, 3, dtype=np.int16)
    np.testing.assert_array_equal(q.searchsorted(ints, np.array([4.5, -1.0])).to_py(),
                                  np.searchsorted(ints, np.array([4.5, -1.0])))
    assert q.searchsorted(np.zeros(0), np.ones((2, 3))).to_py().tolist() == [[0] * 3] * 2
    e = q.searchsorted(np.arange(5.0), np.zeros((0, 2)))
    assert e.shape == (0, 2) and e.dtype == np.int64
    A = q.value(np.arange(6.0))
    r = np.searchsorted(A, q.value(np.array([2.0, 2.5])), side="right")
    assert isinstance(r, q.qvalue)
    np.testing.assert_array_equal(r.to_py(), [3, 3])


def test_searchsorted_errors():
    with pytest.raises(ValueError, match="one-dimensional"):
        q.searchsorted(np.ones((2, 2)), 1.0)
    with pytest.raises(ValueError, match="'left' or 'right'"):
        q.searchsorted(np.ones(2), 1.0, "middle")
    with pytest.raises(TypeError, match="side"):
        q.searchsorted(np.ones(2), 1.0, 1)
    with pytest.raises(TypeError, match="v must be"):
        q.searchsorted(np.ones(2), "x")
    with pytest.raises(IndexError):
        q.searchsorted(np.ones(2), 1.0, sorter=np.array([0, 5]))


def test_array_api_searchsorted_large_inputs():
    # once a stopgap through NumPy above 2**22 comparisons: isthmus's binary search now
    a = np.sort(rng.standard_normal(5000))
    v = rng.standard_normal(3000)
    np.testing.assert_array_equal(np.asarray(xp.searchsorted(xp.asarray(a), xp.asarray(v))),
                                  np.searchsorted(a, v))
    np.testing.assert_array_equal(
        np.asarray(xp.searchsorted(xp.asarray(a), xp.asarray(v), side="right")),
        np.searchsorted(a, v, side="right"))


# ---- np.unique on qvalues ----


@pytest.mark.parametrize("dtype", ["int16", "uint8", "float32", "float64", "complex128"])
@pytest.mark.parametrize("equal_nan", [True, False])
def test_np_unique_matches_numpy(dtype, equal_nan):
    x = awkward(dtype, (6, 7))
    got = np.unique(q.value(x), return_index=True, return_inverse=True, return_counts=True,
                    equal_nan=equal_nan)
    want = np.unique(x, return_index=True, return_inverse=True, return_counts=True,
                     equal_nan=equal_nan)
    assert all(isinstance(g, q.qvalue) for g in got)
    assert same_bits(got[0].to_py(), want[0])
    for g, w in zip(got[1:], want[1:]):
        np.testing.assert_array_equal(g.to_py(), w)
    # values only: NumPy then sorts with its unstable quicksort, which may keep -0.0 or 0.0 (or
    # another NaN-holding complex) as the representative; isthmus's sort is stable, as NumPy's
    # is with return_index
    assert same_bits(np.unique(q.value(x), equal_nan=equal_nan).to_py(), want[0])


def test_np_unique_empty_and_refusals():
    e = np.zeros((0, 3), np.int32)
    v, inv = np.unique(q.value(e), return_inverse=True)
    assert v.shape == (0,) and inv.shape == (0, 3) and inv.dtype == np.int64
    with pytest.raises(TypeError, match="axis"):
        np.unique(q.value(np.ones((2, 2))), axis=0)


# ---- on a GPU: the CUDA sort and searchsorted (Note [gpu sort]) ----


@pytest.fixture
def gpu():
    with cuda_session():
        yield


@needs_gpu
@pytest.mark.parametrize("dtype", [d for d in DTYPES if not d.startswith("complex")] + ["bfloat16"])
@pytest.mark.parametrize("shape", [(1, 70000), (3, 500), (5000, 7), (4, 1), (2, 3, 40)])
def test_gpu_sort_matches_numpy_and_stays_on_the_device(gpu, dtype, shape):
    npdt = "float32" if dtype == "bfloat16" else dtype
    x = awkward(npdt, shape)
    A = on_gpu(x).astype(dtype) if dtype == "bfloat16" else on_gpu(x)
    ref_x = np.asarray(A.astype("float32")) if dtype == "bfloat16" else x
    n = shape[-1]
    for descending in (False, True):
        f = np.flip(ref_x, -1)
        ref = (np.flip(n - 1 - np.argsort(f, axis=-1, kind="stable"), -1) if descending
               else np.argsort(ref_x, axis=-1, kind="stable"))
        idx = q.argsort(A, descending=descending)
        assert idx.device.startswith("cuda")  # computed there, not on the CPU
        np.testing.assert_array_equal(idx.to_py(), ref)
        S = q.sort(A, descending=descending)
        assert S.device.startswith("cuda")
        got = np.asarray(S.astype("float32")) if dtype == "bfloat16" else S.to_py()
        assert same_bits(got, np.take_along_axis(ref_x, ref, axis=-1))


@needs_gpu
@pytest.mark.parametrize("dtype", ["int8", "uint32", "int64", "float16", "float32", "float64"])
@pytest.mark.parametrize("side", ["left", "right"])
def test_gpu_searchsorted_matches_numpy(gpu, dtype, side):
    a = np.sort(awkward(dtype, (200,)), kind="stable")
    v = awkward(dtype, (7, 9))
    got = q.searchsorted(on_gpu(a), on_gpu(v), side)
    assert got.device.startswith("cuda")
    np.testing.assert_array_equal(got.to_py(), np.searchsorted(a, v, side))


@needs_gpu
def test_gpu_complex_sort_falls_back_to_the_cpu(gpu):
    x = awkward("complex64", (3, 100))
    np.testing.assert_array_equal(q.argsort(on_gpu(x)).to_py(), np.argsort(x, kind="stable"))
