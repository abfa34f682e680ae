"""PyTorch exchange: ``q.torch.to_tensor`` and ``q.torch.from_tensor`` (docs/interop.md).

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

__all__ = ["to_tensor", "from_tensor"]


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


def to_tensor(A: Any, device: Any = None, copy: bool = False) -> Any:
    """A ``torch.Tensor`` holding the tensor (or scalar) value ``A``.

    A may be a qvalue or anything ``q.asvalue`` accepts (a NumPy array, a list, ...).
    device: None or "cpu" keeps the data where it is and shares it (no copy); another device
      (e.g. "cuda", a torch.device) gives a copy there, made by torch.
    copy: False (default) shares A's memory: writes on either side show on the other, and
      A's storage stays pinned to the CPU while the tensor lives. True returns a copy of
      its own. As in ``torch.Tensor.to``, copy=False does not forbid the copy that a device
      change needs.
    """
    torch = _torch()
    _check_copy(copy, "to_tensor")
    target = None if device is None else torch.device(device)
    value = A if isinstance(A, _isthmus.qvalue) else _isthmus.asvalue(A)
    if value.kind not in ("tensor", "scalar"):
        raise TypeError(f"to_tensor: expected a tensor or scalar value, got a {value.kind}")
    on_host = target is None or target.type == "cpu"
    # Note [dlpack cuda]: with a CUDA backend a tensor living on the GPU will be shared with
    # torch there; today isthmus data is in host memory, so another device means a copy.
    t = torch.from_dlpack(value, copy=True) if copy and on_host else torch.from_dlpack(value)
    if not on_host:
        t = t.to(target)
    return t


def from_tensor(t: Any, copy: bool = False) -> Any:
    """A qvalue holding the ``torch.Tensor`` ``t``.

    copy: False (default) shares t's memory (any dtype, any strides, 0-d and empty tensors
      included): writes on either side show on the other, and the qvalue keeps t's memory
      alive. True gives a qvalue with memory of its own.
    The result is outside autograd: t is detached first (as PyQuasar's from_tensor read the
    storage), so tensors that require grad are accepted and gradients do not flow through
    isthmus ops. Tensors with the conjugate or negative bit set are resolved (a copy), and CUDA
    tensors are copied to the CPU (isthmus has no CUDA backend yet).
    """
    torch = _torch()
    _check_copy(copy, "from_tensor")
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"from_tensor: expected a torch.Tensor, got {type(t).__name__}")
    t = t.detach()
    made_copy = False
    if t.device.type != "cpu":
        # Note [dlpack cuda]: shared without a copy once isthmus has a CUDA backend.
        t, made_copy = t.cpu(), True
    if t.is_conj():
        t, made_copy = t.resolve_conj(), True
    if t.is_neg():
        t, made_copy = t.resolve_neg(), True
    return _isthmus.from_dlpack(t, copy=True if copy and not made_copy else None)
