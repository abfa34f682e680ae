"""Plugin functions and kernels as torch.library custom ops (docs/torch.md).

    op = q.torch.custom_op(q.mapping_forward, fake="x",
                           backward=q.mapping_backward, differentiable=("a",))
    y = op(w, x)                                 # torch tensors in, a torch tensor out
    torch.compile(lambda w, x: op(w, x).sum(), fullgraph=True)(w, x)

    axpb = q.torch.kernel_op(q.axpb_kernel)      # a kernel that writes its arguments
    axpb(y.shape, x, y, 2.0, 1.0)                # parallel_do(y.shape, x, y, 2.0, 1.0, kernel)
"""

# Note [plugins as custom ops]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# torch.compile traces Python; a plugin function is a C function it cannot look into, so every
# call was a graph break (or an error under fullgraph=True). A torch.library custom op is the
# contract torch offers for such code: a schema (the types, and which arguments are written),
# an eager implementation, a fake implementation that computes only the result's shape, dtype
# and device (what the compiler traces with), and optionally autograd. The op then is one node
# of the graph under every backend, and inductor calls the eager implementation at run time.
#
# - Schema. From the plugin's own parameter records (native_function.overloads): tensors and
#   fixed vectors are `Tensor`, written ones `Tensor(a!)` (kernels only: the ABI lets only
#   kernels write arguments) and listed in mutates_args; numbers are `bool`, `int`, `float` or
#   `complex` by their declared kind; strings `str`. Parameters of any value (isthmus_value),
#   objects and callbacks have no torch type: those functions need a schema= of the caller's.
#   The element dtype is not part of a torch schema: the overloads of one name (float32 and
#   float64 versions, say) are one op, and the plugin picks the overload at call time as it
#   always does. Overloads whose parameters differ in number or in kind need a schema= of the
#   caller's. Results: a tensor or a number becomes `Tensor` (a number as a 0-d tensor, as
#   torch.sum returns one), nothing `()`; strings and objects cannot cross (a TypeError).
# - Eager implementation. The tensors go to the plugin as they are (detached: the op runs below
#   autograd), through DLPack, so no copy is made on the CPU or on CUDA, and the plugin's result
#   comes back through torch.from_dlpack, again without a copy. A result that shares memory with
#   an input (a plugin returning its argument) is cloned, since a custom op's outputs may not
#   alias its inputs.
# - Fake implementation: a shape rule. The caller passes fake= (a function of the op's arguments
#   returning empty tensors of the result's shape, as torch.library.register_fake takes) or the
#   name of the parameter whose shape, dtype and device the result has. Kernel ops return
#   nothing, so they need none.
# - Autograd. backward= names a plugin function called as backward(*inputs, grad_output) that
#   returns the gradient of each input listed in differentiable= (a tuple of several, or one
#   value). It becomes a custom op of its own (the gradients have the shapes of their inputs,
#   which is its fake rule), so the backward graph traces without breaks too, and
#   torch.library.register_autograd connects the two.
# - Names. The namespace is the plugin's name (one namespace per plugin, as a C++ extension has
#   one per library), the op's name the function's. Registering a name again with the same
#   schema points the op at the new function (a recompiled plugin); another schema raises.

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from typing import Any

from . import _isthmus

__all__ = ["custom_op", "kernel_op"]

# Parameter kinds of the plugin ABI (native_function.overloads) and their schema types.
_NUMBER_TYPES = {"bool": "bool", "int": "int", "float": "float", "complex": "complex"}
_TENSOR_KINDS = ("tensor", "vec")
# The dtype of a number result's 0-d tensor, by its Python type.
_NUMBER_DTYPES = {bool: lambda t: t.bool, int: lambda t: t.int64, float: lambda t: t.float64,
                  complex: lambda t: t.complex128}
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Names that are keywords of the schema language or of Python (torch rejects them as names).
_RESERVED = {"self", "out", "Tensor", "int", "float", "bool", "str", "None", "lambda", "def",
             "class", "from", "import", "in", "is", "not", "and", "or", "if", "else", "return",
             "global", "del", "pass", "raise", "try", "while", "with", "yield", "assert",
             "async", "await", "break", "continue", "elif", "except", "finally", "for",
             "nonlocal"}


_TORCH: Any = None


def _torch() -> Any:
    """torch, imported on first use (q.torch's message when it is missing)."""
    global _TORCH
    if _TORCH is None:
        from .torch import _torch as load

        _TORCH = load()
    return _TORCH


