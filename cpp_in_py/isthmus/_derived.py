"""The backward pass of a generic plugin function, for q.autograd.function and q.torch.custom_op.

A function registered with ip::generic<...>(...) comes with `<name>_vjp`, derived from it
(Note [derived backward] in isthmus/plugin/derive.hpp); its native_function's `vjp` attribute is
that function, None for a function registered with concrete types.
"""
from __future__ import annotations

from typing import Any, Callable

from . import _isthmus

_FLOAT_DTYPES = ("float32", "float64", "any")


def derived_backward(forward: Any, diff: tuple[int, ...], where: str) -> Callable[..., Any]:
    """backward(*inputs, *grad_outputs) -> the gradients of the inputs at positions `diff` (one
    value, or a tuple in that order), from forward's derived vector-Jacobian product. TypeError
    when forward has none or a position names a parameter that cannot be differentiated."""
    name = getattr(forward, "__name__", type(forward).__name__)
    vjp = forward.vjp if isinstance(forward, _isthmus.native_function) else None
    if vjp is None:
        kind = ("a plugin function registered with concrete types, or whose result is no "
                "tensor or number of its element type"
                if isinstance(forward, _isthmus.native_function) else "not a plugin function")
        raise TypeError(f"{where}: {name} has no derived backward ({kind}); register it with "
                        f"ip::generic<float, double>(...) to derive one, or pass backward= "
                        f"(docs/autograd.md, 'Differentiating plugin code')")
    overloads = forward.overloads
    overloads = (overloads,) if isinstance(overloads, dict) else overloads
    for i in diff:
        for o in overloads:
            params = o["params"]
            p = params[i] if i < len(params) else None
            if p is not None and (p["kind"] not in ("tensor", "float")
                                  or p["dtype"] not in _FLOAT_DTYPES):
                raise TypeError(f"{where}: parameter {i} ({p['name']}: {p['type_name']}, "
                                f"{p['dtype']}) of {name} is not differentiable: only tensors "
                                f"and numbers of the element type are")

    def backward(*args: Any) -> Any:
        grads = vjp(*args)
        picked = []
        for i in diff:
            if i >= len(grads) or grads[i] is None:
                raise TypeError(f"{where}: {vjp.__name__} gives no gradient for input {i}: it "
                                f"is not a tensor or number of the element type")
            picked.append(grads[i])
        return picked[0] if len(picked) == 1 else tuple(picked)

    backward.__name__ = vjp.__name__
    backward.__qualname__ = vjp.__name__
    return backward
