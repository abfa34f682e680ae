# PyTorch interop: torch.from_dlpack <-> q.from_dlpack, q.torch.to_tensor/from_tensor, operands.
import gc

import numpy as np
import pytest

import isthmus as q
from memory_helpers import address

torch = pytest.importorskip("torch")

TORCH_DTYPES = {
    "bool": torch.bool, "int8": torch.int8, "int16": torch.int16, "int32": torch.int32,
    "int64": torch.int64, "uint8": torch.uint8, "uint16": torch.uint16,
    "uint32": torch.uint32, "uint64": torch.uint64, "float16": torch.float16,
    "bfloat16": torch.bfloat16, "float32": torch.float32, "float64": torch.float64,
    "complex64": torch.complex64, "complex128": torch.complex128,
}

rng = np.random.default_rng(7)


def random_tensor(dtype, shape=(3, 4)):
    """A random torch tensor of `dtype` (a key of TORCH_DTYPES) and its float64/complex copy."""
    if dtype == "bool":
        ref = rng.random(shape) < 0.5
    elif dtype.startswith(("int", "uint")):
        ref = rng.integers(0, 100, size=shape).astype(np.float64)
    else:
        ref = rng.standard_normal(shape)
        if dtype.startswith("complex"):
            ref = ref + 1j * rng.standard_normal(shape)
    t = torch.from_numpy(np.ascontiguousarray(ref)).to(TORCH_DTYPES[dtype])
    return t


def as_numpy(x):
    """A float64/complex128/bool NumPy copy of a torch tensor or qvalue (bfloat16 included)."""
    if isinstance(x, torch.Tensor):
        if x.dtype == torch.bool:
            return x.numpy().copy()
        if x.is_complex():
            return x.to(torch.complex128).numpy().copy()
        return x.to(torch.float64).numpy().copy()
    if x.dtype == "bfloat16":
        return x.astype("float64").to_py()
    out = x.to_py()
    return out if out.dtype.kind in "bc" else out.astype(np.float64)


@pytest.mark.parametrize("dtype", list(TORCH_DTYPES))
def test_torch_to_isthmus_every_dtype(dtype):
    t = random_tensor(dtype)
    A = q.from_dlpack(t)
    assert address(A) == t.data_ptr() and A.shape == tuple(t.shape)
    assert str(A.dtype) == dtype
    np.testing.assert_array_equal(as_numpy(A), as_numpy(t))
    # isthmus -> torch
    A[0, 1] = q.value(np.ones(()), dtype=dtype)
    assert as_numpy(t)[0, 1] == 1
    # torch -> isthmus
    t[2, 3] = 0
    assert as_numpy(A)[2, 3] == 0


@pytest.mark.parametrize("dtype", list(TORCH_DTYPES))
def test_isthmus_to_torch_every_dtype(dtype):
    A = q.value(as_numpy(random_tensor(dtype)), dtype=dtype)
    t = torch.from_dlpack(A)
    assert t.data_ptr() == address(A) and t.dtype == TORCH_DTYPES[dtype]
    np.testing.assert_array_equal(as_numpy(t), as_numpy(A))
    t[1, 1] = 1
    assert as_numpy(A)[1, 1] == 1
    A[0, 0] = q.value(np.zeros(()), dtype=dtype)
    assert as_numpy(t)[0, 0] == 0
    assert A._pinned_to() == q.MEMRESOURCE_CPU
    del t
    gc.collect()
    assert A._pinned_to() == -1  # torch called the deleter when its tensor died


def test_non_contiguous_torch_tensors():
    base = torch.randn(6, 8, dtype=torch.float64)
    for view in (base.t(), base[::2, 1::3], base[1:, :5].t(), base[:, 2], base.unsqueeze(1)):
        A = q.from_dlpack(view)
        assert address(A) == view.data_ptr()
        np.testing.assert_array_equal(A.to_py(), view.numpy())
    T = q.from_dlpack(base.t())
    T[0, 1] = 42.0  # base[1, 0]
    assert base[1, 0] == 42.0
    # broadcast (zero strides) from torch.expand
    row = torch.arange(4, dtype=torch.float32)
    E = q.from_dlpack(row.expand(3, 4))
    assert address(E) == row.data_ptr()
    np.testing.assert_array_equal(E.to_py(), np.broadcast_to(row.numpy(), (3, 4)))
    row[2] = -1
    assert (E.to_py()[:, 2] == -1).all()


