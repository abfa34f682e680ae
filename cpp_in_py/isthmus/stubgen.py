"""`python -m isthmus.stubgen NAME [-o FILE]`: a .pyi type stub for a plugin module."""

# Usage (docs/plugins.md, "Tooling"):
#
#     python -m isthmus.stubgen example              # ISTHMUS_PLUGIN_PATH, then the working dir
#     python -m isthmus.stubgen build/libexample.so  # a shared object (a path with / or .so)
#     python -m isthmus.stubgen blur.cpp -o blur.pyi # a source file, compiled through the cache
#
# NAME is a C++ or CUDA source file (.cpp, .cc, .cxx, .cu: compiled with q.compile_file, with
# the --flag and --lang given), a shared object (a path containing "/" or ending in .so:
# q.import_native) or a plugin name (q.import_native, which searches ISTHMUS_PLUGIN_PATH and
# then the working directory). The stub goes to FILE, by default <plugin name>.pyi in the working
# directory; "-o -" writes it to stdout. Exit codes: 0 written, 2 an error (a missing file, a
# plugin that does not load or compile), with a one-line message on stderr.
#
# Note [plugin stubs]
# ~~~~~~~~~~~~~~~~~~~
# The stub describes what the module returned by import_native holds:
#   - each function, with its signature (one @overload per distinct Python signature) and doc;
#   - each kernel as `name: native_kernel` (a kernel is not called: parallel_do runs it),
#     followed by a string with its signature and doc;
#   - each object type as a class deriving from native_object, with its fields, events
#     (native_event) and methods. The plugin exposes a type's constructor as a function named
#     like the type; that function appears as the class (its __init__ the constructor's
#     overloads), so `m.button("ok").label` type-checks. A type without a constructor is only
#     ever returned by functions, and is not an attribute of the module: its class gets a
#     leading underscore (`_handle`) to say so.
#   - `functions` and `kernels`, the tuples of names.
# The types come from the module's docstring (library::describe(), which lists every type's
# fields, methods and events); functions and kernels from their signatures (Note [plugin
# signatures]). Functions returning an object are typed `native_object`, as the descriptor's
# result names no type.

import argparse
import sys
from pathlib import Path

from . import signatures as sg

__all__ = ["StubgenError", "load", "plugin_types", "stub_text", "main"]

SOURCE_SUFFIXES = (".cpp", ".cc", ".cxx", ".cu")


class StubgenError(Exception):
    """stubgen could not load the plugin or write the stub (exit code 2 from the command line)."""


def load(name, *, flags=(), lang=None):
    """The plugin module for NAME: a source file (compiled), a shared object or a plugin name;
    see the usage above. Initialises isthmus on the CPU if nothing did."""
    import isthmus as q

    if not q.is_initialized():
        q.init("cpu")
    p = Path(name)
    try:
        if p.suffix in SOURCE_SUFFIXES:
            if not p.is_file():
                raise StubgenError(f"no such source file: {name}")
            return q.compile_file(str(p), list(flags), lang=lang)
        if ("/" in name or p.suffix == ".so") and not p.is_file():
            raise StubgenError(f"no such shared object: {name}")
        return q.import_native(name)
    except StubgenError:
        raise
    except (RuntimeError, ValueError, OSError) as e:  # CompileError is a RuntimeError
        raise StubgenError(f"cannot load plugin {name!r}: {e}") from e


def plugin_types(module):
    """The object types of a plugin module, parsed from its docstring (library::describe()):
    {type name: {"fields": [(name, type)], "methods": [signature line], "events": [(name,
    callback signature)]}}."""
    types, cur = {}, None
    for line in (module.__doc__ or "").splitlines():
        word, _, rest = line.strip().partition(" ")
        if line.startswith("  type "):
            cur = types.setdefault(rest, {"fields": [], "methods": [], "events": []})
        elif line.startswith("    ") and cur is not None:
            if word == "field":
                n, _, t = rest.partition(": ")
                cur["fields"].append((n, t))
            elif word == "method":
                cur["methods"].append(rest)
            elif word == "event":
                n, _, sig = rest.partition("(")
                cur["events"].append((n, "(" + sig))
        else:
            cur = None
    return types


def _doc_literal(text, indent):
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    lines = text.splitlines() or [""]
    body = ("\n" + indent).join(lines)
    return f'{indent}"""{body}\n{indent}"""' if len(lines) > 1 else f'{indent}"""{body}"""'


def _params(ov, object_types, names=None):
    names = [] if names is None else names
    out = []
    for p in ov.params:
        n = sg.python_name(p.name, names)
        names.append(n)
        t = sg.annotation_text(p.type_name, kind=p.kind, object_types=object_types)
        out.append(f"{n}: {t}")
    return out


