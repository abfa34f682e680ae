# CUDA exchange on a GPU: the stream order of DLPack imports and exports with torch (side streams
# kept busy with torch.cuda._sleep), and the release order of exported and imported memory
# (Note [export release order], Note [import hand-back]).
import gc

import numpy as np
import pytest

import isthmus as q
from dlpack_cuda_helpers import CUDA0, device_address, host, needs_torch_gpu, on_gpu, torch


@needs_torch_gpu
def test_stream_ordering_torch_side_stream_to_isthmus(init_device):
    n = 1 << 22
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        t = torch.empty(n, device="cuda")
        torch.cuda._sleep(50_000_000)  # keeps the side stream busy
        t.fill_(3.0)  # still pending when isthmus imports
        A = q.from_dlpack(t)  # torch makes isthmus's stream wait for the side stream
        S = q.sum(A)
    assert float(S) == 3.0 * n
    t.record_stream(side)


@needs_torch_gpu
def test_stream_ordering_isthmus_to_torch_side_stream(init_device):
    n = 1 << 22
    A, _ = on_gpu("float32", (n,))
    A.fill(0)
    A += 5  # queued on isthmus's stream
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        t = torch.from_dlpack(A)  # the side stream waits for isthmus's stream (an event)
        total = t.sum()
    side.synchronize()
    assert float(total) == 5.0 * n
    # stream=-1: no synchronisation asked; the capsule is valid all the same
    cap = A.__dlpack__(stream=-1, max_version=(1, 0))
    q.cuda_synchronize()
    assert torch.from_dlpack(cap).sum().item() == 5.0 * n
    with pytest.raises(ValueError, match="stream=0"):
        A.__dlpack__(stream=0)
    with pytest.raises(ValueError, match="stream must be"):
        A.__dlpack__(stream=-2)
    for s in (None, 1, 2, side.cuda_stream, q.cuda_stream()):
        u = torch.from_dlpack(A.__dlpack__(stream=s))
        assert u.is_cuda and u.data_ptr() == device_address(A)


@needs_torch_gpu
def test_torch_on_isthmus_stream(init_device):
    A, _ = on_gpu("float32", (1000,))
    A.fill(1)
    with torch.cuda.stream(torch.cuda.ExternalStream(q.cuda_stream())):
        t = torch.from_dlpack(A)
        t.mul_(4)  # in order with isthmus's own work: no synchronisation needed
    B = A + 1
    np.testing.assert_array_equal(host(B), np.full(1000, 5.0))


@needs_torch_gpu
def test_release_waits_for_isthmus_work(init_device):
    t = torch.full((1 << 22,), 2.0, device="cuda")
    A = q.from_dlpack(t)
    B = A * 3  # queued on isthmus's stream, reads t's memory
    del A, t
    gc.collect()
    # torch may reuse the block now (and overwrite it); isthmus's kernel ran before the deleter
    reuse = [torch.zeros(1 << 22, device="cuda") for _ in range(2)]
    torch.cuda.synchronize()
    np.testing.assert_array_equal(host(B), np.full(1 << 22, 6.0))
    del reuse


@needs_torch_gpu
def test_import_hand_back_orders_torch_after_isthmus_without_a_host_wait(init_device):
    # See Note [import hand-back]: when isthmus lets go of a torch tensor imported through torch's
    # exchange table, torch's stream at import time waits (an event) for isthmus's work on it.
    n = 1 << 22
    ours = torch.cuda.ExternalStream(q.cuda_stream())
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        t = torch.zeros(n, device="cuda")
        with torch.cuda.stream(ours):
            torch.cuda._sleep(100_000_000)  # isthmus's stream stays busy
        q.from_dlpack(t).fill(5)  # queued after the sleep; the import is released at once
        assert not ours.query()  # ...and the host did not wait for isthmus's stream
        total = t.sum()  # torch's stream: ordered after the fill by the hand-back
        B = q.from_dlpack(torch.ones(n, device="cuda")) + t  # an op reading t: handed back too
        t.fill_(-1.0)  # torch overwrites t only after that read
    side.synchronize()
    assert float(total) == 5.0 * n
    np.testing.assert_array_equal(host(B), np.full(n, 6.0, np.float32))
    t.record_stream(side)


def _reuse_block_of(n):
    """A new isthmus-owned float32 value of n elements valid only on cuda:0, filled with 7 by a
    kernel on isthmus's stream, and whether its block came from the cache (no new cudaMalloc)."""
    before = q.cuda_memory_info(0)["device_allocations"]
    B = q.value(np.zeros(n, np.float32))
    B.lock(q.LOCK_WRITE, CUDA0)  # takes the freed block back from the cache
    B.unlock(q.LOCK_WRITE, CUDA0)
    B.fill(7)
    return B, q.cuda_memory_info(0)["device_allocations"] == before


@needs_torch_gpu
def test_dlpack_export_release_orders_block_reuse_after_the_consumer(init_device):
    # See Note [export release order]: when torch lets go of an exported tensor while its kernels
    # reading it are still queued, isthmus's stream waits for torch's stream before the freed
    # block is written by isthmus again.
    n = 1 << 22
    A, _ = on_gpu("float32", (n,))
    A.fill(1)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        t = torch.from_dlpack(A)  # the side stream waits for the fill
        torch.cuda._sleep(100_000_000)  # the side stream stays busy
        total = t.sum()  # reads A's block, still queued
    del t  # the deleter: isthmus's stream now waits for the side stream
    del A
    gc.collect()
    B, reused = _reuse_block_of(n)
    assert reused  # B's fill writes the very block torch's sum is about to read
    side.synchronize()
    assert float(total) == float(n)  # so the fill came after the sum
    np.testing.assert_array_equal(host(B), np.full(n, 7.0))


@needs_torch_gpu
def test_cai_export_release_orders_block_reuse_after_the_default_stream(init_device):
    # The array interface names no consumer stream: isthmus's stream waits for the legacy
    # default stream (torch's default stream) when the exporting qvalue dies.
    n = 1 << 22
    A, _ = on_gpu("float32", (n,))
    A.fill(1)
    t = torch.as_tensor(A, device="cuda")  # __cuda_array_interface__, on torch's default stream
    torch.cuda._sleep(100_000_000)
    total = t.sum()
    del t, A
    gc.collect()
    B, reused = _reuse_block_of(n)
    assert reused
    torch.cuda.synchronize()
    assert float(total) == float(n)
    np.testing.assert_array_equal(host(B), np.full(n, 7.0))
