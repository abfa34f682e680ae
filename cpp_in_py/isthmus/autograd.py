"""PyTorch autograd from plugin functions: a forward/backward pair as a torch.autograd.Function.

    Mapping = q.autograd.function(q.mapping_forward, q.mapping_backward, differentiable=(0,))
    y = Mapping.apply(w, x)          # forward: mapping_forward(w, x)
    y.sum().backward()               # backward: mapping_backward(w, x, grad_y) -> dL/dw

    Mul = q.autograd.function(q.mul, q.mul_backward, differentiable=("w", "x"))
    Mul.apply(w, x).sum().backward() # mul_backward(w, x, grad) -> std::tuple(dL/dw, dL/dx)

Tensors reach the plugin and its results come back without copies, on the CPU and on CUDA
(DLPack both ways: Note [plugins as custom ops] in torch_ops.py); results take the input's dtype
and device. For torch.compile, q.torch.custom_op makes the same pair a custom op instead.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

from .torch_results import _native_args, _to_torch, differentiable_positions


def _result(v: Any, inputs: Sequence[Any], like: Any, fn: str) -> Any:
    return _to_torch(v, inputs, fn).to(device=like.device, dtype=like.dtype)


def _parameter_names(forward: Any) -> list[str] | None:
    """forward's parameter names: a plugin function's (its overloads agreeing on them), a Python
    function's positional ones; None when they are unknown (variadic, differing overloads)."""
    overloads = getattr(forward, "overloads", None)
    if overloads is not None:
        if isinstance(overloads, dict):
            overloads = (overloads,)
        lists = [[p["name"] for p in o["params"] if p["kind"] != "position"]
                 for o in overloads if not o.get("variadic")]
        if len(lists) != len(overloads) or any(n != lists[0] for n in lists):
            return None
        return lists[0]
    try:
        params = inspect.signature(forward).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return None
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def function(
    forward: Callable[..., Any],
    backward: Callable[..., Any],
    differentiable: Any = (0,),
    name: str | None = None,
) -> type:
    """A torch.autograd.Function subclass backed by two plugin functions (or Python functions).

    forward(*inputs) computes the output (one tensor, or a tuple of them). backward(*inputs,
    *grad_outputs) returns the gradient of each input listed in `differentiable` (positions, or
    forward's parameter names; one value, or a tuple in that order: std::tuple in a plugin);
    the other inputs get no gradient. apply() needs at least one torch tensor argument, whose
    dtype and device the results take.
    """
    import torch

    fname = getattr(forward, "__name__", "forward")
    bname = getattr(backward, "__name__", "backward")
    cls_name = name or f"{getattr(forward, '__name__', 'native')}_function"
    for role, f in (("forward", forward), ("backward", backward)):
        if not callable(f):
            raise TypeError(f"q.autograd.function: {role} must be a plugin function or a "
                            f"callable, got {type(f).__name__}")
    diff = differentiable_positions(differentiable, _parameter_names(forward),
                                    f"q.autograd.function({fname})")

    def fwd(ctx: Any, *inputs: Any) -> Any:
        like = next((i for i in inputs if isinstance(i, torch.Tensor)), None)
        if like is None:
            raise TypeError(f"{cls_name}.apply: expected at least one torch tensor argument "
                            f"(the results take its dtype and device), got "
                            f"({', '.join(type(i).__name__ for i in inputs)})")
        if max(diff) >= len(inputs):
            raise ValueError(f"{cls_name}.apply: differentiable={diff} names input {max(diff)}, "
                             f"but {len(inputs)} input(s) were given")
        ctx.save_for_backward(*[i for i in inputs if isinstance(i, torch.Tensor)])
        ctx.inputs = inputs
        result = forward(*_native_args(inputs))
        if isinstance(result, tuple):
            return tuple(_result(r, inputs, like, fname) for r in result)
        return _result(result, inputs, like, fname)

    def bwd(ctx: Any, *grad_outputs: Any) -> Any:
        inputs = ctx.inputs
        args = (*inputs, *grad_outputs)  # strided or broadcast: the plugin reads it in place
        grads = backward(*_native_args(args))
        parts = grads if isinstance(grads, tuple) else (grads,)
        if len(parts) != len(diff):
            raise TypeError(f"{bname}: returned {len(parts)} gradient(s) for the "
                            f"{len(diff)} differentiable input(s) {diff} of {cls_name}")
        out: list[Any] = [None] * len(inputs)
        for i, g in zip(diff, parts):
            if ctx.needs_input_grad[i] and g is not None:
                out[i] = _result(g, args, inputs[i], bname)
        return tuple(out)

    return type(
        cls_name,
        (torch.autograd.Function,),
        {"forward": staticmethod(fwd), "backward": staticmethod(bwd), "__doc__": function.__doc__},
    )


__all__ = ["function"]
