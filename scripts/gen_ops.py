#!/usr/bin/env python3
"""Regenerates the parts of the .pyi stubs, docs/ops.md and docs/autograd.md from the op table.

The table is core/include/isthmus/ops/op_table.hpp (Note [one op table]); this script reads
its rows as text (no build needed) and rewrites what lies between the GENERATED markers:

    python3 scripts/gen_ops.py           # rewrite the stubs and the docs
    python3 scripts/gen_ops.py --check   # exit 1, naming the stale files, if they differ

tests/python/core/test_op_table.py and the CTest test op_table_generated run the check.
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
TABLE = ROOT / "core/include/isthmus/ops/op_table.hpp"
STUBS = ROOT / "cpp_in_py/isthmus/__init__.pyi"
DOCS = ROOT / "docs/ops.md"
AUTOGRAD_DOCS = ROOT / "docs/autograd.md"
COMMAND = "python3 scripts/gen_ops.py"

_ROW = re.compile(
    r'^\s*X\((?P<name>\w+), (?P<rule>\w+), (?:(?P<on_bool>\w+), )?'
    r'"(?P<python>[^"]*)", "(?P<doc>(?:[^"\\]|\\.)*)"\)\s*\\?\s*$'
)


def _macro_body(text, macro):
    """The lines of `#define MACRO(X) \\ ...` up to the first line without a continuation."""
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith(f"#define {macro}(X)"))
    body = []
    for line in lines[start + 1:]:
        body.append(line)
        if not line.rstrip().endswith("\\"):
            break
    return body


def _rows(text, macro, arity, view=False):
    rows = []
    for line in _macro_body(text, macro):
        m = _ROW.match(line)
        if not m:
            raise SystemExit(f"{TABLE.name}: cannot parse this row of {macro}:\n{line}")
        row = {
            "name": m["name"],
            "arity": arity,
            "rule": m["rule"],
            "python": m["python"].split(),
            "doc": m["doc"].replace('\\"', '"'),
        }
        if arity == 1:
            row["view"] = view
        else:
            row["on_bool"] = m["on_bool"]
        rows.append(row)
    return rows


def parse(text=None):
    """The table's rows, as q._op_table() returns them."""
    text = TABLE.read_text() if text is None else text
    return (_rows(text, "ISTHMUS_UNARY_OPS", 1) + _rows(text, "ISTHMUS_UNARY_PART_OPS", 1, True)
            + _rows(text, "ISTHMUS_BINARY_OPS", 2))


def rule_docs(text=None):
    """{enum: [(value, doc)]} of the column enums unary_rule, binary_rule, binary_bool."""
    text = TABLE.read_text() if text is None else text
    out = {}
    for enum in ("unary_rule", "binary_rule", "binary_bool"):
        block = re.search(r"enum class %s : \w+ \{(.*?)\};" % enum, text, re.S)[1]
        out[enum] = re.findall(r"^\s*(\w+),\s*///< (.*)$", block, re.M)
    return out


def _split_top(args):
    """Splits a macro row's arguments at the commas outside parentheses."""
    out, depth, cur = [], 0, ""
    for c in args:
        if c == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += c == "("
        depth -= c == ")"
        cur += c
    out.append(cur.strip())
    return out


def derivatives(text=None):
    """The derivative rows (Note [derivatives in the op table]): a list of
    {"name", "arity", "saves", "formulas"}; formulas are C++ expressions, or "zero" / "none"."""
    text = TABLE.read_text() if text is None else text
    rows = []
    for macro, arity in (("ISTHMUS_UNARY_DERIVATIVES", 1), ("ISTHMUS_BINARY_DERIVATIVES", 2)):
        for line in _macro_body(text, macro):
            body = line.strip().rstrip("\\").strip()
            if not (body.startswith("X(") and body.endswith(")")):
                raise SystemExit(f"{TABLE.name}: cannot parse this row of {macro}:\n{line}")
            parts = _split_top(body[2:-1])
            if len(parts) != 2 + arity:
                raise SystemExit(f"{TABLE.name}: {macro} row {parts[0]} needs {2 + arity} columns")
            rows.append({"name": parts[0], "arity": arity, "saves": parts[1],
                         "formulas": parts[2:]})
    return rows


