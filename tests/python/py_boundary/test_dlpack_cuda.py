# CUDA exchange: DLPack with kDLCUDA, __cuda_array_interface__, q.torch on the GPU: argument checks
# on every machine, memory shared both ways on a GPU (stream order: test_dlpack_cuda_streams.py).
import gc
import types

import numpy as np
import pytest

import isthmus as q
from cuda_helpers import HAVE_CUDA
from dlpack_helpers import Producer, capsule_name, kDLCPU, kDLCUDA, kDLCUDAHost, random_array
from dlpack_cuda_helpers import (CUDA0, GPU_DTYPES, device_address, host, needs_torch_gpu,
                                 on_gpu, random_torch, torch, torch_dtype)


without_gpu = pytest.mark.skipif(HAVE_CUDA, reason="this machine has a GPU; the path needs none")

rng = np.random.default_rng(20241122)


def sample(dtype, shape=(3, 4)):
    return random_array(rng, dtype, shape)


def cai_dict(**changes):
    """A well-formed __cuda_array_interface__ dict (a made-up device address), with changes."""
    d = {"shape": (2, 3), "typestr": "<f4", "data": (0x7F0000000000, False), "version": 3,
         "strides": None, "stream": None}
    d.update(changes)
    return {k: v for k, v in d.items() if v is not ...}


class CAIProducer:
    """An object exposing only __cuda_array_interface__ (as a Numba device array does)."""

    def __init__(self, interface):
        self.interface = interface
        self.reads = 0

    @property
    def __cuda_array_interface__(self):
        self.reads += 1
        return self.interface


# ---- on every machine: CPU values, argument checks, CAI validation ----


@pytest.mark.parametrize("make", [lambda: q.value(np.arange(6.0).reshape(2, 3)),
                                  lambda: q.value(2.5), lambda: q.value("text"),
                                  lambda: q.value(np.arange(12).reshape(3, 4)).T])
def test_cpu_values_have_no_cuda_array_interface(make):
    value = make()
    assert not hasattr(value, "__cuda_array_interface__")
    with pytest.raises(AttributeError, match="__cuda_array_interface__"):
        value.__cuda_array_interface__
    if value.kind == "tensor":
        assert value._pinned_to() == -1  # asking pinned nothing


def test_cpu_export_stream_rules():
    x = sample("float32", (3, 4))
    A = q.value(x)
    # the array API: CPU data takes stream=None only
    for stream, exc in [(0, ValueError), (1, ValueError), (2, ValueError), (-1, ValueError),
                        (2**40, ValueError), ("s", TypeError), (True, TypeError),
                        (1.0, TypeError)]:
        with pytest.raises(exc, match="stream must be None"):
            A.__dlpack__(stream=stream)
        assert A._pinned_to() == -1
    assert A.__dlpack_device__() == (kDLCPU, 0)
    cap = A.__dlpack__(stream=None, dl_device=(kDLCPU, 0))
    assert capsule_name(cap) == "dltensor" and A._pinned_to() == q.MEMRESOURCE_CPU
    del cap  # never consumed: its destructor gives the pin back
    assert A._pinned_to() == -1
    n = np.from_dlpack(A)
    n[0, 0] = 42
    assert A.to_py()[0, 0] == 42
    del n
    gc.collect()
    assert A._pinned_to() == -1


def test_bad_dl_device_values():
    x = sample("float64", (2, 2))
    A = q.value(x)
    cases = [
        ((kDLCUDAHost, 0), BufferError, "kDLCUDAHost"),
        ((10, 0), BufferError, "kDLROCM"),
        ((kDLCPU, 1), BufferError, "device id must be 0"),
        ((kDLCUDA,), ValueError, "dl_device"),
        ((kDLCUDA, 0, 0), ValueError, "dl_device"),
        ("cuda", TypeError, "dl_device"),
        ((kDLCUDA, "0"), TypeError, "dl_device"),
        ((kDLCUDA, 0.0), TypeError, "dl_device"),
        ((kDLCUDA, 99), BufferError, "CUDA" if HAVE_CUDA else "CUDA is not available"),
    ]
    if not HAVE_CUDA:
        cases.append(((kDLCUDA, 0), BufferError, "CUDA is not available"))
    for dl_device, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            A.__dlpack__(dl_device=dl_device)
        assert A._pinned_to() == -1, dl_device
    np.testing.assert_array_equal(A.to_py(), x)


