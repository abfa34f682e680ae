"""Python signatures and docstrings for plugin functions and kernels (inspect, help(), editors)."""

# Note [plugin signatures]
# ~~~~~~~~~~~~~~~~~~~~~~~~
# attach() gives q.native_function and q.native_kernel three properties:
#   __signature__       an inspect.Signature: positional-only parameters (plugin functions take
#                       positional arguments only) with Python annotations, and the result's;
#   __text_signature__  the same without annotations, "(a, b, /)", in the form CPython's
#                       builtins use, for tools that read only that;
#   __doc__             the Python signature of each overload, the plugin's own signature
#                       lines, then the plugin's doc text.
# Where the metadata comes from. Today the Python objects expose the descriptor's `signature`
# text ("plus(a: float64, b: float64) -> scalar", one line per overload) and a doc, not the
# isthmus_param records, so the signature is parsed from that text (parse_signature). The text
# keeps each parameter's name and Quasar-style type name; it loses the dtype of views ("vec" is
# a 1-d view of any element type), and the result is only "scalar", "tensor", "string",
# "object" or nothing ("scalar" is any number: int, float, complex or bool). The ABI has no
# default values, so no parameter has a default.
# When the native objects gain an `overloads` attribute (the accessor proposed in
# docs/plugins.md, "Tooling": a tuple with one dict per overload holding "signature", "doc",
# "result" and "params", each param a dict with "name", "kind", "dtype", "ndim", "vec_len",
# "flags", "type_name" and "type"), it is used instead: the parameter kinds are then exact.
#
# Several overloads: one Python signature must stand for all of them. When they have the same
# number of parameters, each parameter's annotation is the union over the overloads (names from
# the first); otherwise the signature is `(*args)`. The docstring lists every overload, and
# stubgen writes one @overload each.

import dataclasses
import functools
import inspect
import keyword
import operator
import re
from collections.abc import Callable, Sequence
from typing import Any, Union

import numpy as np

from . import _isthmus

__all__ = ["PluginParam", "PluginOverload", "parse_signature", "overloads", "annotation",
           "annotation_text", "python_name", "signature", "text_signature", "docstring", "attach",
           "class_signature"]


@dataclasses.dataclass(frozen=True)
class PluginParam:
    """One parameter of a plugin function or kernel, as the descriptor names it."""

    name: str
    type_name: str  # the descriptor's spelling: "float64", "scalar", "vec", "cube", "vec3", ...
    kind: str | None = None  # "bool", "int", "float", ... when the metadata says (else None)
    dtype: str | None = None  # the element dtype, when known


@dataclasses.dataclass(frozen=True)
class PluginOverload:
    """One overload: its name, parameters, result type name ("" for none) and doc."""

    name: str
    params: tuple
    result: str
    doc: str = ""
    text: str = ""  # the descriptor's signature line


_SIG = re.compile(r"^\s*(?P<name>[^(\s]+)\((?P<params>.*)\)\s*(?:->\s*(?P<result>\S.*?))?\s*$")
_POSITION = re.compile(r"^ivec\d+$")


def parse_signature(text, *, kernel=False, doc=""):
    """Parses one descriptor signature line, "name(a: t, b: t) -> r", into a PluginOverload.
    For a kernel, the trailing position parameter ("pos: ivecN") is dropped: parallel_do
    supplies it. Raises ValueError for text of another form."""
    m = _SIG.match(text)
    if not m:
        raise ValueError(f"not a plugin signature: {text!r}")
    params = []
    body = m["params"].strip()
    for part in body.split(", ") if body else []:
        name, sep, type_name = part.partition(": ")
        if not sep:
            raise ValueError(f"not a plugin signature: {text!r} (parameter {part!r})")
        params.append(PluginParam(name.strip(), type_name.strip()))
    if kernel and params and _POSITION.match(params[-1].type_name):
        params.pop()
    return PluginOverload(m["name"], tuple(params), (m["result"] or "").strip(), doc, text)


def _from_metadata(d, kernel):
    """A PluginOverload from the proposed `overloads` accessor's dict (Note [plugin
    signatures])."""
    text = d.get("signature", "")
    params = tuple(PluginParam(p["name"], p.get("type_name", "any"), p.get("kind"),
                               p.get("dtype")) for p in d.get("params", ())
                   if p.get("kind") != "position")
    name = d.get("name") or parse_signature(text, kernel=kernel).name
    return PluginOverload(name, params, d.get("result", ""), d.get("doc") or "", text)


