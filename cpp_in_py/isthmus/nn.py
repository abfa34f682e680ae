"""Neural network building blocks on isthmus's autograd, with torch.nn's names.

    import isthmus as q
    model = q.nn.Sequential(q.nn.Linear(1, 10), q.nn.Sigmoid(), q.nn.Linear(10, 1))
    loss = q.nn.MSELoss()(model(x), y)
    loss.backward()

Parameters are qvalues that require grad (q.nn.Parameter makes one); a Module registers the
parameters and submodules assigned to its attributes, as torch's does (docs/autograd.md).
"""

from __future__ import annotations

import math
import weakref
from collections import OrderedDict
from typing import Any, Iterator

from . import _isthmus as _q
from .autograd import no_grad

# The qvalues made by Parameter(), by id (qvalues are unhashable, as NumPy arrays are).
_parameters: "weakref.WeakValueDictionary[int, Any]" = weakref.WeakValueDictionary()


class _ParameterMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return _parameters.get(id(obj)) is obj


class Parameter(metaclass=_ParameterMeta):
    """A tensor registered as a module parameter: a qvalue leaf that requires grad.

    Parameter(data) shares data's memory when it is a qvalue (as torch.nn.Parameter does) and
    copies anything else (lists, NumPy arrays); floating point dtypes only."""

    def __new__(cls, data: Any = None, requires_grad: bool = True) -> Any:  # type: ignore[misc]
        if data is None:
            data = _q.zeros(0)
        p = data.detach() if isinstance(data, _q.qvalue) else _q.value(data)
        p.requires_grad_(requires_grad)
        _parameters[id(p)] = p
        return p


class Module:
    """Base class of layers and models (torch.nn.Module): assigning a Parameter or a Module to an
    attribute registers it; forward() computes, calling the module runs forward."""

    training: bool

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "training", True)

    # ---- registration ----
    def __setattr__(self, name: str, value: Any) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign before Module.__init__() call")
        for d in (self._parameters, self._modules, self._buffers):
            d.pop(name, None)
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for key in ("_parameters", "_modules", "_buffers"):
            if key in d and name in d[key]:
                return d[key][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for d in (self._parameters, self._modules, self._buffers):
            if name in d:
                del d[name]
                return
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Any) -> None:
        """Adds a parameter (None keeps the name with no parameter, as bias=False does)."""
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"register_parameter: expected a Parameter or None, got "
                            f"{type(param).__name__}")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Any) -> None:
        """Adds a tensor that is state but not a parameter (in state_dict, moved by to())."""
        self._buffers[name] = tensor

    def add_module(self, name: str, module: "Module | None") -> None:
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"add_module: expected a Module, got {type(module).__name__}")
        self._modules[name] = module

    # ---- traversal ----
    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, "Module"]]:
        seen: set[int] = set()
        stack = [(prefix, self)]
        while stack:
            name, m = stack.pop(0)
            if id(m) in seen:
                continue
            seen.add(id(m))
            yield name, m
            for child_name, child in m._modules.items():
                if child is not None:
                    stack.append((f"{name}.{child_name}" if name else child_name, child))

    def modules(self) -> Iterator["Module"]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, "Module"]]:
        for name, m in self._modules.items():
            if m is not None:
                yield name, m

    def children(self) -> Iterator["Module"]:
        for _, m in self.named_children():
            yield m

    def named_parameters(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Any]]:
        seen: set[int] = set()
        mods = self.named_modules(prefix) if recurse else iter([(prefix, self)])
        for name, m in mods:
            for pname, p in m._parameters.items():
                if p is None or id(p) in seen:
                    continue
                seen.add(id(p))
                yield (f"{name}.{pname}" if name else pname), p

    def parameters(self, recurse: bool = True) -> Iterator[Any]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "") -> Iterator[tuple[str, Any]]:
        for name, m in self.named_modules(prefix):
            for bname, b in m._buffers.items():
                if b is not None:
                    yield (f"{name}.{bname}" if name else bname), b

    # ---- state ----
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clears every parameter's .grad (set_to_none=False writes zeros instead)."""
        for p in self.parameters():
            if set_to_none or p.grad is None:
                p.grad = None
            else:
                p.grad = _q.zeros_like(p.grad)

    def train(self, mode: bool = True) -> "Module":
        for m in self.modules():
            object.__setattr__(m, "training", bool(mode))
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def to(self, device: Any = None, dtype: Any = None) -> "Module":
        """Moves (and/or converts) every parameter and buffer, in place of the old ones; make
        optimizers after moving, as with torch."""
        with no_grad():
            for m in self.modules():
                for name, p in list(m._parameters.items()):
                    if p is None:
                        continue
                    moved = _convert(p, device, dtype)
                    if moved is not p:
                        m._parameters[name] = Parameter(moved, p.requires_grad)
                for name, b in list(m._buffers.items()):
                    if b is not None:
                        m._buffers[name] = _convert(b, device, dtype)
        return self

    def state_dict(self) -> "OrderedDict[str, Any]":
        """Every parameter and buffer by dotted name, detached (the same memory)."""
        out: OrderedDict[str, Any] = OrderedDict()
        for name, m in self.named_modules():
            for pname, p in m._parameters.items():
                if p is not None:
                    out[f"{name}.{pname}" if name else pname] = p.detach()
            for bname, b in m._buffers.items():
                if b is not None:
                    out[f"{name}.{bname}" if name else bname] = b
        return out

    def load_state_dict(self, state_dict: Any, strict: bool = True) -> tuple[list[str], list[str]]:
        """Copies the values into the parameters and buffers (shapes must match). With strict,
        missing or unexpected keys raise KeyError and nothing is changed. Returns (missing,
        unexpected)."""
        own = self.state_dict()
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        if strict and (missing or unexpected):
            raise KeyError(f"load_state_dict: missing keys {missing}, unexpected keys "
                           f"{unexpected}")
        for k, target in own.items():
            if k in state_dict:
                src = state_dict[k]
                shape = tuple(_q.size(src)) if isinstance(src, _q.qvalue) else None
                if shape is not None and shape != tuple(target.shape):
                    raise ValueError(f"load_state_dict: {k} has shape {shape}, the module's has "
                                     f"shape {tuple(target.shape)}")
        with no_grad():
            for k, target in own.items():
                if k in state_dict:
                    target[...] = state_dict[k]
        return missing, unexpected

    # ---- calling and printing ----
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} has no forward()")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = []
        for name, m in self._modules.items():
            sub = repr(m).replace("\n", "\n  ")
            lines.append(f"  ({name}): {sub}")
        extra = self.extra_repr()
        if not lines:
            return f"{type(self).__name__}({extra})"
        head = f"{type(self).__name__}(" + (extra + "\n" if extra else "\n")
        return head + "\n".join(lines) + "\n)"


