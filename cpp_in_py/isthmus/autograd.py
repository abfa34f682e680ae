"""Autograd: isthmus's own reverse mode (grad mode, grad) and torch.autograd.Function from plugins.

isthmus records the ops of tensors that require grad and differentiates them itself
(docs/autograd.md): q.value(x, requires_grad=True), loss.backward(), x.grad, q.no_grad(),
q.autograd.grad(outputs, inputs). The rest of this module meets torch's autograd:


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

import functools
import inspect
from typing import Any, Callable, Sequence

from ._derived import derived_backward
from .torch_results import _native_args, _to_torch, differentiable_positions
from . import _isthmus


class _grad_mode:
    """Sets grad mode for a `with` block or a decorated function, restoring it after."""

    _mode = True

    def __init__(self, orig_func: Callable[..., Any] | None = None) -> None:
        self._prev: list[bool] = []
        if orig_func is not None:  # used as @q.no_grad without parentheses
            self._wrapped = self(orig_func)

    def __enter__(self) -> None:
        self._prev.append(_isthmus.is_grad_enabled())
        _isthmus._set_grad_enabled(self._mode)

    def __exit__(self, *exc: Any) -> None:
        _isthmus._set_grad_enabled(self._prev.pop())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        wrapped = self.__dict__.get("_wrapped")
        if wrapped is not None:  # @q.no_grad (no parentheses) calls the function
            return wrapped(*args, **kwargs)
        func = args[0]
        mode = self._mode

        @functools.wraps(func)
        def run(*a: Any, **k: Any) -> Any:
            prev = _isthmus.is_grad_enabled()
            _isthmus._set_grad_enabled(mode)
            try:
                return func(*a, **k)
            finally:
                _isthmus._set_grad_enabled(prev)

        return run


class no_grad(_grad_mode):
    """Turns recording off: ``with q.no_grad():`` or ``@q.no_grad()`` (torch.no_grad)."""

    _mode = False


class enable_grad(_grad_mode):
    """Turns recording on inside a no_grad block (torch.enable_grad)."""

    _mode = True


class set_grad_enabled(_grad_mode):
    """Sets recording on or off: ``with q.set_grad_enabled(False):`` (torch.set_grad_enabled)."""

    def __init__(self, mode: bool) -> None:
        super().__init__()
        self._mode = bool(mode)
        self._prev.append(_isthmus.is_grad_enabled())
        _isthmus._set_grad_enabled(self._mode)  # takes effect at once, as torch's does

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        _isthmus._set_grad_enabled(self._prev.pop())


is_grad_enabled = _isthmus.is_grad_enabled


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool = False,
) -> tuple[Any, ...]:
    """The gradients of `outputs` with respect to `inputs` (torch.autograd.grad): a tuple with
    one entry per input, without touching any .grad. `grad_outputs` is needed for outputs of
    more than one element; `retain_graph` defaults to `create_graph`; an input the outputs do not
    depend on raises RuntimeError unless `allow_unused` (then its entry is None)."""
    if retain_graph is None:
        retain_graph = create_graph
    return _isthmus._autograd_grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                                   allow_unused)


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False) -> None:
    """torch.autograd.backward: backward from several tensors at once."""
    if not isinstance(tensors, (list, tuple)):
        tensors = [tensors]
    if grad_tensors is None:
        grad_tensors = [None] * len(tensors)
    elif not isinstance(grad_tensors, (list, tuple)):
        grad_tensors = [grad_tensors]
    if retain_graph is None:
        retain_graph = create_graph
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        last = i == len(tensors) - 1
        t.backward(g, retain_graph=retain_graph or not last, create_graph=create_graph)


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
    backward: Callable[..., Any] | None = None,
    differentiable: Any = (0,),
    name: str | None = None,
) -> type:
    """A torch.autograd.Function subclass backed by two plugin functions (or Python functions).

    forward(*inputs) computes the output (one tensor, or a tuple of them). backward(*inputs,
    *grad_outputs) returns the gradient of each input listed in `differentiable` (positions, or
    forward's parameter names; one value, or a tuple in that order: std::tuple in a plugin);
    the other inputs get no gradient. Without backward, the one derived from forward is used: a
    plugin function registered with ip::generic<...>(...) has it (forward.vjp). apply() needs at
    least one torch tensor argument, whose dtype and device the results take.
    """
    import torch

    fname = getattr(forward, "__name__", "forward")
    cls_name = name or f"{getattr(forward, '__name__', 'native')}_function"
    for role, f in (("forward", forward), ("backward", backward)):
        if not callable(f) and (role == "forward" or f is not None):
            raise TypeError(f"q.autograd.function: {role} must be a plugin function or a "
                            f"callable, got {type(f).__name__}")
    diff = differentiable_positions(differentiable, _parameter_names(forward),
                                    f"q.autograd.function({fname})")
    if backward is None:
        backward = derived_backward(forward, diff, f"q.autograd.function({fname})")
    bname = getattr(backward, "__name__", "backward")

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


__all__ = ["function", "grad", "backward", "no_grad", "enable_grad", "set_grad_enabled",
           "is_grad_enabled"]