def derivatives_block(rows):
    out = ["| op | keeps | d/dx (unary) or d/da, d/db (binary) |", "| --- | --- | --- |"]
    for r in rows:
        if r["formulas"][0] == "none":
            f = "not differentiable"
        elif r["formulas"][0] == "zero":
            f = "0 (almost everywhere)"
        else:
            f = "; ".join(f"`{x}`" for x in r["formulas"])
        out.append(f"| `{r['name']}` | {r['saves']} | {f} |")
    return out


def _alias_doc(doc, names, i):
    if i == 0:
        return doc
    return doc.rstrip(".") + f" (alias of {names[0]})."


def stubs_block(rows):
    out = ["# elementwise, one argument (the op table's unary rows)"]
    for r in (r for r in rows if r["arity"] == 1):
        for i, n in enumerate(r["python"]):
            out.append(f"def {n}(x: _ArrayLike) -> qvalue:")
            out.append(f'    """{_alias_doc(r["doc"], r["python"], i)}"""')
    out.append("")
    out.append("# elementwise, two arguments (broadcasting; Python numbers are weak scalars)")
    for r in (r for r in rows if r["arity"] == 2):
        for i, n in enumerate(r["python"]):
            out.append(f"def {n}(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:")
            out.append(f'    """{_alias_doc(r["doc"], r["python"], i)}"""')
    return out


def docs_block(rows, rules):
    def md(s):
        return s.replace("|", "\\|")

    out = ["| C++ (`isthmus::`) | Python (`q.`) | rule | what it does |", "| --- | --- | --- | --- |"]
    for r in rows:
        rule = r["rule"] + (f", bool: {r['on_bool']}" if r["arity"] == 2 else "")
        py = ", ".join(f"`{n}`" for n in r["python"])
        cxx = f"`{r['name']}({'a' if r['arity'] == 1 else 'a, b'})`"
        out.append(f"| {cxx} | {py} | {rule} | {md(r['doc'])} |")
    out.append("")
    out.append("Rules (the `rule` column; `enum class unary_rule` / `binary_rule` / `binary_bool`):")
    out.append("")
    for enum, title in (("unary_rule", "unary"), ("binary_rule", "binary"),
                        ("binary_bool", "binary, bool operands")):
        for value, doc in rules[enum]:
            out.append(f"- {title} `{value}`: {md(doc)}")
    return out


def _replace_between(text, begin, end, lines, path):
    i, j = text.find(begin), text.find(end)
    if i < 0 or j < i:
        raise SystemExit(f"{path}: the markers '{begin}' and '{end}' are missing")
    head = text[: i + len(begin)]
    return head + "\n" + "\n".join(lines) + "\n" + text[j:]


STUB_BEGIN = "# BEGIN GENERATED by scripts/gen_ops.py from the op table: do not edit"
STUB_END = "# END GENERATED"
DOCS_BEGIN = "<!-- BEGIN GENERATED by scripts/gen_ops.py from the op table: do not edit -->"
DOCS_END = "<!-- END GENERATED -->"


def generate():
    """{path: new text} for the files the table feeds."""
    text = TABLE.read_text()
    rows = parse(text)
    return {
        STUBS: _replace_between(STUBS.read_text(), STUB_BEGIN, STUB_END, stubs_block(rows),
                                STUBS),
        DOCS: _replace_between(DOCS.read_text(), DOCS_BEGIN, DOCS_END,
                               docs_block(rows, rule_docs(text)), DOCS),
        AUTOGRAD_DOCS: _replace_between(AUTOGRAD_DOCS.read_text(), DOCS_BEGIN, DOCS_END,
                                        derivatives_block(derivatives(text)), AUTOGRAD_DOCS),
    }


def stale():
    """The files whose committed text differs from what the table generates."""
    return [p for p, new in generate().items() if p.read_text() != new]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only report stale files (exit 1)")
    args = ap.parse_args()
    if args.check:
        bad = stale()
        for p in bad:
            print(f"{p.relative_to(ROOT)} is stale: the op table changed; regenerate with "
                  f"`{COMMAND}`", file=sys.stderr)
        return 1 if bad else 0
    for p, new in generate().items():
        if p.read_text() != new:
            p.write_text(new)
            print(f"wrote {p.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
