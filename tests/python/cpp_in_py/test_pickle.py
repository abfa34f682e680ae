"""pickle, copy.copy and copy.deepcopy of qvalues (isthmus/pickling.py) against NumPy."""
import copy
import ctypes
import math
import pickle
import sys
import threading

import numpy as np
import pytest

import isthmus as q
from isthmus import pickling

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
SHAPES = [(), (0,), (3, 0, 2), (7,), (4, 5), (2, 3, 4), (1,) * 32, (2, 1, 3, 1, 2, 1, 1, 2)]
PROTOCOLS = [2, 3, 4, 5]
rng = np.random.default_rng(16)


def random_array(dtype, shape):
    """Random elements of a NumPy dtype (float32 for bfloat16), with NaN, inf and -0 for floats."""
    npdt = np.dtype("float32" if dtype == "bfloat16" else dtype)
    n = math.prod(shape)
    if npdt.kind == "b":
        a = rng.integers(0, 2, n).astype(bool)
    elif npdt.kind in "iu":
        info = np.iinfo(npdt)
        a = rng.integers(info.min, info.max, n, dtype=npdt, endpoint=True)
    else:
        a = (rng.standard_normal(n) * 100).astype(npdt)
        if npdt.kind == "c":
            a = a + 1j * rng.standard_normal(n).astype(npdt)
        special = np.array([np.nan, np.inf, -np.inf, -0.0], dtype=npdt)
        a[: min(n, 4)] = special[: min(n, 4)]
    return a.reshape(shape)


def make(dtype, shape):
    return q.value(random_array(dtype, shape), dtype=dtype)


def bits(v):
    """The bytes of a tensor's elements in C order (any dtype, bfloat16 included)."""
    c = v.contiguous()
    if c.nbytes == 0:
        return b""
    p = c.lock(q.LOCK_READ, q.MEMRESOURCE_CPU)
    try:
        return ctypes.string_at(p, c.nbytes)
    finally:
        c.unlock(q.LOCK_READ, q.MEMRESOURCE_CPU)


def as_numpy(v):
    return np.asarray(v.astype("float32") if v.dtype == "bfloat16" else v)


def assert_same_tensor(b, a):
    assert isinstance(b, q.qvalue) and b.kind == "tensor"
    assert b.shape == a.shape and str(b.dtype) == str(a.dtype) and b.device == a.device
    assert bits(b) == bits(a)  # exact: NaN payloads and -0.0 included
    np.testing.assert_array_equal(as_numpy(b), as_numpy(a))


def dumps_loads(v, protocol, out_of_band):
    if out_of_band:
        bufs = []
        data = pickle.dumps(v, protocol=protocol, buffer_callback=bufs.append)
        return pickle.loads(data, buffers=bufs)
    return pickle.loads(pickle.dumps(v, protocol=protocol))


# ---- tensors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_tensors_of_every_dtype_and_shape_round_trip(dtype):
    for shape in SHAPES:
        a = make(dtype, shape)
        before = bits(a)
        for protocol in PROTOCOLS:
            for oob in ([False, True] if protocol == 5 else [False]):
                b = dumps_loads(a, protocol, oob)
                assert_same_tensor(b, a)
        assert bits(a) == before  # pickling leaves the value unchanged


def test_protocols_0_and_1_work_too():
    a = make("float64", (3, 4))
    for protocol in (0, 1):
        assert_same_tensor(pickle.loads(pickle.dumps(a, protocol=protocol)), a)


def test_huge_dimensions_with_no_elements():
    for shape in [(0, 2**40), (2**31, 0, 3), (0,) * 32]:
        a = q.zeros(shape, dtype="float32")
        for protocol in (4, 5):
            b = pickle.loads(pickle.dumps(a, protocol=protocol))
            assert b.shape == shape and b.dtype == np.float32 and b.numel() == 0


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "complex128", "int16", "bool"])
def test_views_round_trip_as_numpy_does(dtype):
    base = make(dtype, (6, 8, 5))
    views = {
        "strided": base[::2, 1::3],
        "transposed": base.T,
        "permuted": base.permute(1, 0, 2),
        "flipped": base.flip(1),
        "row": base[3],
        "element": base[1, 2, 3:4],
        "broadcast": base[0, :, :1].expand(8, 7),
        "reversed_2d": base[0].T,
    }
    for name, v in views.items():
        ref, ref_bits = as_numpy(v).copy(), bits(v)
        for protocol in PROTOCOLS:
            for oob in ([False, True] if protocol == 5 else [False]):
                b = dumps_loads(v, protocol, oob)
                assert b.shape == v.shape and str(b.dtype) == dtype, name
                assert bits(b) == bits(v), name
                np.testing.assert_array_equal(as_numpy(b), ref, err_msg=name)
                if not oob:  # (out of band in one process, b may share v's memory)
                    b[...] = 0  # an unpickled tensor is writable and independent of the view
                    assert bits(v) == ref_bits, name