@without_gpu
def test_export_to_cuda_without_gpu_names_the_cause():
    A = q.value(sample("float32"))
    with pytest.raises(BufferError) as e:
        A.__dlpack__(dl_device=(kDLCUDA, 0), stream=None)
    assert q.cuda_unavailable_reason() in str(e.value)
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        q.cuda_stream()


@without_gpu
def test_fake_cuda_producer_raises_runtime_error():
    x = sample("float32", (2, 3))
    keep = x.copy()
    p = Producer(x)
    p.device = (kDLCUDA, 0)
    for convert in (q.from_dlpack, q.asvalue, q.from_py, q.value, lambda o: q.value(1.0) + o):
        with pytest.raises(RuntimeError, match="CUDA is not available") as e:
            convert(p)
        assert q.cuda_unavailable_reason() in str(e.value)
    # the device was asked first, so the producer never exported anything
    assert p.calls == [] and p.deleted == 0
    np.testing.assert_array_equal(x, keep)
    # a producer that says CPU but hands out a kDLCUDA capsule: refused, capsule left intact
    p2 = Producer(x)
    p2.device, p2.report_device = (kDLCUDA, 0), (kDLCPU, 0)
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        q.from_dlpack(p2)
    gc.collect()
    assert len(p2.calls) == 1 and p2.deleted == 1  # the producer's destructor freed it, once
    # a bare capsule
    cap = p2.capsule()
    with pytest.raises(RuntimeError, match="CUDA device 0"):
        q.from_dlpack(cap)
    assert capsule_name(cap) == "dltensor_versioned"  # not consumed
    np.testing.assert_array_equal(x, keep)
    assert float(q.sum(q.value(x))) == pytest.approx(float(keep.sum()))  # still alive


@without_gpu
def test_from_dlpack_device_cuda_without_gpu():
    x = sample("float32", (3,))
    for device in ("cuda", "cuda:0", "cuda:1", (kDLCUDA, 0)):
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            q.from_dlpack(x, device=device)
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            q.from_dlpack(q.value(x), device=device)
    np.testing.assert_array_equal(q.from_dlpack(x, device="cpu").to_py(), x)


def test_from_dlpack_bad_device_arguments():
    x = sample("float32", (3,))
    for device, exc, msg in [("cuda:x", ValueError, "unknown device"),
                             ("gpu", ValueError, "unknown device"),
                             ("cuda:", ValueError, "unknown device"),
                             ((kDLCUDAHost, 0), BufferError, "not supported"),
                             ((kDLCPU, 3), BufferError, "not supported"),
                             ((kDLCUDA, -1), ValueError, "device id"),
                             (1.5, TypeError, "device"),
                             ((kDLCUDA,), ValueError, "device")]:
        with pytest.raises(exc, match=msg):
            q.from_dlpack(x, device=device)


def test_cuda_array_interface_import_validation():
    # Every entry is checked before CUDA is needed: these are typed errors on any machine.
    cases = [
        (cai_dict(shape=...), TypeError, "shape"),
        (cai_dict(shape=(2, -3)), ValueError, "negative size"),
        (cai_dict(shape=(2, "3")), TypeError, "shape"),
        (cai_dict(typestr=...), TypeError, "typestr"),
        (cai_dict(typestr="<x9"), TypeError, "typestr"),
        (cai_dict(typestr=">f4"), ValueError, "byte order"),
        (cai_dict(typestr="|O"), TypeError, "no isthmus equivalent"),
        (cai_dict(data=...), TypeError, "data"),
        (cai_dict(data=(0x1000,)), TypeError, "data"),
        (cai_dict(data=(0, False)), ValueError, "pointer is 0"),
        (cai_dict(data=("x", False)), TypeError, "data pointer"),
        (cai_dict(version=...), TypeError, "version"),
        (cai_dict(strides=(4,)), ValueError, "strides for 2 dimensions"),
        (cai_dict(strides=(12, 3)), ValueError, "multiple of the item size"),
        (cai_dict(shape=(5, 3), strides=(2**62, 4)), ValueError, "overflow"),
        (cai_dict(shape=(2, 3), typestr="|u1", strides=(-(2**63), 1)), ValueError, "overflow"),
        (cai_dict(shape=(2, 3), typestr="|u1", strides=(2**63 - 1, 1)), ValueError, "overflow"),
        (cai_dict(mask=object()), ValueError, "masked"),
        (cai_dict(stream=0), ValueError, "stream 0"),
        (cai_dict(stream=-1), ValueError, "not a stream"),
        (cai_dict(stream="s"), TypeError, "stream"),
    ]
    for interface, exc, msg in cases:
        obj = CAIProducer(interface)
        with pytest.raises(exc, match=msg):
            q.from_dlpack(obj)
        assert obj.reads == 1
    with pytest.raises(TypeError, match="must be a dict"):
        q.asvalue(CAIProducer([("shape", (2,))]))


