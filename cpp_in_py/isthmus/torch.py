"""PyTorch exchange: ``q.torch.to_tensor`` and ``q.torch.from_tensor`` (docs/interop.md), and
plugins as torch.library custom ops: ``q.torch.custom_op``, ``q.torch.kernel_op`` (docs/torch.md).

The PyQuasar helpers of the same names copied through ``lock``/``memcpy``; these share memory
through DLPack instead, so both directions are zero-copy by default:

    import isthmus as q
    t = q.torch.to_tensor(A)        # a torch.Tensor viewing A's memory
    B = q.torch.from_tensor(t)      # a qvalue viewing t's memory

PyTorch is imported on first use only; without it these functions raise ImportError.
"""

from __future__ import annotations

from typing import Any

from . import _isthmus

__all__ = ["to_tensor", "from_tensor", "custom_op", "kernel_op"]


def _torch() -> Any:
    """The torch module, or ImportError saying that these helpers need it."""
    try:
        import torch
    except ImportError as e:
        raise ImportError(
            "isthmus.torch needs PyTorch, which could not be imported "
            f"({e}); install it (pip install torch) to use to_tensor/from_tensor"
        ) from e
    return torch


def _check_copy(copy: Any, fn: str) -> None:
    if not isinstance(copy, bool):
        raise TypeError(f"{fn}: copy must be True or False, got {type(copy).__name__}")


def _consumer_stream(torch: Any, index: int) -> int:
    """torch's current stream on CUDA device ``index`` as a DLPack stream number (1: legacy)."""
    handle = torch.cuda.current_stream(index).cuda_stream
    return 1 if handle == 0 else handle


def to_tensor(A: Any, device: Any = None, copy: bool = False) -> Any:
    """A ``torch.Tensor`` holding the tensor (or scalar) value ``A``.

    A may be a qvalue or anything ``q.asvalue`` accepts (a NumPy array, a list, ...).
    device: None shares the data where it is (``A.__dlpack_device__()``: a CUDA tensor for a
      value located on a GPU, a CPU tensor otherwise). "cpu" or "cuda[:n]" (or a torch.device)
      shares the data on that device: A's storage is pinned there (moved there first when it
      lives elsewhere, so A and the tensor stay one buffer). Only a storage already pinned to
      another device (e.g. A wraps a NumPy array, or is shared with NumPy right now) is copied.
      Other torch devices get a copy made by ``Tensor.to``, and so does "cuda" when isthmus has
      no usable CUDA (``q.cuda_available()`` is False).
    copy: False (default) shares A's memory: writes on either side show on the other, and
      A's storage stays pinned to the tensor's device while the tensor lives. True returns a
      copy of its own. As in ``torch.Tensor.to``, copy=False does not forbid the copy that a
      device change needs.
    CUDA work is ordered by the DLPack stream rules: torch's current stream waits (on the GPU,
    through an event) for isthmus's work on the data; later writes need a synchronisation.
    """
    torch = _torch()
    _check_copy(copy, "to_tensor")
    target = None if device is None else torch.device(device)
    value = A if isinstance(A, _isthmus.qvalue) else _isthmus.asvalue(A)
    if value.kind not in ("tensor", "scalar"):
        raise TypeError(f"to_tensor: expected a tensor or scalar value, got a {value.kind}")
    if target is None:
        return torch.from_dlpack(value, copy=True) if copy else torch.from_dlpack(value)
    if target.type not in ("cpu", "cuda") or (
            target.type == "cuda" and not _isthmus.cuda_available()):
        # a device isthmus does not hold data on: torch copies (Tensor.to)
        return torch.from_dlpack(value).to(target)
    if target.type == "cpu":
        dl_device, stream = (1, 0), None
    else:
        index = torch.cuda.current_device() if target.index is None else target.index
        dl_device, stream = (2, index), _consumer_stream(torch, index)
    # A legacy capsule: torch reads it directly (the stream handshake happened in __dlpack__).
    cap = value.__dlpack__(stream=stream, dl_device=dl_device, copy=True if copy else None)
    return torch.utils.dlpack.from_dlpack(cap)


def from_tensor(t: Any, copy: bool = False) -> Any:
    """A qvalue holding the ``torch.Tensor`` ``t``.

    copy: False (default) shares t's memory (any dtype, any strides, 0-d and empty tensors
      included, CPU and CUDA tensors): writes on either side show on the other, and the qvalue
      keeps t's memory alive. True gives a qvalue with memory of its own, on t's device.
    The result is outside autograd: t is detached first (as PyQuasar's from_tensor read the
    storage), so tensors that require grad are accepted and gradients do not flow through
    isthmus ops. Tensors with the conjugate or negative bit set are resolved (a copy).
    CUDA tensors are shared on their device (isthmus's stream waits for torch's current
    stream through an event: the DLPack stream rules); when this isthmus has no usable CUDA
    (``q.cuda_available()`` is False) they are copied to the CPU instead.
    """
    torch = _torch()
    _check_copy(copy, "from_tensor")
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"from_tensor: expected a torch.Tensor, got {type(t).__name__}")
    t = t.detach()
    made_copy = False
    if t.device.type == "cuda" and not _isthmus.cuda_available():
        t, made_copy = t.cpu(), True
    elif t.device.type not in ("cpu", "cuda"):
        t, made_copy = t.cpu(), True
    if t.is_conj():
        t, made_copy = t.resolve_conj(), True
    if t.is_neg():
        t, made_copy = t.resolve_neg(), True
    return _isthmus.from_dlpack(t, copy=True if copy and not made_copy else None)


from .torch_ops import custom_op, kernel_op  # noqa: E402  (See Note [plugins as custom ops])
