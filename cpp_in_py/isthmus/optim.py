"""Optimizers with torch.optim's names and update rules: SGD (momentum, nesterov, weight decay),
Adam and AdamW.

    opt = q.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    opt.zero_grad(); loss.backward(); opt.step()

Updates run under q.no_grad() and write the parameters in place (docs/autograd.md).
"""

from __future__ import annotations

import math
from typing import Any, Iterable

from . import _isthmus as _q
from .autograd import no_grad


class Optimizer:
    """Holds parameter groups (dicts with "params" and the hyperparameters) and per-parameter
    state."""

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self.defaults = dict(defaults)
        self.state: dict[int, dict[str, Any]] = {}
        self.param_groups: list[dict[str, Any]] = []
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, group: dict[str, Any]) -> None:
        group = dict(group)
        group["params"] = list(group["params"])
        for p in group["params"]:
            if not isinstance(p, _q.qvalue) or not p.requires_grad:
                raise ValueError("optimizers take tensors that require grad (parameters), got "
                                 f"{type(p).__name__}" + ("" if not isinstance(p, _q.qvalue)
                                                          else " that does not require grad"))
            if not p.is_leaf:
                raise ValueError("optimizers take leaf tensors, not results of recorded ops")
        for k, v in self.defaults.items():
            group.setdefault(k, v)
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for g in self.param_groups:
            for p in g["params"]:
                if set_to_none or p.grad is None:
                    p.grad = None
                else:
                    p.grad = _q.zeros_like(p.grad)

    def _state(self, p: Any) -> dict[str, Any]:
        return self.state.setdefault(id(p), {})

    def step(self) -> None:
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        self._update(p, p.grad, group, self._state(p))

    def _update(self, p: Any, g: Any, group: dict[str, Any], state: dict[str, Any]) -> None:
        raise NotImplementedError

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for k in sorted(g):
                if k != "params":
                    lines.append(f"    {k}: {g[k]}")
        return "\n".join(lines) + "\n)"


def _check(name: str, value: float, low: float = 0.0) -> None:
    if not value >= low:
        raise ValueError(f"invalid {name}: {value}")


class SGD(Optimizer):
    """p -= lr * g, with g = grad + weight_decay * p, momentum buffers (dampening) and Nesterov
    momentum, as torch.optim.SGD."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False) -> None:
        _check("learning rate", lr)
        _check("momentum", momentum)
        _check("weight_decay", weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum needs a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov))

    def _update(self, p: Any, g: Any, group: dict[str, Any], state: dict[str, Any]) -> None:
        wd, mom = group["weight_decay"], group["momentum"]
        if wd:
            g = g + wd * p
        if mom:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = _q.copy(g)
            else:
                buf *= mom
                buf += (1 - group["dampening"]) * g
            g = g + mom * buf if group["nesterov"] else buf
        p -= group["lr"] * g


class Adam(Optimizer):
    """Adam (Kingma and Ba) with torch's bias correction; weight_decay adds wd * p to the
    gradient (L2), as torch.optim.Adam."""

    _decoupled = False

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0) -> None:
        _check("learning rate", lr)
        _check("epsilon", eps)
        _check("weight_decay", weight_decay)
        if not (0.0 <= betas[0] < 1.0 and 0.0 <= betas[1] < 1.0):
            raise ValueError(f"invalid betas: {betas}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay))

    def _update(self, p: Any, g: Any, group: dict[str, Any], state: dict[str, Any]) -> None:
        lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        if wd and self._decoupled:
            p *= 1 - lr * wd
        elif wd:
            g = g + wd * p
        if not state:
            state["step"] = 0
            state["exp_avg"] = _q.zeros_like(p)
            state["exp_avg_sq"] = _q.zeros_like(p)
        state["step"] += 1
        t = state["step"]
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m *= b1
        m += (1 - b1) * g
        v *= b2
        v += (1 - b2) * (g * g)
        bc1 = 1 - b1 ** t
        bc2 = 1 - b2 ** t
        denom = _q.sqrt(v) / math.sqrt(bc2) + eps
        p -= (lr / bc1) * (m / denom)


class AdamW(Adam):
    """Adam with decoupled weight decay (p *= 1 - lr * weight_decay before the step), as
    torch.optim.AdamW; weight_decay defaults to 0.01."""

    _decoupled = True

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2) -> None:
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)


__all__ = ["Optimizer", "SGD", "Adam", "AdamW"]