@without_gpu
def test_cuda_array_interface_import_without_gpu():
    obj = CAIProducer(cai_dict(stream=1))
    for convert in (q.from_dlpack, q.asvalue, q.from_py, lambda o: q.value(2.0) * o):
        with pytest.raises(RuntimeError, match="CUDA is not available") as e:
            convert(obj)
        assert q.cuda_unavailable_reason() in str(e.value)
    empty = CAIProducer(cai_dict(shape=(0, 3), data=(0, False)))
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        q.from_dlpack(empty)


@pytest.mark.skipif(torch is None, reason="needs torch")
def test_torch_cpu_paths_unchanged():
    A = q.value(sample("float32", (3, 4)))
    t = q.torch.to_tensor(A, "cpu")
    assert t.data_ptr() == A.lock(q.LOCK_READ, q.MEMRESOURCE_CPU)
    A.unlock(q.LOCK_READ, q.MEMRESOURCE_CPU)
    t[0, 0] = 9
    assert A.to_py()[0, 0] == 9
    c = q.torch.to_tensor(A, "cpu", copy=True)
    c[0, 1] = -1
    assert A.to_py()[0, 1] != -1
    B = q.torch.from_tensor(torch.arange(6.0))
    np.testing.assert_array_equal(B.to_py(), np.arange(6.0))
    if not HAVE_CUDA:
        with pytest.raises((RuntimeError, AssertionError)):
            q.torch.to_tensor(A, "cuda")  # torch without CUDA refuses the device change
        np.testing.assert_array_equal(A.to_py()[0], t[0].numpy())


# ---- on a GPU (skipped with the reason above elsewhere) ----

@needs_torch_gpu
@pytest.mark.parametrize("dtype", GPU_DTYPES)
def test_torch_cuda_to_isthmus_shares_memory(init_device, dtype):
    t, ref = random_torch(dtype)
    A = q.from_dlpack(t)
    assert A.device == "cuda:0" and A.__dlpack_device__() == (kDLCUDA, 0)
    assert A._pinned_to() == CUDA0 and str(A.dtype) == dtype
    assert device_address(A) == t.data_ptr()
    # isthmus writes (queued on isthmus's stream) into torch's memory
    B = q.from_dlpack(t[1:3])
    assert device_address(B) == t[1:3].data_ptr()
    B.fill(0)
    q.cuda_synchronize()
    got = host(t)
    assert not got[1:3].any()
    np.testing.assert_array_equal(got[[0, 3, 4]], ref[[0, 3, 4]])
    np.testing.assert_array_equal(np.asarray(A)[[0, 3, 4]], ref[[0, 3, 4]])  # a host copy
    # 0-d and empty CUDA tensors
    z = torch.ones((), dtype=torch_dtype(dtype), device="cuda")
    Z = q.from_dlpack(z)
    assert Z.shape == () and device_address(Z) == z.data_ptr()
    E = q.from_dlpack(torch.empty((0, 3), dtype=torch_dtype(dtype), device="cuda"))
    assert E.shape == (0, 3) and E.to_py().shape == (0, 3)


@needs_torch_gpu
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_torch_cuda_writes_both_ways(init_device, dtype):
    t, ref = random_torch(dtype)
    A = q.torch.from_tensor(t)
    assert device_address(A) == t.data_ptr()
    A += 1  # a GPU op on the pinned device copy, queued on isthmus's stream
    q.cuda_synchronize()
    np.testing.assert_array_equal(host(t), ref + 1)
    t.mul_(2)  # torch writes on its stream
    torch.cuda.synchronize()
    np.testing.assert_array_equal(host(A * 1), (ref + 1) * 2)  # on the GPU, from t's memory
    # and back to torch: the same memory
    u = q.torch.to_tensor(A)
    assert u.is_cuda and u.data_ptr() == t.data_ptr()