@dataclasses.dataclass
class _Entry:
    """What a registered op calls: updated in place when the name is registered again."""

    qualname: str
    schema: str
    target: Any  # the native function or kernel
    op: Any = None  # torch's op (CustomOpDef)
    backward: Any = None  # the backward op, if any


_REGISTRY: dict[str, _Entry] = {}


def _plugin_name(target: Any) -> str:
    name = getattr(target, "plugin", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"expected a plugin function or kernel (q.native_function or "
                        f"q.native_kernel), got {type(target).__name__}")
    return name


def _schema_name(name: str, what: str) -> str:
    if not _NAME.match(name) or name in _RESERVED:
        raise ValueError(f"{what} {name!r} cannot name a torch op or argument (a Python "
                         f"identifier that is not a keyword is needed): pass name= or schema=")
    return name


def _op_names(target: Any, default: str, name: str | None,
              namespace: str | None) -> tuple[str, str, str]:
    """The op's namespace (default: the plugin's name), name and "namespace::name"."""
    ns = _schema_name(namespace or _plugin_name(target), "namespace")
    op_name = _schema_name(name or default, "op name")
    return ns, op_name, f"{ns}::{op_name}"


def _param_type(p: dict, op: str) -> str:
    kind = p["kind"]
    written = "write" in p["flags"]
    if kind in _TENSOR_KINDS:
        return "Tensor(a!)" if written else "Tensor"
    if kind in _NUMBER_TYPES:
        return _NUMBER_TYPES[kind]
    if kind == "string":
        return "str"
    raise TypeError(f"{op}: parameter {p['name']!r} is a plugin {kind}, which a torch op cannot "
                    f"take (tensors, numbers and strings can); pass schema= for another form")


def _overload_params(target: Any, op: str, kernel: bool) -> list[dict]:
    """The parameters the overloads agree on (kinds and written-ness), or TypeError."""
    overloads = target.overloads
    if isinstance(overloads, dict):
        overloads = (overloads,)
    first = overloads[0]
    if first.get("variadic"):
        raise TypeError(f"{op}: a variadic plugin function has no fixed schema; pass schema=")
    params = [p for p in first["params"] if p["kind"] != "position"]
    for o in overloads[1:]:
        other = [p for p in o["params"] if p["kind"] != "position"]
        same = len(other) == len(params) and all(
            _param_type(a, op) == _param_type(b, op) for a, b in zip(params, other))
        if not same:
            raise TypeError(f"{op}: the overloads {first['signature']!r} and {o['signature']!r} "
                            f"differ in their parameters, so no one torch schema covers them; "
                            f"pass schema=")
    results = {o["result"] for o in overloads}
    if not kernel and len(results) != 1:
        raise TypeError(f"{op}: the overloads return different kinds ({sorted(results)}); pass "
                        f"schema=")
    return params


def _result_type(result: str, op: str) -> str:
    if result in ("tensor", "scalar"):
        return "Tensor"
    if result in ("", "none"):
        return "()"
    raise TypeError(f"{op}: the plugin returns a {result}, which a torch op cannot (tensors and "
                    f"numbers can)")


def _function_schema(target: Any, op: str) -> tuple[str, list[str]]:
    params = _overload_params(target, op, kernel=False)
    names = [_schema_name(p["name"], "parameter") for p in params]
    args = ", ".join(f"{_param_type(p, op)} {n}" for p, n in zip(params, names))
    result = target.overloads[0]["result"]
    return f"({args}) -> {_result_type(result, op)}", names


def _kernel_schema(target: Any, op: str) -> tuple[str, list[str], list[str]]:
    params = _overload_params(target, op, kernel=True)
    names = [_schema_name(p["name"], "parameter") for p in params]
    types, written = [], []
    for i, (p, n) in enumerate(zip(params, names)):
        t = _param_type(p, op)
        if t == "Tensor(a!)":
            # each written tensor its own alias set: (a!), (b!), ...
            t = f"Tensor({chr(ord('a') + len(written))}!)"
            written.append(n)
        types.append(f"{t} {n}")
    if "dims" in names:
        raise ValueError(f"{op}: a kernel parameter is named 'dims', the name of the launch "
                         f"shape; pass schema=")
    return f"(int[] dims, {', '.join(types)}) -> ()" if types else "(int[] dims) -> ()", \
        names, written


def _native_args(args: Sequence[Any]) -> Sequence[Any]:
    """The arguments for the plugin: tensors that require grad detached (the same memory)."""
    tensor = _torch().Tensor
    for a in args:
        if isinstance(a, tensor) and a.requires_grad:
            return [a.detach() if isinstance(a, tensor) and a.requires_grad else a for a in args]
    return args


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
    raise TypeError(f"{op}: the plugin returned {type(result).__name__}, not a tensor or number")