def _defs(name, ovs, object_types, *, indent="", self_param=False, result_override=None,
          doc=""):
    """`def` lines for the overloads (one per distinct signature, @overload when several)."""
    seen = {}
    for ov in ovs:
        args = _params(ov, object_types, ["self"] if self_param else None)
        if args:
            args.append("/")
        if self_param:
            args.insert(0, "self")
        res = result_override or sg.annotation_text(ov.result, result=True,
                                                    object_types=object_types)
        seen.setdefault(f"def {name}({', '.join(args)}) -> {res}:", None)
    out = []
    for i, head in enumerate(seen):
        if len(seen) > 1:
            out.append(f"{indent}@overload")
        if i == 0 and doc:
            out += [f"{indent}{head}", _doc_literal(doc, indent + "    ")]
        else:
            out.append(f"{indent}{head} ...")
    return out


def stub_text(module):
    """The .pyi text for a plugin module (Note [plugin stubs])."""
    types = plugin_types(module)
    functions = list(getattr(module, "functions", ()))
    kernels = list(getattr(module, "kernels", ()))
    ctors = {t for t in types if t in functions}
    cls = {t: (t if t in ctors else "_" + t) for t in types}
    out = [f'"""Type stubs for the isthmus plugin {module.__name__} '
           f'({getattr(module, "__file__", "?")}); written by python -m isthmus.stubgen."""',
           "from collections.abc import Callable, Sequence",
           "from typing import Any, overload",
           "",
           "import numpy as np",
           "",
           "from isthmus import native_event, native_kernel, native_object, qvalue",
           "",
           "functions: tuple[str, ...]",
           "kernels: tuple[str, ...]",
           ""]
    for t, members in types.items():
        out.append(f"class {cls[t]}(native_object):")
        out.append(_doc_literal(f"Plugin object type {t}.", "    "))
        for n, ty in members["fields"]:
            out.append(f"    {sg.python_name(n)}: "
                       f"{sg.annotation_text(ty, object_types=cls)}")
        for n, sig in members["events"]:
            out.append(f"    {sg.python_name(n)}: native_event  # callbacks receive {sig}")
        if t in ctors:
            fn = getattr(module, t)
            out += _defs("__init__", sg.overloads(fn), cls, indent="    ", self_param=True,
                         result_override="None", doc=sg.overloads(fn)[0].doc)
        for line in members["methods"]:
            ov = sg.parse_signature(line)
            out += _defs(sg.python_name(ov.name), [ov], cls, indent="    ", self_param=True)
        out.append("")
    for n in functions:
        if n in ctors:
            continue
        ovs = sg.overloads(getattr(module, n))
        out += _defs(n, ovs, cls, doc="\n\n".join(o.doc for o in ovs if o.doc))
        out.append("")
    for n in kernels:
        k = getattr(module, n)
        out.append(f"{n}: native_kernel")
        out.append(_doc_literal(sg.docstring(k), ""))
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # a typed error instead of SystemExit (main() maps it to 2)
        raise StubgenError(f"{self.prog}: {message}")


def main(argv=None, *, stdout=None, stderr=None):
    """Runs the command line (argv without the program name; default sys.argv[1:]) and returns
    the exit code: 0 written, 2 an error."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    p = _Parser(prog="python -m isthmus.stubgen",
                description="Write a .pyi type stub for an isthmus plugin module.")
    p.add_argument("name", help="a plugin name, a shared object, or a .cpp/.cu source file")
    p.add_argument("-o", "--output", help="the .pyi to write (default NAME.pyi; - for stdout)")
    p.add_argument("--flag", action="append", default=[],
                   help="a compiler flag for a source file (repeatable)")
    p.add_argument("--lang", choices=("c++", "cuda"), help="the source's language")
    try:
        try:
            args = p.parse_args(sys.argv[1:] if argv is None else list(argv))
        except SystemExit as e:  # --help
            return e.code if isinstance(e.code, int) else 0
        module = load(args.name, flags=args.flag, lang=args.lang)
        text = stub_text(module)
        if args.output == "-":
            out.write(text)
            return 0
        target = Path(args.output or f"{module.__name__}.pyi")
        try:
            target.write_text(text)
        except OSError as e:
            raise StubgenError(f"cannot write {target}: {e}") from e
        print(f"wrote {target}", file=out)
        return 0
    except StubgenError as e:
        print(f"isthmus.stubgen: error: {e}", file=err)
        return 2


if __name__ == "__main__":
    sys.exit(main())