@needs_torch_gpu
@pytest.mark.parametrize("dtype", GPU_DTYPES)
def test_isthmus_cuda_to_torch_shares_memory(init_device, dtype):
    A, ref = on_gpu(dtype)
    assert A.__dlpack_device__() == (kDLCUDA, 0)
    t = torch.from_dlpack(A)
    assert t.is_cuda and t.dtype == torch_dtype(dtype)
    assert t.data_ptr() == device_address(A)
    assert A._pinned_to() == CUDA0  # pinned while torch holds it
    np.testing.assert_array_equal(host(t), ref)
    t.zero_()  # torch writes; isthmus reads on the GPU (the only valid copy)
    torch.cuda.synchronize()
    assert not host(A).any()
    del t
    gc.collect()
    assert A._pinned_to() == -1


@needs_torch_gpu
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bool", "float16", "uint8"])
def test_cuda_array_interface_round_trip(init_device, dtype):
    A, ref = on_gpu(dtype)
    cai = A.__cuda_array_interface__
    assert cai["version"] == 3 and cai["shape"] == A.shape and cai["strides"] is None
    assert cai["data"] == (device_address(A), False) and cai["stream"] == q.cuda_stream()
    assert cai["typestr"] == np.dtype(dtype).str
    assert A._pinned_to() == CUDA0  # for the rest of A's life
    t = torch.as_tensor(A, device="cuda")
    assert t.data_ptr() == device_address(A)
    np.testing.assert_array_equal(host(t), ref)
    # and back: torch tensors expose __cuda_array_interface__ too
    B = q.from_dlpack(CAIProducer(t.__cuda_array_interface__))
    assert device_address(B) == t.data_ptr() and B._pinned_to() == CUDA0
    np.testing.assert_array_equal(host(B), ref)
    ro = dict(t.__cuda_array_interface__)
    ro["data"] = (ro["data"][0], True)
    C = q.from_dlpack(CAIProducer(ro))  # read-only: a copy on the device
    assert C.device == "cuda:0" and device_address(C) != t.data_ptr()
    np.testing.assert_array_equal(host(C), ref)
    with pytest.raises(ValueError, match="read-only"):
        q.from_dlpack(CAIProducer(ro), copy=False)
    # a CAI stream entry is waited for
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(20_000_000)
        t2 = t.clone()
        D = q.from_dlpack(CAIProducer(t2.__cuda_array_interface__))
    np.testing.assert_array_equal(host(D), ref)  # the copy back is queued after the wait
    t2.record_stream(side)


@needs_torch_gpu
def test_bfloat16_goes_through_dlpack(init_device):
    A, ref = on_gpu("bfloat16")
    assert not hasattr(A, "__cuda_array_interface__")
    t = torch.as_tensor(A, device="cuda")  # torch falls back to __dlpack__
    assert t.dtype == torch.bfloat16 and t.data_ptr() == device_address(A)
    np.testing.assert_array_equal(host(t), ref)


@needs_torch_gpu
def test_non_contiguous_both_ways(init_device):
    base, ref = random_torch("float32", (6, 8))
    t = base.t()[1:, ::2]  # transposed and stepped
    A = q.from_dlpack(t)
    assert device_address(A) == t.data_ptr()
    np.testing.assert_array_equal(host(A), ref.T[1:, ::2])
    C = q.from_dlpack(CAIProducer(t.__cuda_array_interface__))
    np.testing.assert_array_equal(host(C), ref.T[1:, ::2])
    W, wref = on_gpu("float32", (6, 8))
    V = W.T[1:, ::2]
    u = torch.from_dlpack(V)
    assert u.data_ptr() == device_address(V) and u.stride() == (1, 16)
    np.testing.assert_array_equal(host(u), wref.T[1:, ::2])
    assert V.__cuda_array_interface__["strides"] == (4, 64)
    np.testing.assert_array_equal(host(torch.as_tensor(V, device="cuda")), wref.T[1:, ::2])
    R = W[::-1]
    assert not hasattr(R, "__cuda_array_interface__")  # negative strides: DLPack copies
    r = torch.from_dlpack(R)
    assert r.data_ptr() != device_address(W)
    np.testing.assert_array_equal(host(r), wref[::-1])


