"""Schema strings of q.torch.custom_op and q.torch.kernel_op: torch's schema grammar, the part a
plugin op can use (Note [plugins as custom ops] in torch_ops.py).

    s = parse("(Tensor(a!) y, Tensor x, float s) -> (Tensor, Tensor)", "ns::op")
    s.names == ["y", "x", "s"]; s.mutated == ["y"]; s.returns == 2
"""

# Note [schema subset]
# ~~~~~~~~~~~~~~~~~~~~
# torch.library parses the schema itself, but its errors speak of its own parser, and some
# well-formed schemas cannot work with a plugin behind them. So a schema given to custom_op or
# kernel_op is read here first, with torch's grammar for what is accepted:
#
#     schema    := "(" [argument ("," argument)*] ")" "->" returns
#     argument  := type name
#     type      := base [alias] ["[" [digits] "]"] ["?"]      alias: "(" letter [letters] ["!"] ")"
#     returns   := "()" | "Tensor" | "(" "Tensor" [name] ("," "Tensor" [name])* ")"
#
# base: Tensor, int, SymInt, float, SymFloat, bool, str, complex, Scalar; an alias only on a
# Tensor (written: "!", which makes the argument one of the op's mutated arguments). Refused
# with a ValueError naming the part: default values (torch hands a custom op's implementation
# only the arguments the caller gave, so the plugin would be called short), keyword-only
# arguments ("*": plugins take positional arguments), lists of tensors, other types (ScalarType,
# Device, ...: a plugin has no parameter kind for them), results other than tensors (a plugin's
# number comes back as a 0-d tensor, so its result type is Tensor), aliased results, and an op
# name in front of the parentheses (custom_op names the op itself).

from __future__ import annotations

import dataclasses
import keyword
import re

_BASES = ("Tensor", "int", "SymInt", "float", "SymFloat", "bool", "str", "complex", "Scalar")
_ARGUMENT = re.compile(
    r"(?P<base>[A-Za-z_]\w*)"
    r"(?:\(\s*(?P<alias>[a-z]\w*)\s*(?P<written>!)?\s*\))?"
    r"(?P<list>\[\s*\d*\s*\])?"
    r"(?P<optional>\?)?"
    r"\s+(?P<name>[A-Za-z_]\w*)")
_RESULT = re.compile(r"(?P<type>[A-Za-z_][\w\[\]?()!]*)(?:\s+(?P<name>[A-Za-z_]\w*))?")
_FORM = ("a schema is '(<type> <name>, ...) -> <result>' as torch.library.custom_op takes it, "
         "e.g. '(Tensor a, Tensor x) -> Tensor'")


@dataclasses.dataclass(frozen=True)
class Argument:
    type: str  # as written, alias included: "Tensor(a!)"
    name: str
    tensor: bool
    written: bool

    @property
    def plain_type(self) -> str:
        """The type without its alias annotation ("Tensor(a!)" -> "Tensor")."""
        return re.sub(r"\([^)]*\)", "", self.type)


@dataclasses.dataclass(frozen=True)
class Schema:
    text: str
    arguments: tuple[Argument, ...]
    returns: int  # 0 for "()", else the number of tensors

    @property
    def names(self) -> list[str]:
        return [a.name for a in self.arguments]

    @property
    def mutated(self) -> list[str]:
        return [a.name for a in self.arguments if a.written]


def _closing(text: str, start: int) -> int:
    """The index of the parenthesis closing text[start] ("("), or -1."""
    depth = 0
    for i in range(start, len(text)):
        c = text[i]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
            if depth == 0:
                return i if c == ")" else -1
            if depth < 0:
                return -1
    return -1


def _split(text: str) -> list[str]:
    """text split at the commas outside parentheses and brackets."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def parse(schema: object, op: str) -> Schema:
    """The schema string's arguments and results; TypeError or ValueError naming the problem
    (Note [schema subset])."""
    if not isinstance(schema, str):
        raise TypeError(f"{op}: schema= takes a string, got {type(schema).__name__}")

    def bad(why: str) -> ValueError:
        return ValueError(f"{op}: schema {schema!r}: {why}; {_FORM}")

    text = schema.strip()
    if not text.startswith("("):
        head = text.split("(", 1)[0].strip()
        if "(" in text and re.fullmatch(r"[\w:.]+", head):
            raise bad(f"it starts with the name {head!r}, which custom_op gives the op itself")
        raise bad("it does not start with '('")
    close = _closing(text, 0)
    if close < 0:
        raise bad("its parentheses do not match")
    rest = text[close + 1:].strip()
    if not rest.startswith("->"):
        raise bad("'->' and the result must follow the arguments")
    arguments: list[Argument] = []
    inner = text[1:close].strip()
    for part in _split(inner) if inner else []:
        if not part:
            raise bad("it has an empty argument")
        if part == "*":
            raise bad("keyword-only arguments ('*') cannot reach a plugin, which takes positional "
                      "arguments")
        if "=" in part:
            raise bad(f"the argument {part!r} has a default value, which a custom op does not "
                      f"pass to its implementation (every argument must be given)")
        m = _ARGUMENT.fullmatch(part)
        if not m:
            raise bad(f"the argument {part!r} is not '<type> <name>'")
        base, name = m.group("base"), m.group("name")
        if base not in _BASES:
            raise bad(f"the argument {name!r} has the type {base!r}; a plugin op takes "
                      f"{', '.join(_BASES)}")
        tensor = base == "Tensor"
        if m.group("alias") and not tensor:
            raise bad(f"the argument {name!r}: only a Tensor has an alias annotation")
        if tensor and m.group("list"):
            raise bad(f"the argument {name!r} is a list of tensors, which a plugin cannot take")
        if keyword.iskeyword(name) or name in (a.name for a in arguments):
            raise bad(f"{name!r} cannot name an argument (a keyword, or named twice)")
        arguments.append(Argument(m.group(0).rsplit(None, 1)[0], name, tensor,
                                  bool(m.group("written"))))
    return Schema(text, tuple(arguments), _returns(rest[2:].strip(), bad))


def _returns(text: str, bad) -> int:
    if text == "()":
        return 0
    if text.startswith("(") and _closing(text, 0) == len(text) - 1:
        items = _split(text[1:-1])
    else:
        items = [text]
    for item in items:
        m = _RESULT.fullmatch(item)
        if not m or m.group("type") != "Tensor":
            raise bad(f"the result {item!r} is not a Tensor: a plugin op returns (), Tensor or a "
                      f"tuple of Tensors (a plugin's number comes back as a 0-d Tensor)")
    return len(items)