def test_complex_real_and_imag_views():
    z = make("complex64", (5, 4))
    for v in (z.real, z.imag, z.real.T):
        b = pickle.loads(pickle.dumps(v))
        np.testing.assert_array_equal(np.asarray(b), np.asarray(v))
        assert b.dtype == np.float32


def test_a_small_view_of_a_big_tensor_pickles_small():
    big = q.zeros(1000, 1000, dtype="float64")  # 8 MB
    for v in (big[10:12, 5:8], big[3], big[::250, ::250], big[500:501].T):
        for protocol in (2, 4, 5):
            assert len(pickle.dumps(v, protocol=protocol)) < 8 * v.numel() + 400
        bufs = []
        pickle.dumps(v, protocol=5, buffer_callback=bufs.append)
        assert sum(memoryview(b).nbytes for b in bufs) == 8 * v.numel()


def test_protocol_5_out_of_band_shares_memory_both_ways():
    a = make("float32", (64, 33))
    bufs = []
    data = pickle.dumps(a, protocol=5, buffer_callback=bufs.append)
    assert len(bufs) == 1 and len(data) < 400
    raw = np.frombuffer(bufs[0], np.uint8)
    assert raw.ctypes.data == np.asarray(a).ctypes.data and raw.nbytes == a.nbytes  # no copy
    b = pickle.loads(data, buffers=bufs)
    assert_same_tensor(b, a)
    assert np.shares_memory(np.asarray(b), np.asarray(a))  # built over the buffer, no copy
    b[0, 0] = 42
    assert a[0, 0].item() == 42


def test_transposed_tensors_leave_without_a_copy():
    a = make("int32", (9, 4)).T  # F-contiguous
    bufs = []
    data = pickle.dumps(a, protocol=5, buffer_callback=bufs.append)
    assert np.frombuffer(bufs[0], np.uint8).ctypes.data == np.asarray(a).ctypes.data
    b = pickle.loads(data, buffers=bufs)
    assert_same_tensor(b, a)
    assert np.shares_memory(np.asarray(b), np.asarray(a))


def test_in_band_pickles_give_independent_memory():
    a = make("float64", (5, 6))
    for protocol in PROTOCOLS:
        b = pickle.loads(pickle.dumps(a, protocol=protocol))
        assert not np.shares_memory(np.asarray(b), np.asarray(a))
        b[...] = -1
        assert (np.asarray(a) != -1).any()


def test_read_only_out_of_band_buffers_are_copied():
    a = make("int64", (4, 4))
    bufs = []
    data = pickle.dumps(a, protocol=5, buffer_callback=bufs.append)
    ro = [bytes(memoryview(b)) for b in bufs]  # what a store of read-only buffers hands back
    b = pickle.loads(data, buffers=ro)
    assert_same_tensor(b, a)
    b[0, 0] = 7  # writable: its own memory
    assert np.asarray(b)[0, 0] == 7


def test_bfloat16_travels_as_raw_bits():
    a = make("bfloat16", (3, 5))
    bufs = []
    data = pickle.dumps(a, protocol=5, buffer_callback=bufs.append)
    assert len(bufs) == 1 and memoryview(bufs[0]).nbytes == 30
    assert_same_tensor(pickle.loads(data, buffers=bufs), a)


def test_wrapped_numpy_arrays_and_torch_views_pickle_their_values():
    x = rng.standard_normal((6, 7))
    a = q.asvalue(x[:, ::2])  # shares NumPy's strided memory
    b = pickle.loads(pickle.dumps(a, protocol=5))
    np.testing.assert_array_equal(np.asarray(b), x[:, ::2])
    assert not np.shares_memory(np.asarray(b), x)


