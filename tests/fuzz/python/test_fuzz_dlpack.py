"""Fuzzer: DLPack import (q.from_dlpack) of DLManagedTensor(Versioned) capsules built with ctypes.

Every field comes from the fuzzer: capsule name, version, flags, device, dtype, ndim, shape,
strides, byte offset, data pointer, deleter, and copy=. The memory behind a tensor is real
(a buffer sized from its shape and strides), except where the sizes overflow, which the importer
must refuse. The rules: no crash; errors are ValueError, TypeError, BufferError or MemoryError (a
copy too big; RuntimeError for CUDA devices on a machine without CUDA); an import gives the producer's shape, dtype and
bytes; the deleter runs exactly once after a successful import (when the value is gone or the
bytes were copied) and never after a failed one, which leaves the capsule's name unchanged; a
read-only or copy=True import never writes the producer's memory.

Two modes aim at fields that once crashed: `raw_bools` fills a bool tensor with any bytes (not
only 0 and 1; the import must read them as x != 0 and sorts over them must match NumPy's, Note
[bool bytes]), and `wild_offset` keeps the data pointer at the buffer and puts a far byte_offset
on top of it, so data + byte_offset lies outside mapped memory: the import must refuse it (Note
[dlpack byte offset]).
"""

import ctypes
import gc

import numpy as np
from hypothesis import strategies as st

import isthmus as q
from fuzzing import corpus_line, replay, run_for

# ---- the DLPack structs (DLPack 1.x, x86-64 / aarch64 layout) ----


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


class DLManagedTensorVersioned(ctypes.Structure):
    pass


LEGACY_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
VERSIONED_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", LEGACY_DELETER)]
DLManagedTensorVersioned._fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                                     ("manager_ctx", ctypes.c_void_p),
                                     ("deleter", VERSIONED_DELETER), ("flags", ctypes.c_uint64),
                                     ("dl_tensor", DLTensor)]
assert ctypes.sizeof(DLManagedTensor) == 64 and ctypes.sizeof(DLManagedTensorVersioned) == 80

_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype = ctypes.c_char_p
_capsule_name.argtypes = [ctypes.py_object]

