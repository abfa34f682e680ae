"""PyTorch autograd from plugin functions: a forward/backward pair as a torch.autograd.Function.

    Mapping = q.autograd.function(q.mapping_forward, q.mapping_backward, differentiable=(0,))
    y = Mapping.apply(w, x)          # forward: mapping_forward(w, x)
    y.sum().backward()               # backward: mapping_backward(w, x, grad_y) -> dL/dw

Tensors reach the plugin zero-copy (CPU tensors through NumPy), and results come back as
torch tensors of the input's dtype and device.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np


def _to_native(t: Any) -> Any:
    import torch

    if isinstance(t, torch.Tensor):
        return t.detach().cpu().contiguous().numpy()
    return t


def _to_torch(v: Any, like: Any) -> Any:
    import torch

    if isinstance(v, (int, float, complex, bool)):
        return torch.tensor(v, dtype=like.dtype, device=like.device)
    arr = np.array(v, copy=True)  # the plugin's result, owned by torch from here on
    return torch.from_numpy(arr).to(device=like.device, dtype=like.dtype)


def function(
    forward: Callable[..., Any],
    backward: Callable[..., Any],
    differentiable: Sequence[int] = (0,),
    name: str | None = None,
) -> type:
    """A torch.autograd.Function subclass backed by two plugin functions.

    forward(*inputs) computes the output. backward(*inputs, grad_output) returns the gradient
    of each input listed in `differentiable` (one value, or a tuple in that order); the other
    inputs get no gradient.
    """
    import torch

    diff = tuple(int(i) for i in differentiable)

    def fwd(ctx: Any, *inputs: Any) -> Any:
        ctx.save_for_backward(*[i for i in inputs if isinstance(i, torch.Tensor)])
        ctx.inputs = inputs
        like = next(i for i in inputs if isinstance(i, torch.Tensor))
        return _to_torch(forward(*[_to_native(i) for i in inputs]), like)

    def bwd(ctx: Any, grad_output: Any) -> Any:
        inputs = ctx.inputs
        grads = backward(*[_to_native(i) for i in inputs], _to_native(grad_output))
        if len(diff) == 1 or not isinstance(grads, tuple):
            grads = (grads,)
        out: list[Any] = [None] * len(inputs)
        for i, g in zip(diff, grads):
            if ctx.needs_input_grad[i]:
                out[i] = _to_torch(g, inputs[i])
        return tuple(out)

    cls_name = name or f"{getattr(forward, '__name__', 'native')}_function"
    return type(
        cls_name,
        (torch.autograd.Function,),
        {"forward": staticmethod(fwd), "backward": staticmethod(bwd), "__doc__": function.__doc__},
    )


__all__ = ["function"]