# ---- scalars, strings, none -------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_scalars_keep_dtype_and_value(dtype):
    values = random_array(dtype, (6,)).tolist() if dtype != "bfloat16" else [
        1.5, -0.0, float("nan"), float("inf"), 3.0e38, -2.0**-133]
    for x in values:
        s = q.value(x, dtype=dtype)
        assert s.kind == "scalar"
        for protocol in (2, 5):
            t = pickle.loads(pickle.dumps(s, protocol=protocol))
            assert t.kind == "scalar" and str(t.dtype) == dtype
            number = float if dtype == "bfloat16" else (lambda v: v.item())  # (no NumPy bfloat16)
            a, b = number(s), number(t)
            assert type(a) is type(b)
            if isinstance(a, complex):
                np.testing.assert_array_equal(np.array([b]), np.array([a]))
            elif isinstance(a, float) and math.isnan(a):
                assert math.isnan(b)
            else:
                assert b == a and math.copysign(1, b.real if isinstance(b, complex) else float(b)) \
                    == math.copysign(1, a.real if isinstance(a, complex) else float(a))


def test_extreme_integer_scalars():
    for x, dt in [(2**64 - 1, "uint64"), (-(2**63), "int64"), (2**63 - 1, "int64"), (-128, "int8")]:
        s = pickle.loads(pickle.dumps(q.value(x, dtype=dt)))
        assert s.item() == x and s.dtype == np.dtype(dt)


def test_strings_and_none():
    for text in ["", "text", "héllo wörld ✓ \U0001f600", "a\x00b"]:
        s = pickle.loads(pickle.dumps(q.value(text)))
        assert s.kind == "string" and s.to_py() == text
    n = pickle.loads(pickle.dumps(q.value(None), protocol=2))
    assert n.kind == "none" and n.to_py() is None


# ---- cells --------------------------------------------------------------------------------------

def cell(*shape, items=()):
    c = q.typename(f"cube{{{len(shape)}}}[??]")(*shape)
    for i, v in enumerate(items):
        c[i] = v
    return c


def assert_same_value(b, a):
    assert b.kind == a.kind, (b.kind, a.kind)
    if a.kind == "tensor":
        assert_same_tensor(b, a)
    elif a.kind == "cell":
        assert b.shape == a.shape and len(b) == len(a)
        for x, y in zip(b, a):
            assert_same_value(x, y)
    elif a.kind == "scalar":
        assert str(b.dtype) == str(a.dtype) and b.item() == a.item()
    else:
        assert b.to_py() == a.to_py()


def test_cells_round_trip_recursively_with_their_shape():
    inner = cell(2, items=[q.value("in"), make("float16", (3,))])
    c = cell(2, 3, items=[make("float32", (2, 2)), q.value(1.5), q.value("s"), q.value(None),
                          inner, make("bfloat16", (4,))[::2]])
    for protocol in PROTOCOLS:
        for oob in ([False, True] if protocol == 5 else [False]):
            b = dumps_loads(c, protocol, oob)
            assert b.kind == "cell" and b.shape == (2, 3)
            assert_same_value(b, c)
    assert_same_value(pickle.loads(pickle.dumps(q.value(["a", q.zeros(3), 2.0]))),
                      q.value(["a", q.zeros(3), 2.0]))
    empty = cell(0)
    assert pickle.loads(pickle.dumps(empty)).shape == (0,)


def test_a_tensor_held_twice_in_a_cell_stays_shared():
    t = make("float64", (100,))
    c = cell(3, items=[t, cell(2, items=[t, q.value(1)]), t[::2]])
    bufs = []
    data = pickle.dumps(c, protocol=5, buffer_callback=bufs.append)
    assert len(bufs) == 2  # t once, the strided view once
    b = pickle.loads(data, buffers=bufs)
    assert_same_value(b, c)
    b[0][5] = -3.0  # one tensor behind both places, as in the original
    assert b[1][0][5].item() == -3.0
    assert len(pickle.dumps(c, protocol=4)) < 800 + 8 * 150  # not t twice


def test_pickle_memo_shares_the_same_qvalue_object():
    a = make("int8", (10,))
    x, y = pickle.loads(pickle.dumps([a, a]))
    assert x is y


def test_qvalues_inside_containers_with_numpy_and_torch():
    torch = pytest.importorskip("torch")
    a = make("float32", (3, 4))
    obj = {"q": a, "np": np.arange(5.0), "t": torch.arange(4), "list": [a, q.value("x"), 2]}
    for protocol in (4, 5):
        b = pickle.loads(pickle.dumps(obj, protocol=protocol))
        assert_same_tensor(b["q"], a)
        assert b["list"][0] is b["q"] and b["list"][1].to_py() == "x"
        np.testing.assert_array_equal(b["np"], obj["np"])
        assert torch.equal(b["t"], obj["t"])


