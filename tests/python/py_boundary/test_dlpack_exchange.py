# DLPack's C exchange table (Note [dlpack exchange api]): imports that skip __dlpack__.
import gc

import numpy as np
import pytest

import isthmus as q
from memory_helpers import address
from dlpack_helpers import (READ_ONLY, ExchangeTable, kDLCUDA, kDLOpaqueHandle,
                            exchange_producer)

rng = np.random.default_rng(20261127)


@pytest.fixture(autouse=True)
def cpu():
    q.init("cpu")


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float16", "float32",
                                   "float64", "complex128"])
def test_import_through_the_table_shares_memory(dtype):
    x = (rng.standard_normal((3, 4)) * 10).astype(dtype)
    table = ExchangeTable()
    p = exchange_producer(table, x)
    A = q.from_dlpack(p)
    assert table.exports == 1 and p.calls == []  # __dlpack__ was not called
    assert table.stream_queries == []  # CPU data: no stream to wait for
    assert address(A) == x.ctypes.data
    np.testing.assert_array_equal(A.to_py(), x)
    x.flat[0] = 1
    assert A.to_py().flat[0] == 1
    assert p.deleted == 0
    del A
    gc.collect()
    assert p.deleted == 1  # the producer's deleter ran once, when the last view went


@pytest.mark.parametrize("make", [lambda x: x[::2, 1:], lambda x: x.T, lambda x: x[0, 0],
                                  lambda x: x[:0]])
def test_strided_0d_and_empty(make):
    base = rng.standard_normal((4, 6))
    x = make(base)
    p = exchange_producer(ExchangeTable(), np.asarray(x))
    A = q.from_dlpack(p)
    assert A.shape == np.shape(x)
    np.testing.assert_array_equal(A.to_py(), x)


def test_operators_and_conversions_take_the_table():
    x = rng.standard_normal(5)
    table = ExchangeTable()
    p = exchange_producer(table, x)
    B = q.value(np.arange(5.0))
    np.testing.assert_allclose((B + p).to_py(), np.arange(5.0) + x)
    np.testing.assert_allclose(q.asvalue(p).to_py(), x)
    assert table.exports == 2 and p.calls == []


def test_a_refusal_is_a_buffer_error():
    x = rng.standard_normal(3)
    table = ExchangeTable(refuse=True)
    p = exchange_producer(table, x)
    with pytest.raises(BufferError, match="ExchangeProducer cannot be exported.*no reason"):
        q.from_dlpack(p)
    assert table.exports == 1 and p.calls == [] and p.deleted == 0
    B = q.value(np.zeros(3))
    with pytest.raises(BufferError):
        B + p
    np.testing.assert_array_equal(B.to_py(), np.zeros(3))


def test_the_major_version_1_table_of_a_chain_is_used():
    x = rng.standard_normal(3)
    v1 = ExchangeTable(major=1)
    v2 = ExchangeTable(major=2, older=v1)
    p = exchange_producer(v2, x)
    np.testing.assert_array_equal(q.from_dlpack(p).to_py(), x)
    assert v1.exports == 1 and v2.exports == 0 and p.calls == []
    # a table of another major version alone is not read: __dlpack__ serves
    only_v2 = ExchangeTable(major=2)
    p2 = exchange_producer(only_v2, x)
    np.testing.assert_array_equal(q.from_dlpack(p2).to_py(), x)
    assert only_v2.exports == 0 and len(p2.calls) == 1


def test_device_keyword_asks_the_producer():
    x = rng.standard_normal(3)
    table = ExchangeTable()
    p = exchange_producer(table, x)
    np.testing.assert_array_equal(q.from_dlpack(p, device="cpu").to_py(), x)
    assert table.exports == 0 and len(p.calls) == 1


def test_a_bad_tensor_from_the_table_is_released_with_a_typed_error():
    x = rng.standard_normal(3)
    p = exchange_producer(ExchangeTable(), x)
    p.dtype = (kDLOpaqueHandle, 64, 1)
    with pytest.raises(TypeError, match="opaque handle"):
        q.from_dlpack(p)
    assert p.deleted == 1  # handed back at once
    p.dtype = (2, 64, 1)
    p.shape = (-1,)
    with pytest.raises(ValueError, match="malformed"):
        q.from_dlpack(p)
    assert p.deleted == 2
    np.testing.assert_array_equal(x, p.array)  # untouched


def test_read_only_data_is_copied_or_refused():
    x = rng.standard_normal(4)
    p = exchange_producer(ExchangeTable(), x, flags=READ_ONLY)
    with pytest.raises(ValueError, match="read-only"):
        q.from_dlpack(p, copy=False)
    assert p.deleted == 1
    A = q.from_dlpack(p)  # a copy; the producer's memory goes back at once
    assert address(A) != x.ctypes.data and p.deleted == 2
    np.testing.assert_array_equal(A.to_py(), x)


@pytest.mark.skipif(q.cuda_available(), reason="checks the error without CUDA")
def test_cuda_data_without_cuda_is_released_with_a_clear_error():
    x = rng.standard_normal(3)
    table = ExchangeTable()
    p = exchange_producer(table, x)
    p.device = (kDLCUDA, 0)
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        q.from_dlpack(p)
    assert p.deleted == 1 and table.stream_queries == []
