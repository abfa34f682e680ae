"""Plugin functions and kernels as torch.library custom ops (docs/torch.md).

    op = q.torch.custom_op(q.mapping_forward, fake="x",
                           backward=q.mapping_backward, differentiable=("a",))
    y = op(w, x)                                 # torch tensors in, a torch tensor out
    torch.compile(lambda w, x: op(w, x).sum(), fullgraph=True)(w, x)

    mul = q.torch.custom_op(q.mul, fake="x",     # backward returns std::tuple(dw, dx)
                            backward=q.mul_backward, differentiable=("w", "x"))

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
#   fixed vectors are `Tensor`, written ones `Tensor(a!)`, `Tensor(b!)`, ... and listed in
#   mutates_args; numbers are `bool`, `int`, `float` or `complex` by their declared kind;
#   strings `str`. Parameters of any value (isthmus_value), objects and callbacks have no torch
#   type: those functions need a schema= of the caller's, read by torch_schema.py (Note [schema
#   subset]). The element dtype is not part of a torch schema: the overloads of one name
#   (float32 and float64 versions, say) are one op, and the plugin picks the overload at call
#   time as it always does. Overloads whose parameters differ in number or in kind need a
#   schema= of the caller's. Results: a tensor or a number becomes `Tensor` (a number as a 0-d
#   tensor, as torch.sum returns one), a tuple of them (std::tuple in the plugin) `(Tensor,
#   Tensor, ...)`, nothing `()`; strings and objects cannot cross (a TypeError).
# - Eager implementation. The tensors go to the plugin as they are (detached: the op runs below
#   autograd), through DLPack, so no copy is made on the CPU or on CUDA, and the plugin's result
#   comes back through torch.from_dlpack, again without a copy. A result that shares memory with
#   an input (a plugin returning its argument) or with another result is cloned, since a custom
#   op's outputs may not alias its inputs or each other.
# - Fake implementation: a shape rule. The caller passes fake= (a function of the op's arguments
#   returning empty tensors of the result's shape, as torch.library.register_fake takes) or the
#   name of the parameter whose shape, dtype and device the result has (a tuple of names for
#   several results). Kernel ops return nothing; their fake only checks devices.
# - Devices and dtypes: Note [devices and dtypes] in torch_results.py.
# - Autograd. backward= names a plugin function (or a Python function of torch tensors) called
#   as backward(*inputs, grad_output) that returns the gradient of each input listed in
#   differentiable= (a tuple of several, std::tuple in the plugin, or one value). It becomes a
#   custom op of its own (the gradients have the shapes of their inputs, which is its fake
#   rule), so the backward graph traces without breaks too, and
#   torch.library.register_autograd connects the two.
# - Names. The namespace is the plugin's name (one namespace per plugin, as a C++ extension has
#   one per library), the op's name the function's. Registering a name again with the same
#   schema points the op at the new function (a recompiled plugin); another schema raises.

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from typing import Any

from . import _isthmus, torch_schema
from ._derived import derived_backward
from .torch_results import (_checked_fake, _device_of, _fake_rule, _native_args, _Results,
                            _torch, differentiable_positions)

__all__ = ["custom_op", "kernel_op"]

# Parameter kinds of the plugin ABI (native_function.overloads) and their schema types.
_NUMBER_TYPES = {"bool": "bool", "int": "int", "float": "float", "complex": "complex"}
_TENSOR_KINDS = ("tensor", "vec")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Names that are keywords of the schema language or of Python (torch rejects them as names).
_RESERVED = {"self", "out", "Tensor", "int", "float", "bool", "str", "None", "lambda", "def",
             "class", "from", "import", "in", "is", "not", "and", "or", "if", "else", "return",
             "global", "del", "pass", "raise", "try", "while", "with", "yield", "assert",
             "async", "await", "break", "continue", "elif", "except", "finally", "for",
             "nonlocal"}


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


def _overload_params(target: Any, op: str, kernel: bool) -> tuple[list[dict], str]:
    """The parameters the overloads agree on (kinds and written-ness) and their result kind,
    or TypeError."""
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
    return params, first["result"]


def _schema_params(params: list[dict], op: str) -> list[str]:
    """"<type> <name>" per parameter, each written tensor its own alias set: (a!), (b!), ..."""
    out, written = [], 0
    for p in params:
        n = _schema_name(p["name"], "parameter")
        t = _param_type(p, op)
        if t == "Tensor(a!)":
            t = f"Tensor({chr(ord('a') + written)}!)"
            written += 1
        out.append(f"{t} {n}")
    return out


def _result_count(result: str, op: str) -> int:
    """How many tensors the plugin's result kind gives the op: 0 (none), 1 (a tensor or a
    number), n (a tuple of them)."""
    result = result.strip()
    if result in ("", "none"):
        return 0
    if result in ("tensor", "scalar"):
        return 1
    if result.startswith("(") and result.endswith(")"):
        items = [r.strip() for r in result[1:-1].split(",")]
        if all(r in ("tensor", "scalar") for r in items):
            return len(items)
        what = result
    else:
        what = "any value" if result == "any" else f"a {result}"
    hint = "; pass schema= to give the op its types" if "any" in result else ""
    raise TypeError(f"{op}: the plugin returns {what}, which a torch op cannot (tensors, numbers "
                    f"and tuples of them can){hint}")


def _function_schema(target: Any, op: str) -> torch_schema.Schema:
    params, result = _overload_params(target, op, kernel=False)
    n = _result_count(result, op)
    returns = "()" if n == 0 else "Tensor" if n == 1 else f"({', '.join(['Tensor'] * n)})"
    return torch_schema.parse(f"({', '.join(_schema_params(params, op))}) -> {returns}", op)


def _kernel_schema(target: Any, op: str) -> torch_schema.Schema:
    params, _ = _overload_params(target, op, kernel=True)
    types = _schema_params(params, op)
    if any(t.endswith(" dims") for t in types):
        raise ValueError(f"{op}: a kernel parameter is named 'dims', the name of the launch "
                         f"shape; pass schema=")
    return torch_schema.parse(f"(int[] dims{''.join(', ' + t for t in types)}) -> ()", op)


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
      form), or the name of the parameter whose shape, dtype and device the result shares (a
      tuple of names for a plugin returning several tensors). Required when the function
      returns a tensor or a number. The eager result must keep the promise: another dtype is a
      TypeError (Note [devices and dtypes]).
    backward, differentiable: a plugin function (or a Python function of torch tensors)
      computing gradients, called as backward(*inputs, grad_output), returning the gradient of
      each input in differentiable (Tensor parameters, by name or position; one value, or a
      tuple in that order: std::tuple in a plugin). Registered as the op's autograd formula,
      itself a custom op named `<name>_backward`. With differentiable= and no backward=, the
      backward derived from a generic plugin function (function.vjp, docs/autograd.md).
    backward_fake: the backward op's shape rule (default: each gradient like its input).
    name, namespace: the op is torch.ops.<namespace>.<name>; default the plugin's name and the
      function's.
    schema: a torch schema string, "(Tensor a, Tensor x) -> Tensor", instead of the one read
      from the plugin's parameters (Note [schema subset] in torch_schema.py).
    """
    if not isinstance(function, _isthmus.native_function):
        raise TypeError(f"custom_op: expected a plugin function (q.native_function), got "
                        f"{type(function).__name__}; kernels go through q.torch.kernel_op")
    ns, op_name, qualname = _op_names(function, function.__name__, name, namespace)
    parsed = (_function_schema(function, qualname) if schema is None
              else torch_schema.parse(schema, qualname))
    names = parsed.names
    # every check before anything is registered
    if parsed.returns and fake is None:
        raise TypeError(f"{qualname}: pass fake= (a shape rule: a parameter name or a function "
                        f"of the arguments), which torch.compile traces the op with")
    results = None
    if parsed.returns:
        like, rule = _fake_rule(fake, names, parsed.arguments, parsed.returns, qualname)
        results = _Results(qualname, parsed.returns, like, rule, names)
    derive = backward is None and differentiable is not None
    if backward is not None and not callable(backward):
        raise TypeError(f"{qualname}: backward= takes a plugin function or a Python function, "
                        f"got {type(backward).__name__}")
    if (backward is not None or derive) and not parsed.returns:
        raise TypeError(f"{qualname}: backward= needs a result to differentiate; the op returns "
                        f"nothing")
    diff = None if backward is None and not derive else differentiable_positions(
        0 if differentiable is None else differentiable, names, qualname,
        [a.type for a in parsed.arguments])
    if derive:
        backward = derived_backward(function, diff, qualname)

    def impl(*args: Any) -> Any:
        device = _device_of(args, qualname)
        result = _REGISTRY[qualname].target(*_native_args(args))
        return None if results is None else results.convert(result, args, device)

    entry, new = _register(qualname, parsed.text, function, impl, parsed.mutated)
    if not new:
        if backward is not None and entry.backward is not None:
            entry.backward.target = backward
        return entry.op
    if results is not None:
        entry.op.register_fake(_checked_fake(results.rule, qualname))
    if diff is not None:
        _attach_backward(entry, backward, diff, parsed, backward_fake, ns, op_name)
    return entry.op