# ---- plugin objects -----------------------------------------------------------------------------

def test_plugin_objects_refuse_pickling_with_their_type_name():
    # A qvalue of an object kind reaches Python only from C++ hosts (to_py of a value holding a
    # plugin object); Python itself cannot make one, so a stand-in with that kind is used.
    class fake_object:
        kind = "counter"

    for fn in (pickling.payload, pickling.copy_):
        with pytest.raises(TypeError, match="native object of type 'counter'.*declares no way"):
            fn(fake_object())
    with pytest.raises(TypeError, match="'counter'"):
        pickling.deepcopy_(fake_object(), {})


# ---- corrupted payloads -------------------------------------------------------------------------

GOOD = (pickling.VERSION, "tensor", "float32", (2, 3), "C", sys.byteorder, "cpu", bytes(24))


class QV:
    """Stands for a qvalue in BAD_PAYLOADS (none can be made before the session starts)."""


def materialize(x):
    if x is QV:
        return q.value(1)
    if isinstance(x, (tuple, list)):
        return type(x)(materialize(i) for i in x)
    return x


def with_field(i, value):
    p = list(GOOD)
    p[i] = value
    return tuple(p)


BAD_PAYLOADS = [
    ([1, "tensor"], pickle.UnpicklingError, "expected a payload tuple"),
    ((1,), pickle.UnpicklingError, "expected a payload tuple"),
    ("junk", pickle.UnpicklingError, "got str"),
    ((2, "none"), pickle.UnpicklingError, "version 2 is not known"),
    ((0, "none"), pickle.UnpicklingError, "version 0 is not known"),
    (("1", "none"), pickle.UnpicklingError, "version must be an int"),
    ((1, "matrix"), pickle.UnpicklingError, "unknown value kind 'matrix'"),
    ((1, "none", 3), pickle.UnpicklingError, "none payload"),
    (GOOD[:-1], pickle.UnpicklingError, "tensor payload has 8 items"),
    (GOOD + (True, True), pickle.UnpicklingError, "tensor payload has 8 items"),
    (GOOD + (False,), TypeError, "9th item \\(requires_grad\\) must be True, got False"),
    (GOOD + (1,), TypeError, "must be True, got 1"),
    (with_field(2, "int32") + (True,), ValueError, "int32 tensor cannot require grad"),
    (with_field(2, "float128"), ValueError, "unknown dtype 'float128'"),
    (with_field(2, 7), TypeError, "dtype must be a str"),
    (with_field(3, [2, 3]), TypeError, "shape must be a tuple"),
    (with_field(3, (2, -3)), ValueError, "negative dimension"),
    (with_field(3, (2, 3.0)), TypeError, "holds a float"),
    (with_field(3, (True, 3)), TypeError, "holds a bool"),
    (with_field(3, (1,) * 33), ValueError, "33 dimensions"),
    (with_field(3, (2, 4)), ValueError, "needs 32 bytes of data, the payload holds 24"),
    (with_field(3, (2**62, 2**62)), ValueError, "needs"),
    (with_field(4, "K"), ValueError, "order must be 'C' or 'F'"),
    (with_field(5, "middle"), ValueError, "byte order"),
    (with_field(6, "gpu"), ValueError, "unknown device 'gpu'"),
    (with_field(6, None), TypeError, "device must be a str"),
    (with_field(7, 12345), TypeError, "bytes-like buffer, got int"),
    (with_field(7, bytes(23)), ValueError, "needs 24 bytes"),
    (with_field(7, memoryview(bytes(48))[::2]), ValueError, "C-contiguous"),
    ((1, "scalar", "int8", 300), ValueError, "does not fit"),
    ((1, "scalar", "int8", "3"), TypeError, "int8 scalar holds a int, got str"),
    ((1, "scalar", "float32", 1j), TypeError, "got complex"),
    ((1, "scalar", "bool", 1), TypeError, "got int"),
    ((1, "scalar", "nope", 1), ValueError, "unknown dtype"),
    ((1, "scalar", "int8"), pickle.UnpicklingError, "scalar payload has 4 items"),
    ((1, "string", b"bytes"), TypeError, "one str"),
    ((1, "cell", (2,), [QV]), ValueError, "holds 2 items, the payload has 1"),
    ((1, "cell", (1,), ["raw"]), TypeError, "cell item 0 must be a qvalue"),
    ((1, "cell", (1,), (QV,)), TypeError, "items must be a list"),
    ((1, "cell", (-1,), []), ValueError, "negative dimension"),
    ((1, "cell", (1,), [("cell", (2,), [QV])]), ValueError, "holds 2 items"),
    ((1, "cell", (2,)), pickle.UnpicklingError, "cell payload has 4 items"),
]