@needs_torch_gpu
def test_dl_device_copies_and_moves(init_device):
    base, ref = random_torch("float64", (4, 5))
    A = q.from_dlpack(base)  # pinned to the GPU (torch's memory)
    # asked for the CPU: a copy, since the storage cannot leave torch's memory
    h = np.from_dlpack(A, device="cpu")
    np.testing.assert_array_equal(h, ref)
    with pytest.raises(BufferError, match="copy"):
        A.__dlpack__(dl_device=(kDLCPU, 0), copy=False)
    assert A._pinned_to() == CUDA0
    # a CPU value asked for CUDA moves there and stays shared
    C = q.value(sample("float32", (3, 3)))
    t = torch.utils.dlpack.from_dlpack(C.__dlpack__(dl_device=(kDLCUDA, 0), stream=None))
    assert t.is_cuda and C._pinned_to() == CUDA0 and t.data_ptr() == device_address(C)
    # from_dlpack(device=...) both ways
    x = sample("float32", (4,))
    D = q.from_dlpack(x, device="cuda")  # NumPy cannot export to CUDA: isthmus copies
    assert D.device == "cuda:0"
    np.testing.assert_array_equal(host(D), x)
    with pytest.raises(ValueError, match="copy=False"):
        q.from_dlpack(x, device="cuda", copy=False)
    E = q.from_dlpack(base, device="cpu")
    assert E.device == "cpu"
    np.testing.assert_array_equal(E.to_py(), ref)
    F = q.from_dlpack(base, device=(kDLCUDA, 0))
    assert device_address(F) == base.data_ptr()


@needs_torch_gpu
def test_to_tensor_device_semantics(init_device):
    A = q.value(sample("float32", (3, 4)))
    t = q.torch.to_tensor(A, "cuda")  # moves A to the GPU, shared
    assert t.is_cuda and t.data_ptr() == device_address(A) and A.device == "cuda:0"
    c = q.torch.to_tensor(A, "cuda", copy=True)
    assert c.is_cuda and c.data_ptr() != t.data_ptr()
    x = np.arange(12.0).reshape(3, 4)
    W = q.from_py(x)  # wraps NumPy memory: pinned to the CPU, so CUDA gets a copy
    w = q.torch.to_tensor(W, "cuda")
    assert w.is_cuda
    np.testing.assert_array_equal(host(w), x)
    # from_tensor on CUDA tensors shares; copy=True stays on the device
    g, gref = random_torch("float32")
    assert device_address(q.torch.from_tensor(g)) == g.data_ptr()
    G = q.torch.from_tensor(g, copy=True)
    assert G.device == "cuda:0" and device_address(G) != g.data_ptr()
    np.testing.assert_array_equal(host(G), gref)


@needs_torch_gpu
def test_misaligned_device_data_is_refused(init_device):
    # See Note [misaligned device data]: a complex64 at a 4-byte boundary would fault in any kernel
    # (a copy kernel too), so both protocols refuse it with ValueError instead of copying.
    t = torch.zeros(32, device="cuda")
    cai = dict(t.__cuda_array_interface__, data=(t.data_ptr() + 4, False), typestr="<c8",
               shape=(4,), strides=None)
    with pytest.raises(ValueError, match="not aligned"):
        q.from_dlpack(CAIProducer(cai))
    # a DLPack producer over the same misaligned device address
    fake = types.SimpleNamespace(ctypes=types.SimpleNamespace(data=t.data_ptr() + 4),
                                 dtype=np.dtype(np.complex64), itemsize=8, shape=(4,),
                                 strides=(8,))
    p = Producer(fake)
    p.device = (kDLCUDA, 0)
    with pytest.raises(ValueError, match="not aligned"):
        q.from_dlpack(p)
    # aligned data at an offset still shares
    ok = dict(cai, data=(t.data_ptr() + 8, False))
    B = q.from_dlpack(CAIProducer(ok))
    assert device_address(B) == t.data_ptr() + 8