def _convert(t: Any, device: Any, dtype: Any) -> Any:
    out = t
    if dtype is not None:
        out = out.astype(dtype)
    if device is not None and str(device) != out.device:
        out = out.to_device(str(device))
    return out


class Linear(Module):
    """y = x @ weight.T + bias, weight of shape (out_features, in_features); initialised
    uniform in +-1/sqrt(in_features) as torch does."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 dtype: Any = None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        bound = 1.0 / math.sqrt(in_features) if in_features > 0 else 0.0
        self.weight = Parameter(_q.uniform(-bound, bound, (out_features, in_features), dtype))
        if bias:
            self.bias = Parameter(_q.uniform(-bound, bound, (out_features,), dtype))
        else:
            self.register_parameter("bias", None)

    def forward(self, x: Any) -> Any:
        y = x @ self.weight.T
        return y if self.bias is None else y + self.bias

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Sequential(Module):
    """Runs its modules in order: Sequential(a, b, c) or Sequential(OrderedDict(name=module))."""

    def __init__(self, *modules: Any) -> None:
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, m in modules[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(modules):
                self.add_module(str(i), m)

    def forward(self, x: Any) -> Any:
        for m in self._modules.values():
            x = m(x)
        return x

    def __getitem__(self, i: int) -> Module:
        return list(self._modules.values())[i]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())


class ReLU(Module):
    """max(x, 0); the gradient at 0 is 0, as torch's."""

    def forward(self, x: Any) -> Any:
        return _q.where(x > 0, x, 0.0)


class Sigmoid(Module):
    """1 / (1 + exp(-x))."""

    def forward(self, x: Any) -> Any:
        return 1.0 / (1.0 + _q.exp(-x))


class Tanh(Module):
    def forward(self, x: Any) -> Any:
        return _q.tanh(x)


def _reduce(loss: Any, reduction: str) -> Any:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


class _Loss(Module):
    """A loss with torch's `reduction` ('mean', 'sum' or 'none'), checked when it is made."""

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
        self.reduction = reduction

    def extra_repr(self) -> str:
        return "" if self.reduction == "mean" else f"reduction={self.reduction!r}"


class MSELoss(_Loss):
    """The mean (or sum) of (input - target) ** 2."""

    def forward(self, input: Any, target: Any) -> Any:
        if tuple(input.shape) != tuple(_q.size(target)):
            raise ValueError(f"MSELoss: input shape {tuple(input.shape)} and target shape "
                             f"{tuple(_q.size(target))} differ")
        d = input - target
        return _reduce(d * d, self.reduction)


def log_softmax(x: Any, dim: int = -1) -> Any:
    """x - logsumexp(x) along dim, computed stably (the maximum is subtracted first)."""
    shift = x.detach().max(axis=dim, keepdims=True)
    z = x - shift
    return z - _q.log(_q.exp(z).sum(axis=dim, keepdims=True))


class CrossEntropyLoss(_Loss):
    """Cross entropy of logits (N, C) against class indices (N,) or class probabilities (N, C)."""

    def forward(self, input: Any, target: Any) -> Any:
        if input.ndim != 2:
            raise ValueError(f"CrossEntropyLoss: input must be (N, C) logits, got shape "
                             f"{tuple(input.shape)}")
        n, c = input.shape
        logp = log_softmax(input, 1)
        t = target if isinstance(target, _q.qvalue) else _q.value(target)
        if t.ndim == 1:
            if "int" not in str(t.dtype):
                raise TypeError(f"CrossEntropyLoss: class indices must be integers, got {t.dtype}")
            if t.shape[0] != n:
                raise ValueError(f"CrossEntropyLoss: {t.shape[0]} targets for {n} samples")
            if n and (int(t.min()) < 0 or int(t.max()) >= c):
                raise IndexError(f"CrossEntropyLoss: class indices must be in [0, {c})")
            weights = (t.reshape(n, 1) == _q.arange(c).reshape(1, c)).astype(input.dtype)
        elif tuple(t.shape) == (n, c):
            weights = t
        else:
            raise ValueError(f"CrossEntropyLoss: target shape {tuple(t.shape)} does not fit input "
                             f"shape {(n, c)}")
        return _reduce(-(logp * weights).sum(axis=1), self.reduction)


__all__ = ["Parameter", "Module", "Linear", "Sequential", "ReLU", "Sigmoid", "Tanh", "MSELoss",
           "CrossEntropyLoss", "log_softmax"]