def _fake_from_rule(fake: Any, names: list[str], op: str) -> Callable[..., Any]:
    if callable(fake):
        return fake
    if isinstance(fake, str):
        if fake not in names:
            raise ValueError(f"{op}: fake={fake!r} names no parameter (they are {names})")
        index = names.index(fake)

        def like(*args: Any) -> Any:
            return _torch().empty_like(args[index])

        return like
    raise TypeError(f"{op}: fake= takes a function of the op's arguments or a parameter name, "
                    f"got {type(fake).__name__}")


def _register(entry_name: str, schema: str, target: Any, impl: Callable[..., Any],
              mutates: Sequence[str]) -> tuple[_Entry, bool]:
    """The registry entry for entry_name: new (True) or existing with the same schema (False)."""
    torch = _torch()
    existing = _REGISTRY.get(entry_name)
    if existing is not None:
        if existing.schema != schema:
            raise RuntimeError(f"{entry_name} is registered with the schema {existing.schema}; "
                               f"the new plugin's is {schema}: pass another name= or "
                               f"namespace=")
        existing.target = target
        return existing, False
    entry = _Entry(entry_name, schema, target)
    entry.op = torch.library.custom_op(entry_name, impl, mutates_args=tuple(mutates),
                                       schema=schema)
    _REGISTRY[entry_name] = entry
    return entry, True


def custom_op(function: Any, *, fake: Any = None, backward: Any = None,
              differentiable: Any = None, name: str | None = None,
              namespace: str | None = None, schema: str | None = None,
              backward_fake: Any = None) -> Any:
    """A torch.library custom op calling the plugin function `function` (Note [plugins as
    custom ops]); returns torch's op object, called like a torch function.

    fake: the shape rule torch.compile and FakeTensor tracing use: a function of the op's
      arguments returning empty tensors shaped as the result (torch.library.register_fake's
      form), or the name of the parameter whose shape, dtype and device the result shares.
      Required when the function returns a tensor or a number.
    backward, differentiable: a plugin function computing gradients, called as
      backward(*inputs, grad_output), returning the gradient of each input in differentiable
      (parameter names or positions; one value, or a tuple in that order). Registered as the
      op's autograd formula, itself a custom op named `<name>_backward`.
    backward_fake: the backward op's shape rule (default: each gradient like its input).
    name, namespace: the op is torch.ops.<namespace>.<name>; default the plugin's name and the
      function's.
    schema: a torch schema string, "(Tensor a, Tensor x) -> Tensor", instead of the one read
      from the plugin's parameters.
    """
    if not isinstance(function, _isthmus.native_function):
        raise TypeError(f"custom_op: expected a plugin function (q.native_function), got "
                        f"{type(function).__name__}; kernels go through q.torch.kernel_op")
    ns, op_name, qualname = _op_names(function, function.__name__, name, namespace)
    if schema is None:
        schema, names = _function_schema(function, qualname)
    else:
        names = [p.split()[-1] for p in schema[1:schema.index(")")].split(",") if p.strip()]
    returns_something = not schema.rstrip().endswith("()")
    # every check before anything is registered
    if returns_something and fake is None:
        raise TypeError(f"{qualname}: pass fake= (a shape rule: a parameter name or a function "
                        f"of the arguments), which torch.compile traces the op with")
    fake_rule = _fake_from_rule(fake, names, qualname) if returns_something else None
    if backward is None and differentiable is not None:
        raise TypeError(f"{qualname}: differentiable= needs backward=")
    if backward is not None and not isinstance(backward, _isthmus.native_function):
        raise TypeError(f"{qualname}: backward= takes a plugin function, got "
                        f"{type(backward).__name__}")
    diff = None if backward is None else _positions(
        0 if differentiable is None else differentiable, names, qualname)

    def impl(*args: Any) -> Any:
        entry = _REGISTRY[qualname]
        result = entry.target(*_native_args(args))
        if not returns_something:
            return None
        return _to_torch(result, args, qualname)

    entry, new = _register(qualname, schema, function, impl, ())
    if not new:
        if backward is not None and entry.backward is not None:
            entry.backward.target = backward
        return entry.op
    if fake_rule is not None:
        entry.op.register_fake(fake_rule)
    if diff is not None:
        _attach_backward(entry, backward, diff, names, backward_fake, ns, op_name)
    return entry.op