def test_non_contiguous_qvalues_to_torch():
    x = rng.standard_normal((6, 8))
    A = q.from_py(x.T)
    t = torch.from_dlpack(A)
    assert t.data_ptr() == x.ctypes.data and t.stride() == (1, 8)
    S = A[1::2, ::3]
    s = torch.from_dlpack(S)
    assert s.data_ptr() == address(S) and s.stride() == (2, 24)
    np.testing.assert_array_equal(s.numpy(), x.T[1::2, ::3])
    s[0, 0] = 7.0
    assert x[0, 1] == 7.0
    base = rng.standard_normal(4).astype(np.float32)
    B = q.from_py(np.lib.stride_tricks.as_strided(base, shape=(3, 4), strides=(0, 4)))
    b = torch.from_dlpack(B)
    assert b.stride() == (0, 1) and b.data_ptr() == base.ctypes.data
    # negative strides: torch cannot take them, so the export is a copy (never a crash)
    R = q.from_py(x)[::-1, :]
    r = torch.from_dlpack(R)
    np.testing.assert_array_equal(r.numpy(), x[::-1, :])
    assert r.data_ptr() != address(R)


def test_0d_and_empty():
    z = torch.tensor(2.5, dtype=torch.float64)
    Z = q.from_dlpack(z)
    assert Z.shape == () and float(Z) == 2.5 and address(Z) == z.data_ptr()
    zt = torch.from_dlpack(Z)
    assert zt.shape == () and zt.item() == 2.5
    e = torch.empty(0, 3)
    E = q.from_dlpack(e)
    assert E.shape == (0, 3) and E.dtype == np.float32
    et = torch.from_dlpack(q.zeros(2, 0))
    assert et.shape == (2, 0)
    st = torch.from_dlpack(q.value(3.0))  # a scalar value: a 0-d copy
    assert st.shape == () and st.item() == 3.0


@pytest.mark.skipif(not hasattr(torch.Tensor, "__dlpack_c_exchange_api__"),
                    reason="this torch has no DLPack exchange table")
def test_torch_tensors_cross_through_the_exchange_table(monkeypatch):
    # See Note [dlpack exchange api]: torch's C table, not its Python __dlpack__/__dlpack_device__
    def refuse(*args, **kwargs):
        raise AssertionError("__dlpack__ was called")

    monkeypatch.setattr(torch.Tensor, "__dlpack__", refuse)
    monkeypatch.setattr(torch.Tensor, "__dlpack_device__", refuse)
    t = torch.randn(4, 6)[:, ::2]
    A = q.from_dlpack(t)
    assert address(A) == t.data_ptr() and A.shape == (4, 3)
    np.testing.assert_array_equal(A.to_py(), t.numpy())
    B = q.value(np.ones((4, 3), np.float32))
    np.testing.assert_allclose((B + t).to_py(), 1 + t.numpy())
    P = q.from_dlpack(torch.nn.Parameter(torch.ones(2), requires_grad=False))  # a subclass
    np.testing.assert_array_equal(P.to_py(), [1.0, 1.0])
    with pytest.raises(BufferError, match="requires grad"):  # checked before the table
        q.from_dlpack(torch.ones(2, requires_grad=True))
    with pytest.raises(BufferError, match="meta"):  # torch's RuntimeError, first line kept
        q.from_dlpack(torch.empty(3, device="meta"))


def test_generic_path_for_other_tensor_types():
    # subclasses and tensors with the conjugate bit cross too (Note [inbound rule])
    p = torch.nn.Parameter(torch.randn(3, 2), requires_grad=False)
    P = q.from_dlpack(p)
    assert address(P) == p.data_ptr()
    np.testing.assert_array_equal(P.to_py(), p.detach().numpy())
    c = torch.randn(3, dtype=torch.complex64)
    # See Note [inbound rule]: a conjugate view is resolved into a copy wherever it crosses (as
    # q.torch.from_tensor and C++ from_py<tensor> always did); copy=False refuses
    np.testing.assert_array_equal(q.from_dlpack(c.conj()).to_py(), np.conj(c.numpy()))
    np.testing.assert_allclose((q.value([1, 2, 3]) + c.conj()).to_py(),
                               np.array([1, 2, 3]) + np.conj(c.numpy()), rtol=1e-6)
    with pytest.raises(ValueError, match="conjugate"):
        q.from_dlpack(c.conj(), copy=False)
    R = q.from_dlpack(c.conj().resolve_conj())
    np.testing.assert_array_equal(R.to_py(), np.conj(c.numpy()))