def _attach_backward(entry: _Entry, backward: Any, diff: tuple[int, ...],
                     schema: torch_schema.Schema, backward_fake: Any, ns: str,
                     op_name: str) -> None:
    torch = _torch()
    names = schema.names
    grads = ["grad_output"] if schema.returns == 1 else [
        f"grad_output{k}" for k in range(schema.returns)]
    while any(g in names for g in grads):  # a parameter already has that name
        grads = [g + "_" for g in grads]
    params = [f"{a.plain_type} {a.name}" for a in schema.arguments] + [
        f"Tensor {g}" for g in grads]
    bwd_schema = f"({', '.join(params)}) -> " + (
        f"({', '.join(['Tensor'] * len(diff))})" if len(diff) > 1 else "Tensor")
    bwd_name = f"{ns}::{op_name}_backward"
    if backward_fake is None:  # each gradient cast like its input (Note [devices and dtypes])
        results = _Results(bwd_name, len(diff), diff, None, names, cast=True,
                           what="one gradient per differentiable input")
        fake_rule = _fake_rule(tuple(names[i] for i in diff) if len(diff) > 1 else names[diff[0]],
                               names, None, len(diff), bwd_name)[1]
    else:
        like, fake_rule = _fake_rule(backward_fake, names + grads, None, len(diff), bwd_name)
        results = _Results(bwd_name, len(diff), like, fake_rule, names + grads,
                           what="one gradient per differentiable input")

    def bwd_impl(*args: Any) -> Any:
        device = _device_of(args, bwd_name)
        result = _REGISTRY[bwd_name].target(*_native_args(args))
        return results.convert(result, args, device)

    bentry, new = _register(bwd_name, bwd_schema, backward, bwd_impl, ())
    if new:
        bentry.op.register_fake(_checked_fake(fake_rule, bwd_name))
    entry.backward = bentry

    def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
        tensors = [i for i, a in enumerate(inputs) if isinstance(a, torch.Tensor)]
        ctx.tensor_positions = tensors
        ctx.others = [a if not isinstance(a, torch.Tensor) else None for a in inputs]
        ctx.save_for_backward(*[inputs[i] for i in tensors])

    def grad(ctx: Any, *grad_outputs: Any) -> tuple:
        inputs = list(ctx.others)
        for i, t in zip(ctx.tensor_positions, ctx.saved_tensors):
            inputs[i] = t
        result = bentry.op(*inputs, *grad_outputs)
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
    needs no shape rule. Its tensor arguments must be on one device (Note [devices and dtypes]).
    name, namespace, schema: as for custom_op (the schema's first argument is the launch shape,
    `int[] dims`, and it returns `()`).
    """
    if not isinstance(kernel, _isthmus.native_kernel):
        raise TypeError(f"kernel_op: expected a plugin kernel (q.native_kernel), got "
                        f"{type(kernel).__name__}; functions go through q.torch.custom_op")
    _, _, qualname = _op_names(kernel, kernel.name, name, namespace)
    if schema is None:
        parsed = _kernel_schema(kernel, qualname)
    else:
        parsed = torch_schema.parse(schema, qualname)
        first = parsed.arguments[0] if parsed.arguments else None
        if first is None or first.tensor or first.plain_type not in ("int[]", "SymInt[]"):
            raise ValueError(f"{qualname}: a kernel op's schema starts with the launch shape, "
                             f"'int[] dims', got {schema!r}")
        if parsed.returns:
            raise ValueError(f"{qualname}: a kernel op returns nothing ('-> ()'), got {schema!r}")

    def impl(dims: Sequence[int], *args: Any) -> None:
        _device_of(args, qualname)
        _isthmus.parallel_do(list(dims), *_native_args(args), _REGISTRY[qualname].target)

    def fake(dims: Sequence[int], *args: Any) -> None:
        _device_of(args, qualname)

    entry, new = _register(qualname, parsed.text, kernel, impl, parsed.mutated)
    if new:
        entry.op.register_fake(fake)
    return entry.op