_NATIVE_DOC = {}  # type -> the type's own __doc__ descriptor, before attach() replaced it


def _native_doc_text(obj):
    """The plugin's doc text: the native __doc__ without its leading signature lines."""
    for t in type(obj).__mro__:
        if t in _NATIVE_DOC:
            full = _NATIVE_DOC[t].__get__(obj, type(obj)) or ""
            break
    else:
        full = getattr(obj, "__doc__", "") or ""
    sig = getattr(obj, "signature", "")
    if sig and full.startswith(sig):
        full = full[len(sig):]
    return full.strip("\n")


def _is_kernel(obj):
    return isinstance(obj, _isthmus.native_kernel) or hasattr(obj, "devices")


def overloads(obj):
    """The overloads of a plugin function or kernel (a tuple of PluginOverload), from its
    `overloads` metadata when it has one, else from its signature text."""
    kernel = _is_kernel(obj)
    meta = getattr(obj, "overloads", None)
    if meta is not None:
        return tuple(_from_metadata(d, kernel) for d in meta)
    return _parsed(obj.signature, kernel, _native_doc_text(obj))


@functools.lru_cache(maxsize=1024)
def _parsed(text, kernel, doc):
    lines = [line for line in text.splitlines() if line.strip()]
    return tuple(parse_signature(line, kernel=kernel, doc=doc if i == 0 else "")
                 for i, line in enumerate(lines))


# ---- types ------------------------------------------------------------------------------------

_TENSOR_NAMES = {"vec", "mat", "cube", "cube{4}", "cube{:}", "tensor"}
_FIXED_VEC = re.compile(r"^d?vec\d+$")
_TENSOR = (_isthmus.qvalue | np.ndarray, "qvalue | np.ndarray")
_SMALL_VEC = (_isthmus.qvalue | np.ndarray | Sequence[float],
              "qvalue | np.ndarray | Sequence[float]")
_NUMBER = (int | float | complex, "int | float | complex")
_BY_NAME = {
    "bool": (bool, "bool"),
    "int": (int, "int"),
    "scalar": (float, "float"),
    "float64": (float, "float"),
    "cscalar": (complex, "complex"),
    "string": (str, "str"),
    "function": (Callable[..., Any], "Callable[..., Any]"),
    "any": (Any, "Any"),
    "object": (_isthmus.native_object, "native_object"),
}
_BY_KIND = {
    "bool": _BY_NAME["bool"], "int": _BY_NAME["int"], "float": _BY_NAME["float64"],
    "complex": _BY_NAME["cscalar"], "string": _BY_NAME["string"], "tensor": _TENSOR,
    "vec": _SMALL_VEC, "callback": _BY_NAME["function"], "any": _BY_NAME["any"],
}
_RESULTS = {
    "": (None, "None"),
    "scalar": _NUMBER,
    "tensor": (_isthmus.qvalue, "qvalue"),
    "string": (str, "str"),
    "object": (_isthmus.native_object, "native_object"),
}


def _lookup(type_name, kind, result):
    if result:
        return _RESULTS.get(type_name, (Any, "Any"))
    if kind in _BY_KIND:
        return _BY_KIND[kind]
    if kind == "object":
        return None  # an object type: see annotation_text
    if type_name in _TENSOR_NAMES:
        return _TENSOR
    if _FIXED_VEC.match(type_name):
        return _SMALL_VEC
    return _BY_NAME.get(type_name)


def annotation(type_name, *, kind=None, result=False):
    """The Python annotation for a descriptor type name (or metadata kind): tensors and views
    are `qvalue | numpy.ndarray`, fixed vectors also take a sequence of numbers, object types
    are native_object; `result=True` maps a result's type name ("scalar" is any number)."""
    found = _lookup(type_name, kind, result)
    return _isthmus.native_object if found is None else found[0]


def annotation_text(type_name, *, kind=None, result=False, object_types=None):
    """annotation() as stub text. `object_types` maps plugin object type names to the stub's
    class names (an unlisted object type is `native_object`)."""
    found = _lookup(type_name, kind, result)
    if found is not None:
        return found[1]
    return (object_types or {}).get(type_name, "native_object")


def python_name(name, taken=()):
    """A parameter name usable in Python: `name` itself when it is a non-keyword identifier,
    else one made from it (keywords get a trailing underscore), distinct from `taken`."""
    n = name if name.isidentifier() else re.sub(r"\W", "_", name) or "arg"
    if n[0].isdigit():
        n = "_" + n
    if keyword.iskeyword(n) or keyword.issoftkeyword(n) or n == "self":
        n += "_"
    base, i = n, 2
    while n in taken:
        n, i = f"{base}_{i}", i + 1
    return n