@pytest.mark.parametrize("payload,error,message", BAD_PAYLOADS)
def test_corrupted_payloads_raise_typed_errors(payload, error, message):
    with pytest.raises(error, match=message):
        pickling.rebuild(materialize(payload))
    assert q.value(1.0).item() == 1.0  # the runtime is fine


def test_a_tampered_pickle_stream_raises_not_crashes():
    a = make("float32", (4, 4))
    data = pickle.dumps(a, protocol=4)
    shape = b"K\x04K\x04\x86"  # BININT1 4, BININT1 4, TUPLE2: the shape (4, 4)
    assert data.count(shape) == 1
    with pytest.raises(ValueError, match=r"shape \(4, 5\) needs 80 bytes of data, the payload "):
        pickle.loads(data.replace(shape, b"K\x04K\x05\x86"))
    with pytest.raises(ValueError, match="negative dimension"):
        pickle.loads(data.replace(shape, b"J\xfc\xff\xff\xffK\x04\x86"))  # BININT -4
    with pytest.raises(ValueError, match="unknown dtype 'flaot32'"):
        pickle.loads(data.replace(b"float32", b"flaot32"))
    with pytest.raises((pickle.UnpicklingError, EOFError)):
        pickle.loads(data[: len(data) // 2])  # truncated: pickle's own error
    assert bits(pickle.loads(data)) == bits(a)


def test_other_byte_order_is_swapped_on_load():
    x = random_array("float64", (3, 4))
    other = "big" if sys.byteorder == "little" else "little"
    payload = (1, "tensor", "float64", (3, 4), "C", other, "cpu", x.byteswap().tobytes())
    np.testing.assert_array_equal(np.asarray(pickling.rebuild(payload)), x)
    h = q.value(random_array("float32", (5,)), dtype="bfloat16")
    swapped = np.frombuffer(bits(h), np.uint16).byteswap().tobytes()
    b = pickling.rebuild((1, "tensor", "bfloat16", (5,), "C", other, "cpu", swapped))
    assert bits(b) == bits(h)


# ---- devices ------------------------------------------------------------------------------------

def cuda_payload(x, device="cuda:0"):
    return (1, "tensor", "float32", x.shape, "C", sys.byteorder, device, x.tobytes())


def test_a_cuda_pickle_without_that_device_names_it_and_the_way_out():
    x = random_array("float32", (3, 2))
    if q.cuda_available():
        pytest.skip("this machine has CUDA: the payload would load onto the GPU")
    with pytest.raises(RuntimeError, match=r"onto cuda:0.*unpickle_device\('cpu'\)"):
        pickling.rebuild(cuda_payload(x))
    with q.unpickle_device("cpu") as scope:
        assert scope.device == "cpu"
        b = pickling.rebuild(cuda_payload(x))
        with q.unpickle_device("cuda:1"):  # scopes nest; the inner one wins
            with pytest.raises(RuntimeError, match=r"onto cuda:1 \(asked by q.unpickle_device"):
                pickling.rebuild(cuda_payload(x, "cpu"))
        c = pickling.rebuild(cuda_payload(x, "cuda:3"))  # the outer one again
    assert b.device == "cpu" and c.device == "cpu"
    np.testing.assert_array_equal(np.asarray(b), x)
    with pytest.raises(RuntimeError, match="cuda:0"):  # the scope has ended
        pickling.rebuild(cuda_payload(x))


def test_unpickle_device_belongs_to_its_thread():
    x = random_array("float32", (2, 2))
    if q.cuda_available():
        pytest.skip("this machine has CUDA")
    inside, results = threading.Barrier(2), {}

    def scoped():
        with q.unpickle_device("cpu"):
            inside.wait()
            results["scoped"] = pickling.rebuild(cuda_payload(x)).device
            inside.wait()

    def plain():
        inside.wait()
        try:
            pickling.rebuild(cuda_payload(x))
        except RuntimeError as e:
            results["plain"] = str(e)
        inside.wait()

    threads = [threading.Thread(target=scoped), threading.Thread(target=plain)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results["scoped"] == "cpu" and "cuda:0" in results["plain"]


def test_unpickle_device_checks_its_argument():
    with pytest.raises(ValueError, match="unknown device 'gpu'"):
        q.unpickle_device("gpu")
    with pytest.raises(TypeError, match="device must be a str"):
        q.unpickle_device(0)
    assert repr(q.unpickle_device("cuda:2")) == "isthmus.unpickle_device('cuda:2')"


def test_unpickling_in_a_fresh_process_starts_the_runtime(run_python):
    c = cell(2, items=[make("float64", (3, 2)), q.value("s")])
    blob = pickle.dumps({"a": make("int16", (4,)), "c": c, "s": q.value(2.5)}, protocol=5)
    code = f"""
        import pickle
        import isthmus as q
        assert not q.is_initialized()
        d = pickle.loads({blob!r})
        assert q.is_initialized()
        print(d["a"].tolist(), d["c"][0].tolist(), d["c"][1].to_py(), d["s"].item())
        q.destroy()
        e = pickle.loads({blob!r})  # a new session after destroy
        print(q.is_initialized(), e["s"].dtype)
    """
    out = run_python(code).stdout.splitlines()
    here = pickle.loads(blob)
    assert out[0] == f"{here['a'].tolist()} {here['c'][0].tolist()} s 2.5"
    assert out[1] == "True float32"


# ---- copy.copy / copy.deepcopy ------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "complex128", "uint8"])
def test_copy_and_deepcopy_of_tensors_are_new_contiguous_tensors(dtype):
    base = make(dtype, (6, 5))
    for a in (base, base[::2, 1:].T, base[0, :1].expand(4, 3)):
        for c in (copy.copy(a), copy.deepcopy(a)):
            assert_same_tensor(c, a)
            assert c.is_contiguous() and c is not a
            before = bits(a)
            c[...] = 0
            assert bits(a) == before


def test_copies_of_immutable_values_are_themselves():
    for v in (q.value(2.5), q.value(np.int8(3)), q.value("x"), q.value(None)):
        assert copy.copy(v) is v and copy.deepcopy(v) is v


def test_copy_of_a_cell_is_shallow():
    t = make("float64", (4,))
    c = cell(2, 2, items=[t, q.value("a"), cell(1, items=[q.value(1)]), q.value(None)])
    d = copy.copy(c)
    assert d.kind == "cell" and d.shape == (2, 2)
    assert_same_value(d, c)
    d[1] = q.value("changed")  # a new cell ...
    assert c[1].to_py() == "a"
    d[0][0] = 99.0  # ... holding the same elements
    assert t[0].item() == 99.0
    d[2][0] = q.value("inner")
    assert c[2][0].to_py() == "inner"


def test_deepcopy_of_a_cell_copies_every_level_and_keeps_sharing():
    t = make("float32", (5,))
    inner = cell(2, items=[t, q.value(2)])
    c = cell(3, items=[t, inner, t[1:3]])
    d = copy.deepcopy(c)
    assert_same_value(d, c)
    d[0][0] = -7.0
    assert t[0].item() != -7.0  # independent of the original
    assert d[1][0][0].item() == -7.0  # shared where the original shares
    d[1][1] = q.value("x")
    assert c[1][1].item() == 2
    e, f = copy.deepcopy([c, cell(1, items=[t])])  # one memo for the whole call
    e[0][1] = 5.0
    assert f[0][1].item() == 5.0
    g = copy.deepcopy([t, t])
    assert g[0] is g[1]


def test_buffer_owner_exports_the_same_memory():
    """A buffer's owner object re-exports the tensor (PickleBuffer.raw(), memoryview(v.obj))."""
    a = q.value(np.arange(12, dtype=np.float32).reshape(3, 4))
    raw = pickle.PickleBuffer(a).raw()
    assert raw.nbytes == 48 and raw.format == "B"
    again = memoryview(memoryview(a).obj)
    assert again.shape == (3, 4) and again.format == "f"
    np.testing.assert_array_equal(np.asarray(again), np.arange(12).reshape(3, 4))
    np.asarray(again)[0, 0] = 7  # the same memory, writable as the tensor is
    assert a[0, 0].item() == 7
    t = a.T  # strided: the owner keeps the strides
    v = memoryview(memoryview(t).obj)
    np.testing.assert_array_equal(np.asarray(v), np.asarray(t))


def test_bfloat16_item_is_a_python_float():
    assert q.value(1.5, dtype="bfloat16").item() == 1.5
    assert type(q.value([2.5], dtype="bfloat16").item()) is float