NUMPY_OF = {(0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64",
            (1, 8): "uint8", (1, 16): "uint16", (1, 32): "uint32", (1, 64): "uint64",
            (2, 16): "float16", (2, 32): "float32", (2, 64): "float64",
            (5, 64): "complex64", (5, 128): "complex128", (6, 8): "bool"}
HOST_DEVICES = (1, 3, 11, 13)
INT64_MAX = 2**63 - 1
MAX_BUFFER = 1 << 20


class Producer:
    """One fuzzed DLManagedTensor(Versioned), its memory, and a count of deleter calls."""

    def __init__(self, c):
        self.case = c
        self.deleted = 0
        versioned = c["name"].endswith(b"versioned")
        self.m = DLManagedTensorVersioned() if versioned else DLManagedTensor()
        if versioned:
            self.m.major, self.m.minor, self.m.flags = c["major"], 1, c["flags"]
        t = self.m.dl_tensor
        t.device.device_type, t.device.device_id = c["device"], c["device_id"]
        t.ndim = c["ndim"]
        t.dtype.code, t.dtype.bits, t.dtype.lanes = c["dtype"]
        self.shape = (ctypes.c_int64 * max(1, len(c["shape"])))(*c["shape"])
        self.strides = (ctypes.c_int64 * max(1, len(c["strides"] or [])))(*(c["strides"] or []))
        t.shape = None if c["null_shape"] else ctypes.addressof(self.shape)
        t.strides = None if c["strides"] is None else ctypes.addressof(self.strides)
        t.byte_offset = c["byte_offset"]
        # Real memory for every element (span: lowest byte offset from element 0, byte count).
        lo, nbytes = c["span"] if c["span"] is not None else (0, 0)
        self.buffer = (ctypes.c_uint8 * (nbytes + 16))()
        raw = np.frombuffer(self.buffer, dtype=np.uint8)
        raw[:] = np.random.default_rng(nbytes).integers(0, 256, raw.size, dtype=np.uint8)
        if c["dtype"][0] == 6 and not c["raw_bools"]:
            raw &= 1  # bools are 0 or 1
        start = ctypes.addressof(self.buffer) + c["misalign"]
        if c["wild_offset"]:
            t.byte_offset = c["wild_offset"]  # data + byte_offset: far from any mapping
            t.data = None if c["null_data"] else start - lo
        else:
            t.data = None if c["null_data"] else start - lo - c["byte_offset"]
        self.before = bytes(self.buffer)
        if c["deleter"]:
            kind = VERSIONED_DELETER if versioned else LEGACY_DELETER

            def deleter(_ptr):
                self.deleted += 1

            self.m.deleter = kind(deleter)
        self.capsule = _new_capsule(ctypes.addressof(self.m), c["name"], None)

    def expected(self):
        """NumPy's view of the producer's elements (None when the dtype has no NumPy twin)."""
        c = self.case
        name = NUMPY_OF.get(tuple(c["dtype"][:2]))
        if name is None or c["dtype"][2] != 1:
            return None
        dt = np.dtype(name)
        if c["span"] is None:
            return np.empty(c["shape"], dtype=dt)
        lo, nbytes = c["span"]
        strides = c["strides"] if c["strides"] is not None else contiguous(c["shape"])
        # a size-1 dimension never moves: its stride may be anything, NumPy wants it small
        strides = [0 if n == 1 else s for s, n in zip(strides, c["shape"])]
        raw = np.frombuffer(self.buffer, dtype=np.uint8)[c["misalign"]:c["misalign"] + nbytes]
        return np.ndarray(tuple(c["shape"]), dtype=dt, buffer=raw, offset=-lo,
                          strides=tuple(s * dt.itemsize for s in strides))

    def obj(self):
        """The capsule itself, or an object with __dlpack__ / __dlpack_device__ handing it out."""
        if not self.case["via_object"]:
            return self.capsule
        producer = self

        class Obj:
            def __dlpack__(self, **kwargs):
                return producer.capsule

            def __dlpack_device__(self):
                return (producer.case["device"], producer.case["device_id"])

        return Obj()


def contiguous(shape):
    return [int(np.prod(shape[i + 1:], dtype=object)) for i in range(len(shape))]


def span(shape, strides, itemsize):
    """(lowest byte offset, byte count) of the elements, None when there are none, "overflow"
    when an offset leaves int64."""
    if any(n < 0 for n in shape):
        return None
    # As NumPy (and isthmus's checked_numel): the sizes, zero ones skipped, times the item size
    # must fit in int64, even for an empty tensor.
    if np.prod([n for n in shape if n], dtype=object) * itemsize > INT64_MAX:
        return "overflow"
    if np.prod(shape, dtype=object) == 0:
        return None
    strides = strides if strides is not None else contiguous(shape)
    lo = sum(min(0, s * (n - 1)) for s, n in zip(strides, shape)) * itemsize
    hi = sum(max(0, s * (n - 1)) for s, n in zip(strides, shape)) * itemsize + itemsize
    if hi - lo > INT64_MAX or -lo > INT64_MAX or np.prod(shape, dtype=object) * itemsize > INT64_MAX:
        return "overflow"
    return lo, hi - lo


def check_bools(v, exp, c):
    """Reductions and sorts over an imported bool tensor agree with NumPy on x != 0."""
    if exp.size == 0:
        return  # (an empty shape may be too big for argsort's int64 result to describe)
    assert int(q.sum(v)) == int(exp.sum()), f"sum; {describe(c)}"
    if exp.ndim:
        got = q.argsort(v).to_py()
        assert (got == np.argsort(exp, axis=-1, kind="stable")).all(), f"argsort; {describe(c)}"
        assert (q.sort(v).to_py() == np.sort(exp, axis=-1)).all(), f"sort; {describe(c)}"


def describe(c):
    return "corpus line: " + corpus_line({k: v for k, v in c.items() if k != "span"})


def check(case):
    (c,) = case if isinstance(case, tuple) else (case,)
    c = dict(DEFAULTS, **c)
    itemsize = max(1, (c["dtype"][1] * c["dtype"][2]) // 8)
    sizes_ok = 0 <= c["ndim"] <= 32 and len(c["shape"]) >= c["ndim"]
    c["shape"] = list(c["shape"][:max(0, c["ndim"])]) if sizes_ok else list(c["shape"])
    if c["strides"] is not None:
        c["strides"] = (list(c["strides"]) + [1] * len(c["shape"]))[:len(c["shape"])]
    sp = span(c["shape"], c["strides"], itemsize) if sizes_ok else "overflow"
    if sp != "overflow" and sp is not None and sp[1] > MAX_BUFFER:
        return  # a well-formed tensor too big to back with memory here
    c["span"] = None if sp == "overflow" else sp
    overflow = sp == "overflow"
    if overflow:
        c["null_data"] = True  # nothing may read it: the importer must refuse the sizes
    p = Producer(c)
    kwargs = {} if c["copy"] == "absent" else {"copy": c["copy"]}
    name_before = _capsule_name(p.capsule)
    try:
        v = q.from_dlpack(p.obj(), **kwargs)
    except (ValueError, TypeError, BufferError, MemoryError) as e:
        assert p.deleted == 0, f"deleter ran after a failed import ({e}); {describe(c)}"
        assert _capsule_name(p.capsule) == name_before, f"failed import renamed the capsule; {describe(c)}"
        return
    except RuntimeError as e:
        assert c["device"] == 2, f"RuntimeError {e}; {describe(c)}"
        return
    assert not overflow, f"import accepted overflowing sizes; {describe(c)}"
    assert not c["wild_offset"] or c["null_data"] or c["span"] is None, \
        f"import accepted data + byte_offset outside mapped memory; {describe(c)}"
    assert _capsule_name(p.capsule).startswith(b"used_"), f"capsule not renamed; {describe(c)}"
    assert tuple(v.shape) == tuple(c["shape"]), f"shape {v.shape}; {describe(c)}"
    exp = p.expected()
    big = v.numel() > 1 << 20  # zero strides make huge tensors of a few bytes: sample those
    if exp is not None and big:
        got = np.asarray(v)
        for k in (0, -1):
            at = tuple(k for _ in c["shape"])
            assert got[at].tobytes() == exp[at].tobytes(), f"element {at} differs; {describe(c)}"
        del got
    elif exp is not None:
        got = np.asarray(v)
        assert got.dtype == exp.dtype, f"dtype {got.dtype} != {exp.dtype}; {describe(c)}"
        if exp.dtype == bool:  # See Note [bool bytes]: nonzero bytes read as true, stored as 1
            exp = exp.view(np.uint8) != 0
            check_bools(v, exp, c)
        assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(exp).tobytes(), \
            f"bytes differ from the producer's; {describe(c)}"
        del got
    read_only = c["name"].endswith(b"versioned") and c["flags"] & 1
    is_copied = c["name"].endswith(b"versioned") and c["flags"] & 2  # the producer's own copy
    if v.numel() and not big and (read_only or (c["copy"] is True and not is_copied)):
        try:
            v[...] = 0
        except (ValueError, TypeError):
            pass
        assert bytes(p.buffer) == p.before, f"a read-only or copied import wrote the producer's memory; {describe(c)}"
    del v
    gc.collect()
    expected_calls = 1 if c["deleter"] else 0
    assert p.deleted == expected_calls, f"deleter ran {p.deleted} times; {describe(c)}"


# ---- strategies ----

DEFAULTS = dict(name=b"dltensor_versioned", major=1, flags=0, device=1, device_id=0,
                dtype=(2, 32, 1), ndim=1, shape=[3], strides=None, null_shape=False,
                null_data=False, byte_offset=0, misalign=0, deleter=True, copy="absent",
                via_object=False, raw_bools=False, wild_offset=0)
WILD_OFFSETS = [2**48, 2**56, 2**62, 2**63, 2**63 + 8, 2**64 - 8]
BIG = [2**62, 2**63 - 1, -(2**63), 2**32, -1, -(2**62)]
size = st.one_of(st.integers(0, 4), st.sampled_from(BIG))
stride = st.one_of(st.integers(-6, 6), st.sampled_from(BIG))
dtypes = st.one_of(st.sampled_from(sorted(NUMPY_OF)).map(lambda k: (k[0], k[1], 1)),
                   st.sampled_from([(4, 16, 1), (3, 64, 1), (2, 8, 1), (0, 7, 1), (2, 32, 4),
                                    (2, 32, 0), (10, 8, 1), (0, 0, 1), (200, 64, 1)]))


@st.composite
def cases(draw):
    ndim = draw(st.one_of(st.integers(0, 4), st.sampled_from([-1, 32, 33, 2**31 - 1])))
    n = ndim if 0 <= ndim <= 32 else 4  # the importer may read ndim sizes: give it them
    return dict(
        name=draw(st.sampled_from([b"dltensor", b"dltensor_versioned", b"dltensor_versioned",
                                   b"used_dltensor", b"used_dltensor_versioned", b"other"])),
        major=draw(st.sampled_from([1, 1, 1, 0, 2])),
        flags=draw(st.integers(0, 7)),
        device=draw(st.sampled_from([1, 1, 1, 1, 2, 3, 4, 11, 13, 0, 99])),
        device_id=draw(st.sampled_from([0, 0, 1, -1])),
        dtype=draw(dtypes),
        ndim=ndim,
        shape=draw(st.lists(size, min_size=n, max_size=n)),
        strides=draw(st.one_of(st.none(), st.lists(stride, min_size=n, max_size=n))),
        null_shape=draw(st.integers(0, 15)) == 0,
        null_data=draw(st.integers(0, 15)) == 0,
        byte_offset=draw(st.sampled_from([0, 0, 0, 1, 4, 8, 16])),
        misalign=draw(st.sampled_from([0, 0, 0, 1, 2])),
        deleter=draw(st.integers(0, 7)) != 0,
        copy=draw(st.sampled_from(["absent", None, True, False])),
        via_object=draw(st.booleans()),
        raw_bools=draw(st.booleans()),
        wild_offset=draw(st.one_of(st.just(0), st.just(0), st.just(0),
                                   st.sampled_from(WILD_OFFSETS))),
    )


def test_corpus():
    replay("dlpack", 1, check)


def test_fuzz_dlpack():
    run_for(cases(), check)