def test_copy_keywords():
    t = torch.randn(4, 3)
    C = q.from_dlpack(t, copy=True)
    assert address(C) != t.data_ptr()
    np.testing.assert_array_equal(C.to_py(), t.numpy())
    S = q.from_dlpack(t, copy=False)
    assert address(S) == t.data_ptr()
    A = q.value(rng.standard_normal((2, 2)))
    tc = torch.from_dlpack(A, copy=True)
    assert tc.data_ptr() != address(A)
    np.testing.assert_array_equal(tc.numpy(), A.to_py())


def test_requires_grad_is_refused_with_a_clear_message():
    w = torch.randn(3, requires_grad=True)
    A = q.value([1.0, 2.0, 3.0])
    for f in (lambda: q.from_dlpack(w), lambda: q.asvalue(w), lambda: q.from_py(w),
              lambda: q.value(w), lambda: A + w, lambda: A[w]):
        with pytest.raises(BufferError, match="requires grad.*detach"):
            f()
    np.testing.assert_array_equal(A.to_py(), [1.0, 2.0, 3.0])
    D = q.from_dlpack(w.detach())  # shares memory
    assert address(D) == w.data_ptr()


def test_torch_tensors_wherever_a_qvalue_is():
    t = torch.randn(3, 4, dtype=torch.float64)
    t2 = torch.randn(3, 4, dtype=torch.float64)
    ref, ref2 = t.numpy().copy(), t2.numpy().copy()
    V = q.value(t)  # value() copies
    assert address(V) != t.data_ptr()
    np.testing.assert_allclose((V + t2).to_py(), ref + ref2)
    A = q.from_py(t)  # from_py shares
    assert address(A) == t.data_ptr()
    assert address(q.from_py(t, copy=True)) != t.data_ptr()
    assert address(q.asvalue(t)) == t.data_ptr()
    np.testing.assert_allclose((A + t).to_py(), ref + ref)
    np.testing.assert_allclose((A * t2 - t).to_py(), ref * ref2 - ref)
    np.testing.assert_allclose((A @ t2.T).to_py(), ref @ ref2.T)
    A += t2  # in place, through the shared memory
    np.testing.assert_allclose(t.numpy(), ref + ref2)
    # bfloat16 crosses without NumPy (which has no bfloat16)
    b = torch.randn(5).to(torch.bfloat16)
    B = q.value(b)
    assert B.dtype == "bfloat16"
    np.testing.assert_array_equal(B.astype("float64").to_py(), b.double().numpy())
    # index tensors
    idx = torch.tensor([2, 0])
    np.testing.assert_array_equal(q.value(ref)[idx].to_py(), ref[[2, 0]])
    mask = torch.tensor([True, False, True])
    np.testing.assert_array_equal(q.value(ref)[mask].to_py(), ref[[0, 2]])
    C = q.value(ref)
    C[torch.tensor(1)] = 0.0
    assert (C.to_py()[1] == 0).all()


def test_torch_on_the_left():
    t = torch.ones(3, dtype=torch.float64)
    A = q.value([1.0, 2.0, 3.0], dtype="float64")
    r = t + A
    np.testing.assert_allclose(np.asarray(r, dtype=np.float64), [2.0, 3.0, 4.0])


def test_lifetimes():
    # a qvalue outliving its source tensor
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    A = q.from_dlpack(t)
    del t
    gc.collect()
    junk = [torch.full((3, 4), -1.0) for _ in range(8)]
    np.testing.assert_array_equal(A.to_py(), np.arange(12.0).reshape(3, 4))
    # a torch view outliving its qvalue
    B = q.value(np.arange(6.0))
    tb = torch.from_dlpack(B)
    del B
    gc.collect()
    junk += [q.value(np.full(6, -1.0)) for _ in range(8)]
    np.testing.assert_array_equal(tb.numpy(), np.arange(6.0))
    tb += 1
    np.testing.assert_array_equal(tb.numpy(), np.arange(6.0) + 1)
    # round trip: torch -> isthmus -> torch is one buffer
    t = torch.randn(4)
    t2 = torch.from_dlpack(q.from_dlpack(t))
    assert t2.data_ptr() == t.data_ptr()
    t2[0] = 99
    assert t[0] == 99


def test_non_cpu_tensors_are_refused():
    meta = torch.empty(3, device="meta")
    with pytest.raises(BufferError, match="meta"):  # torch has no DLPack device for "meta"
        q.from_dlpack(meta)
    if not q.cuda_available():
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            q.from_dlpack(torch.ones(2), device="cuda")


# CUDA tensors (shared on the device, stream rules): tests/python/py_boundary/test_dlpack_cuda.py