def _union(items):
    out = []
    for x in items:
        if x not in out:
            out.append(x)
    if len(out) == 1:
        return out[0]
    try:
        return functools.reduce(operator.or_, out)
    except TypeError:
        return Union[tuple(out)]


def _merged(ovs):
    """(params, result): params as [(name, [annotations...])] or None for *args."""
    counts = {len(o.params) for o in ovs}
    result = _union([annotation(o.result, result=True) for o in ovs])
    if len(counts) != 1:
        return None, result
    names = []
    for p in ovs[0].params:
        names.append(python_name(p.name, names))
    anns = [_union([annotation(o.params[i].type_name, kind=o.params[i].kind) for o in ovs])
            for i in range(len(names))]
    return list(zip(names, anns)), result


def signature(obj):
    """The inspect.Signature of a plugin function or kernel (Note [plugin signatures])."""
    ovs = overloads(obj)
    if not ovs:
        return inspect.Signature()
    params, result = _merged(ovs)
    if _is_kernel(obj):
        result = None
    if params is None:
        return inspect.Signature(
            [inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL, annotation=Any)],
            return_annotation=result)
    return inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY, annotation=a) for n, a in params],
        return_annotation=result)


def class_signature(*params):
    """The signature of a native class's constructor: (name, annotation, default) triples."""
    return inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                default=d, annotation=a) for n, a, d in params])


def text_signature(obj):
    """The signature without annotations, as CPython builtins spell it: "(a, b, /)"."""
    ovs = overloads(obj)
    params, _ = _merged(ovs) if ovs else ([], None)
    if params is None:
        return "(*args)"
    return "(" + "".join(n + ", " for n, _ in params) + "/)" if params else "()"


def overload_text(ov, *, kernel=False, object_types=None):
    """One overload as a Python-style line: "plus(a: float, b: float, /) -> float | ..."."""
    names = []
    for p in ov.params:
        names.append(python_name(p.name, names))
    args = [f"{n}: {annotation_text(p.type_name, kind=p.kind, object_types=object_types)}"
            for n, p in zip(names, ov.params)]
    if args:
        args.append("/")
    res = "None" if kernel else annotation_text(ov.result, result=True)
    return f"{ov.name}({', '.join(args)}) -> {res}"


def docstring(obj):
    """The docstring: each overload's Python signature, the plugin's signature lines, the
    plugin's doc, and for a kernel how to run it."""
    ovs = overloads(obj)
    kernel = _is_kernel(obj)
    lines = list(dict.fromkeys(overload_text(o, kernel=kernel) for o in ovs))  # distinct
    native = "\n".join("    " + o.text for o in ovs if o.text)
    if native:
        lines += ["", "Plugin signature" + ("s:" if len(ovs) > 1 else ":"), native]
    docs = [o.doc for o in ovs if o.doc]
    if docs:
        lines += [""] + docs
    if kernel and ovs:
        args = ", ".join(python_name(p.name) for p in ovs[0].params)
        lines += ["", f"A kernel: run it with q.parallel_do(dims, {args + ', ' if args else ''}"
                      f"{ovs[0].name})."]
    return "\n".join(lines)


# Note [__text_signature__ through __getattr__]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# `type` defines __text_signature__ as a read-only attribute of every class, so assigning a
# property of that name to a class raises AttributeError. Instances do not see the metaclass's
# attribute, though: fn.__text_signature__ finds nothing in native_function's own dictionaries
# and falls back to __getattr__, which answers it. Calls do not go through attribute lookup
# (vectorcall), so the hook costs nothing where it matters.

def _getattr(self, name):
    if name == "__text_signature__":
        return text_signature(self)
    raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


def attach(*types):
    """Gives each of `types` (q.native_function, q.native_kernel) the properties __signature__,
    __text_signature__ and __doc__ (Note [plugin signatures]). Calling it again does nothing."""
    for t in types:
        if t in _NATIVE_DOC:
            continue
        _NATIVE_DOC[t] = t.__dict__["__doc__"]
        t.__signature__ = property(signature, doc="The inspect.Signature of the plugin's callable.")
        if "__getattr__" not in t.__dict__:  # See Note [__text_signature__ through __getattr__]
            t.__getattr__ = _getattr
        t.__doc__ = property(docstring, doc="The Python and plugin signatures and the doc.")