def _positions(differentiable: Any, names: list[str], op: str) -> tuple[int, ...]:
    items = differentiable if isinstance(differentiable, (tuple, list)) else (differentiable,)
    out = []
    for d in items:
        if isinstance(d, str):
            if d not in names:
                raise ValueError(f"{op}: differentiable names {d!r}, not a parameter ({names})")
            out.append(names.index(d))
        elif isinstance(d, int) and not isinstance(d, bool) and 0 <= d < len(names):
            out.append(d)
        else:
            raise ValueError(f"{op}: differentiable takes parameter names or positions "
                             f"0..{len(names) - 1}, got {d!r}")
    if not out:
        raise ValueError(f"{op}: differentiable names no parameter")
    return tuple(out)


def _attach_backward(entry: _Entry, backward: Any, diff: tuple[int, ...], names: list[str],
                     backward_fake: Any, ns: str, op_name: str) -> None:
    torch = _torch()
    args = entry.schema[:entry.schema.rindex("->")].strip()[1:-1]
    grads = ", ".join("Tensor" for _ in diff)
    bwd_schema = f"({args}{', ' if args else ''}Tensor grad_output) -> " + \
        (f"({grads})" if len(diff) > 1 else "Tensor")
    bwd_name = f"{ns}::{op_name}_backward"

    def bwd_impl(*args: Any) -> Any:
        bentry = _REGISTRY[bwd_name]
        result = bentry.target(*_native_args(args))
        parts = result if isinstance(result, tuple) else (result,)
        if len(parts) != len(diff):
            raise TypeError(f"{bwd_name}: the plugin returned {len(parts)} gradients for "
                            f"{len(diff)} differentiable inputs")
        inputs = args[:-1]
        outs = tuple(_to_torch(g, args, bwd_name).to(dtype=inputs[i].dtype)
                     if isinstance(inputs[i], torch.Tensor) else _to_torch(g, args, bwd_name)
                     for g, i in zip(parts, diff))
        return outs if len(diff) > 1 else outs[0]

    bentry, _ = _register(bwd_name, bwd_schema, backward, bwd_impl, ())
    if backward_fake is not None:
        bentry.op.register_fake(_fake_from_rule(backward_fake, names + ["grad_output"],
                                                bwd_name))
    else:
        def like_inputs(*args: Any) -> Any:
            outs = tuple(torch.empty_like(args[i]) for i in diff)
            return outs if len(diff) > 1 else outs[0]

        bentry.op.register_fake(like_inputs)
    entry.backward = bentry

    def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
        tensors = [i for i, a in enumerate(inputs) if isinstance(a, torch.Tensor)]
        ctx.tensor_positions = tensors
        ctx.others = [a if not isinstance(a, torch.Tensor) else None for a in inputs]
        ctx.save_for_backward(*[inputs[i] for i in tensors])

    def grad(ctx: Any, grad_output: Any) -> tuple:
        inputs = list(ctx.others)
        for i, t in zip(ctx.tensor_positions, ctx.saved_tensors):
            inputs[i] = t
        result = bentry.op(*inputs, grad_output)
        parts = result if isinstance(result, tuple) else (result,)
        out: list[Any] = [None] * len(inputs)
        for i, g in zip(diff, parts):
            if ctx.needs_input_grad[i]:
                out[i] = g
        return tuple(out)

    entry.op.register_autograd(grad, setup_context=setup_context)


def kernel_op(kernel: Any, *, name: str | None = None, namespace: str | None = None,
              schema: str | None = None) -> Any:
    """A torch.library custom op launching the plugin kernel `kernel` over a shape:
    op(dims, *args) runs q.parallel_do(dims, *args, kernel) (Note [plugins as custom ops]).

    The tensors the kernel writes are the op's mutated arguments (`Tensor(a!)` in its schema),
    so torch.compile orders the launch with the tensors' other uses; the op returns nothing and
    needs no shape rule. name, namespace, schema: as for custom_op (the schema's first argument
    is the launch shape, `int[] dims`).
    """
    if not isinstance(kernel, _isthmus.native_kernel):
        raise TypeError(f"kernel_op: expected a plugin kernel (q.native_kernel), got "
                        f"{type(kernel).__name__}; functions go through q.torch.custom_op")
    _, _, qualname = _op_names(kernel, kernel.name, name, namespace)
    if schema is None:
        schema, _names, written = _kernel_schema(kernel, qualname)
    else:
        written = re.findall(r"Tensor\([a-z]!\)\s+(\w+)", schema)

    def impl(dims: Sequence[int], *args: Any) -> None:
        entry = _REGISTRY[qualname]
        _isthmus.parallel_do(list(dims), *_native_args(args), entry.target)

    entry, _ = _register(qualname, schema, kernel, impl, written)
    return entry.op