# ---- q.torch.to_tensor / from_tensor ----


def test_to_tensor_and_from_tensor_share_memory():
    A = q.value(rng.standard_normal((3, 5)), dtype="float32")
    t = q.torch.to_tensor(A)
    assert isinstance(t, torch.Tensor) and t.data_ptr() == address(A)
    assert t.dtype == torch.float32 and tuple(t.shape) == (3, 5)
    t[0, 0] = 5.0
    assert A.to_py()[0, 0] == 5.0
    B = q.torch.from_tensor(t)
    assert address(B) == t.data_ptr()
    B[1, 1] = -3.0
    assert t[1, 1] == -3.0
    assert q.torch.to_tensor(A, device="cpu").data_ptr() == address(A)
    assert q.torch.to_tensor(A, device=torch.device("cpu")).data_ptr() == address(A)


def test_to_tensor_and_from_tensor_copy():
    A = q.value(rng.standard_normal((2, 3)))
    t = q.torch.to_tensor(A, copy=True)
    assert t.data_ptr() != address(A)
    np.testing.assert_array_equal(t.numpy(), A.to_py())
    t2 = torch.randn(2, 2)
    B = q.torch.from_tensor(t2, copy=True)
    assert address(B) != t2.data_ptr()
    np.testing.assert_array_equal(B.to_py(), t2.numpy())
    # another device: a copy made by torch ("meta" exists without a GPU)
    m = q.torch.to_tensor(A, device="meta")
    assert m.device.type == "meta" and tuple(m.shape) == (2, 3)


def test_to_tensor_accepts_arrays_and_scalars():
    x = rng.standard_normal(4)
    t = q.torch.to_tensor(x)  # via q.asvalue: shares the NumPy array
    assert t.data_ptr() == x.ctypes.data
    s = q.torch.to_tensor(q.value(2.0))
    assert s.shape == () and s.item() == 2.0


def test_from_tensor_detaches_and_resolves():
    w = torch.randn(4, requires_grad=True)
    W = q.torch.from_tensor(w)  # the PyQuasar manual's pattern: parameters inside autograd.Function
    assert address(W) == w.data_ptr()
    np.testing.assert_array_equal(W.to_py(), w.detach().numpy())
    c = torch.randn(3, dtype=torch.complex64)
    C = q.torch.from_tensor(c.conj())  # conjugate bit: resolved (a copy)
    np.testing.assert_array_equal(C.to_py(), np.conj(c.numpy()))
    n = torch.randn(3, dtype=torch.complex64)
    N = q.torch.from_tensor(torch._neg_view(n))
    np.testing.assert_array_equal(N.to_py(), -n.numpy())


def test_autograd_function_with_isthmus_forward():
    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            y = q.torch.from_tensor(x) * q.torch.from_tensor(w)
            return q.torch.to_tensor(y)

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            G = q.torch.from_tensor(g)
            return (q.torch.to_tensor(G * q.torch.from_tensor(w)),
                    q.torch.to_tensor(G * q.torch.from_tensor(x)))

    x = torch.randn(5, dtype=torch.float64, requires_grad=True)
    w = torch.randn(5, dtype=torch.float64, requires_grad=True)
    y = Scale.apply(x, w)
    y.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), (x * w).detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), w.detach().numpy())
    np.testing.assert_allclose(w.grad.numpy(), x.detach().numpy())


def test_torch_helpers_bad_inputs():
    A = q.value([1.0, 2.0])
    with pytest.raises(TypeError, match="torch.Tensor"):
        q.torch.from_tensor(np.zeros(3))
    with pytest.raises(TypeError, match="copy must be"):
        q.torch.from_tensor(torch.zeros(2), copy=None)
    with pytest.raises(TypeError, match="copy must be"):
        q.torch.to_tensor(A, copy="yes")
    with pytest.raises(TypeError, match="tensor or scalar"):
        q.torch.to_tensor(q.value("text"))
    with pytest.raises((RuntimeError, ValueError, TypeError)):
        q.torch.to_tensor(A, device="no-such-device")
    np.testing.assert_array_equal(A.to_py(), [1.0, 2.0])


def test_torch_helpers_without_torch(run_python):
    res = run_python(
        """
        import sys
        sys.modules["torch"] = None  # makes `import torch` fail
        import isthmus as q
        q.init("cpu")
        try:
            q.torch.to_tensor(q.value([1.0]))
        except ImportError as e:
            print("ImportError:", e)
        """
    )
    assert "ImportError: isthmus.torch needs PyTorch" in res.stdout
