"""What plugin ops return and where: arguments for the plugin, devices, results as torch tensors
checked against the fake rule's promise (Note [devices and dtypes]); used by torch_ops.py and
autograd.py."""

# Note [devices and dtypes]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# torch dispatches a call to the implementation of the highest-priority device among its tensor
# arguments, and for a custom op checks nothing else: a meta tensor beside a CPU tensor went to
# the Meta kernel, which is the fake rule, and fake="x" returned torch.empty_like of the CPU x,
# uninitialised memory as a result. torch's own ops raise there. So every implementation (the
# eager one, the fake one, a kernel op's) first checks that the tensor arguments are on one
# device, with torch's exception: a 0-d CPU tensor goes with any device. A call on meta tensors
# alone (or fake tensors) still gets the fake rule's meta (fake) results.
#
# The fake rule is a promise about the eager result, which torch.compile builds the rest of the
# graph on; a plugin keeps its own dtype rules (a read-only view of float converts an int32
# tensor and the result is float32). So the eager result is checked against the promise: a
# dtype other than the promised one is a TypeError (casting would change values, e.g. truncate
# floats into the int32 a fake="x" promised), a shape other than a named parameter's a
# ValueError. A result on another device than promised (a plugin function computes in CPU
# memory; its inputs were CUDA tensors) is moved there. fake="x" promises x's dtype, shape and
# device, read per call; a fake function's dtypes are found by running it once on meta copies
# of the arguments per combination of input dtypes (cached; a rule that cannot run outside
# torch's fake mode, torch.library.get_ctx(), goes unchecked here, as opcheck checks it). The
# backward op's default rule, each gradient like its input, is kept by casting instead: a
# gradient computed in float64 for a float32 input is that input's gradient.

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from . import _isthmus

# The dtype of a number result's 0-d tensor, by its Python type.
_NUMBER_DTYPES = {bool: lambda t: t.bool, int: lambda t: t.int64, float: lambda t: t.float64,
                  complex: lambda t: t.complex128}

_TORCH: Any = None


def _torch() -> Any:
    """torch, imported on first use (q.torch's message when it is missing)."""
    global _TORCH
    if _TORCH is None:
        from .torch import _torch as load

        _TORCH = load()
    return _TORCH


def _native_args(args: Sequence[Any]) -> Sequence[Any]:
    """The arguments for the plugin: tensors that require grad detached (the same memory)."""
    tensor = _torch().Tensor
    for a in args:
        if isinstance(a, tensor) and a.requires_grad:
            return [a.detach() if isinstance(a, tensor) and a.requires_grad else a for a in args]
    return args


def _device_of(args: Sequence[Any], op: str) -> Any:
    """The device of the tensor arguments (None without any); RuntimeError when they are on two
    devices, except a 0-d CPU tensor beside others, as torch's ops allow (Note [devices and
    dtypes]). Runs on every call: the common case, one device, compares device objects only."""
    tensor = _torch().Tensor
    device = None
    for a in args:
        if isinstance(a, tensor):
            if device is None:
                device = a.device
            elif a.device != device:
                return _one_device(args, op)
    return device


def _one_device(args: Sequence[Any], op: str) -> Any:
    """_device_of for tensors on several devices: the one device beside 0-d CPU tensors, or
    RuntimeError."""
    device = scalar = None
    for a in args:
        if isinstance(a, _torch().Tensor):
            d = a.device
            if d == device:
                continue
            if d.type == "cpu" and a.dim() == 0:
                scalar = d
            elif device is None:
                device = d
            else:
                raise RuntimeError(
                    f"{op}: expected all tensor arguments on one device, got tensors on {device} "
                    f"and on {d} (a tensor on device {d} is not on the expected device "
                    f"{device}); move them to one device first, as torch's own ops ask")
    return device if device is not None else scalar


def _shares_memory(out: Any, inputs: Sequence[Any]) -> bool:
    """Whether out's storage overlaps an input tensor's (a plugin that returned an argument).
    The byte ranges are compared first and the devices only where they overlap: a device object
    per tensor was most of this check's time, and it runs on every call of a custom op."""
    tensor = _torch().Tensor
    st = out.untyped_storage()
    lo = st.data_ptr()
    hi = lo + st.nbytes()
    if lo == hi:
        return False
    for t in inputs:
        if isinstance(t, tensor):
            s = t.untyped_storage()
            a = s.data_ptr()
            if a < hi and lo < a + s.nbytes() and t.device == out.device:
                return True
    return False


_FROM_CAPSULE: Any = None  # torch's capsule consumer, looked up once


def _from_capsule() -> Any:
    """torch._C._from_dlpack where torch has it (what torch.utils.dlpack.from_dlpack calls after
    checks our capsule always passes: 0.3 us of a custom op's call), else the public one."""
    global _FROM_CAPSULE
    if _FROM_CAPSULE is None:
        torch = _torch()
        _FROM_CAPSULE = getattr(torch._C, "_from_dlpack", None) or torch.utils.dlpack.from_dlpack
    return _FROM_CAPSULE


