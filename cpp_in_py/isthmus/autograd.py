"""PyTorch autograd from plugin functions: a forward/backward pair as a torch.autograd.Function.

    Mapping = q.autograd.function(q.mapping_forward, q.mapping_backward, differentiable=(0,))
    y = Mapping.apply(w, x)          # forward: mapping_forward(w, x)
    y.sum().backward()               # backward: mapping_backward(w, x, grad_y) -> dL/dw

Tensors reach the plugin and its results come back without copies, on the CPU and on CUDA
(DLPack both ways: Note [plugins as custom ops] in torch_ops.py); results take the input's dtype
and device. For torch.compile, q.torch.custom_op makes the same pair a custom op instead.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from .torch_ops import _native_args, _to_torch


def _result(v: Any, inputs: Sequence[Any], like: Any, fn: str) -> Any:
    return _to_torch(v, inputs, fn).to(device=like.device, dtype=like.dtype)


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

    fname = getattr(forward, "__name__", "forward")
    bname = getattr(backward, "__name__", "backward")

    def fwd(ctx: Any, *inputs: Any) -> Any:
        ctx.save_for_backward(*[i for i in inputs if isinstance(i, torch.Tensor)])
        ctx.inputs = inputs
        like = next(i for i in inputs if isinstance(i, torch.Tensor))
        return _result(forward(*_native_args(inputs)), inputs, like, fname)

    def bwd(ctx: Any, grad_output: Any) -> Any:
        inputs = ctx.inputs
        args = (*inputs, grad_output)  # strided or broadcast: the plugin reads it in place
        grads = backward(*_native_args(args))
        if len(diff) == 1 or not isinstance(grads, tuple):
            grads = (grads,)
        out: list[Any] = [None] * len(inputs)
        for i, g in zip(diff, grads):
            if ctx.needs_input_grad[i]:
                out[i] = _result(g, args, inputs[i], bname)
        return tuple(out)

    cls_name = name or f"{getattr(forward, '__name__', 'native')}_function"
    return type(
        cls_name,
        (torch.autograd.Function,),
        {"forward": staticmethod(fwd), "backward": staticmethod(bwd), "__doc__": function.__doc__},
    )


__all__ = ["function"]