def _to_torch(result: Any, inputs: Sequence[Any], op: str) -> Any:
    """The plugin's result as a torch tensor, sharing its memory unless it aliases an input."""
    if isinstance(result, _isthmus.qvalue) and result.kind == "tensor":
        # CPU memory needs no stream handshake: the capsule goes to torch directly, which
        # saves torch.from_dlpack's protocol checks (a third of the op's own time)
        if result.__dlpack_device__()[0] == 1:
            out = (_FROM_CAPSULE or _from_capsule())(result.__dlpack__())
        else:
            out = _torch().from_dlpack(result)
        return out.clone() if _shares_memory(out, inputs) else out
    torch = _torch()
    if isinstance(result, (bool, int, float, complex)) or (
            isinstance(result, _isthmus.qvalue) and result.kind == "scalar"):
        like = next((t for t in inputs if isinstance(t, torch.Tensor)), None)
        device = like.device if like is not None else None
        value = result.item() if isinstance(result, _isthmus.qvalue) else result
        # the plugin's C type as NumPy would keep it (a double is float64, not torch's default
        # float32), so that the result matches a fake rule written from the plugin's signature
        return torch.tensor(value, dtype=_NUMBER_DTYPES[type(value)](torch), device=device)
    if isinstance(result, torch.Tensor):  # a Python function's (a backward= of torch code)
        return result.clone() if _shares_memory(result, inputs) else result
    raise TypeError(f"{op}: the plugin returned {type(result).__name__}, not a tensor or number")


def differentiable_positions(differentiable: Any, names: Sequence[str] | None, what: str,
                             types: Sequence[str] | None = None) -> tuple[int, ...]:
    """differentiable= (parameter names or positions; one, or a tuple or list) as positions, for
    custom_op and q.autograd.function. names: the parameters' (None: unknown, as for a variadic
    function: positions are then checked where the inputs are known); types: their schema types,
    for the check that each is a Tensor. TypeError or ValueError naming the entry."""
    items = differentiable if isinstance(differentiable, (tuple, list)) else (differentiable,)
    out: list[int] = []
    for d in items:
        if isinstance(d, str):
            if names is None:
                raise TypeError(f"{what}: differentiable names {d!r}, but the parameter names "
                                f"are unknown (a variadic function, or overloads that name them "
                                f"differently): give positions")
            if d not in names:
                raise ValueError(f"{what}: differentiable names {d!r}, not a parameter "
                                 f"({list(names)})")
            i = names.index(d)
        elif isinstance(d, int) and not isinstance(d, bool):
            if d < 0 or (names is not None and d >= len(names)):
                span = f"{len(names)} parameters {list(names)}" if names is not None else \
                    "positions count from 0"
                raise ValueError(f"{what}: differentiable position {d} is out of range: {span}")
            i = d
        else:
            raise TypeError(f"{what}: differentiable takes parameter names (str) or positions "
                            f"(int), got {d!r}")
        if types is not None and not types[i].startswith("Tensor"):
            raise ValueError(f"{what}: differentiable names {names[i]!r}, a {types[i]} parameter: "
                             f"only Tensor parameters have gradients")
        if i in out:
            raise ValueError(f"{what}: differentiable names position {i} twice")
        out.append(i)
    if not out:
        raise ValueError(f"{what}: differentiable names no parameter")
    return tuple(out)


def _dtype_name(dtype: Any) -> str:
    return str(dtype).replace("torch.", "")


@dataclasses.dataclass
class _Results:
    """An op's results: how many, and what its fake rule promises of them (Note [devices and
    dtypes]). like: the positions of the parameters the results are like (fake="x"), else
    rule: the fake function. cast: make each result like its parameter instead of checking."""

    op: str
    count: int
    like: tuple[int, ...] | None
    rule: Callable[..., Any] | None
    names: Sequence[str]
    cast: bool = False
    what: str = "its schema's results"
    promised: dict = dataclasses.field(default_factory=dict)  # input dtypes -> result dtypes

    def convert(self, result: Any, args: Sequence[Any], device: Any) -> Any:
        """The plugin's result as the op's: torch tensors, checked against the promise."""
        if self.count == 1 and not isinstance(result, tuple):  # the common case, kept short
            t = _to_torch(result, args, self.op)
            if self.like is None:
                return self._check_rule([t], args, device)[0]
            i = self.like[0]
            like = args[i]
            # one test per property; _keep says what differs (None: an optional tensor)
            if like is not None and (t.dtype != like.dtype or t.shape != like.shape
                                     or t.device != like.device):
                t = self._keep(0, t, like, self.names[i])
            return t
        parts = result if isinstance(result, tuple) else (result,)
        if len(parts) != self.count:
            raise TypeError(f"{self.op}: the plugin returned {len(parts)} value(s) where the op "
                            f"returns {self.count} tensor(s) ({self.what})")
        outs: list[Any] = []
        for r in parts:
            t = _to_torch(r, args, self.op)
            if outs and _shares_memory(t, outs):  # the same tensor twice: outputs may not alias
                t = t.clone()
            outs.append(t)
        if self.like is None:
            return tuple(self._check_rule(outs, args, device))
        for k, i in enumerate(self.like):
            t, like = outs[k], args[i]
            if like is not None and (t.dtype != like.dtype or t.shape != like.shape
                                     or t.device != like.device):
                outs[k] = self._keep(k, t, like, self.names[i])
        return tuple(outs)

    def _check_rule(self, outs: list[Any], args: Sequence[Any], device: Any) -> list[Any]:
        """outs held to the fake function's dtypes, moved to the arguments' device."""
        dtypes = self._rule_dtypes(args) if self.rule is not None else None
        for k, t in enumerate(outs):
            if dtypes is not None and dtypes[k] is not None and t.dtype != dtypes[k]:
                self._wrong_dtype(k, t, dtypes[k], "its fake rule")
            if device is not None and t.device != device:
                outs[k] = t.to(device)
        return outs

    def _keep(self, k: int, t: Any, like: Any, name: str) -> Any:
        if self.cast:
            return t.to(device=like.device, dtype=like.dtype)
        if t.dtype != like.dtype:
            self._wrong_dtype(k, t, like.dtype, f"fake={name!r} ({name}'s dtype)")
        if t.shape != like.shape:
            raise ValueError(f"{self.op}: the plugin returned {self._which(k)}of shape "
                             f"{tuple(t.shape)} where fake={name!r} promises {name}'s shape "
                             f"{tuple(like.shape)}; give a fake= rule that says the plugin's shape")
        return t.to(like.device)

    def _which(self, k: int) -> str:
        return f"result {k} " if self.count > 1 else "a tensor "

    def _wrong_dtype(self, k: int, t: Any, dtype: Any, source: str) -> None:
        raise TypeError(f"{self.op}: the plugin returned {self._which(k)}of dtype "
                        f"{_dtype_name(t.dtype)} where {source} promises {_dtype_name(dtype)}; "
                        f"call it with tensors of the dtype the plugin computes in, or give a "
                        f"fake= rule that says {_dtype_name(t.dtype)}")

    def _rule_dtypes(self, args: Sequence[Any]) -> tuple | None:
        torch = _torch()
        key = tuple(a.dtype if isinstance(a, torch.Tensor) else a if isinstance(a, str)
                    else type(a) for a in args)
        try:
            return self.promised[key]
        except KeyError:
            pass
        try:
            meta = [a.detach().to("meta") if isinstance(a, torch.Tensor) else a for a in args]
            out = self.rule(*meta)
            outs = out if isinstance(out, (tuple, list)) else (out,)
            dtypes = tuple(o.dtype if isinstance(o, torch.Tensor) else None for o in outs)
            if len(dtypes) != self.count:
                dtypes = None
        except Exception:  # needs torch's fake mode (get_ctx): opcheck checks that rule
            dtypes = None
        if len(self.promised) < 256:
            self.promised[key] = dtypes
        return dtypes


def _fake_rule(fake: Any, names: list[str], schema_args: Sequence[Any], count: int,
               op: str) -> tuple[tuple[int, ...] | None, Callable[..., Any]]:
    """fake= as (the positions of the parameters the results are like, or None; the rule)."""
    if callable(fake):
        return None, fake
    several = isinstance(fake, (tuple, list))
    if not (isinstance(fake, str) or several and fake and all(isinstance(f, str) for f in fake)):
        raise TypeError(f"{op}: fake= takes a function of the op's arguments, a parameter name "
                        f"or a tuple of names (one per result), got {type(fake).__name__}")
    items = tuple(fake) if several else (fake,)
    if len(items) != count:
        raise ValueError(f"{op}: fake={fake!r} describes {len(items)} result(s), the op returns "
                         f"{count}: pass one parameter name per result, or a function")
    like = []
    for f in items:
        if f not in names:
            raise ValueError(f"{op}: fake={f!r} names no parameter (they are {names})")
        i = names.index(f)
        if schema_args is not None and not schema_args[i].tensor:
            raise ValueError(f"{op}: fake={f!r} names a {schema_args[i].type} parameter; a "
                             f"result is like a Tensor parameter")
        like.append(i)
    like_t = tuple(like)

    def rule(*args: Any) -> Any:
        outs = tuple(_torch().empty_like(args[i]) for i in like_t)
        return outs if count > 1 else outs[0]

    return like_t, rule


def _checked_fake(rule: Callable[..., Any], op: str) -> Callable[..., Any]:
    """The fake rule behind the device check (Note [devices and dtypes])."""

    def fake(*args: Any) -> Any:
        _device_of(args, op)
        return rule(*args)

    return fake
