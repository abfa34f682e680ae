#!/usr/bin/env python3
"""Checks isthmus's design notes: every note is defined once and every citation resolves.

A design note is defined once in the whole repository, in a comment block whose first line is
the heading (the word Note, a space and the name in square brackets) and whose second line is
an underline of tildes exactly as long as the heading text, followed by the note's text:

    // Note [name of the rule]
    // ~~~~~~~~~~~~~~~~~~~~~~~
    // What the rule is and why.

(`#` instead of `//` in Python, CMake and shell files; in a Python docstring the heading and
its underline stand without a comment marker.) Every other mention of the name, in
code comments, tests and the Markdown docs, is a citation: `See Note [name of the rule]`.
Markdown files only cite; they never define.

The check reads the files git tracks (sources, tests, scripts, docs; not the fuzzing corpora
and not binary files) and reports, one `file:line: problem` per line:

  - a citation of a name that has no definition;
  - a name defined more than once;
  - an inline definition: the name followed by a colon (the `Note [x]: text` form) where the
    mention opens a sentence or a parenthesis; after a word ("See Note [x]: ...", "as in
    Note [x]: ...") it is a citation;
  - a heading without its underline of tildes, or with one of the wrong length;
  - a heading in a Markdown file;
  - a plural mention of several notes at once (cite each as Note [name]).

A mention inside a one-line code span (between backticks) is an example of the syntax and is
not checked. A citation broken across a comment line wrap is joined with the next line's text (after its
comment marker). Exit status 0 when the tree is clean, 1 when there are problems.

    python3 scripts/check_notes.py            # check; print the problems and a summary
    python3 scripts/check_notes.py --list     # also list every name with its definition
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from collections import defaultdict

SELF = "scripts/check_notes.py"
SKIP_PREFIXES = ("tests/fuzz/corpus/",)
DOC_SUFFIXES = (".md", ".rst")

WORD = "Note"
# A comment marker at the start of a line: C/C++ (//, ///, //!), Python, CMake and shell (#),
# block-comment bodies (*) and their openings (/*, /**).
MARKER = r"(?://+!?|#+|/\*+|\*)"
HEADING = re.compile(r"^(\s*" + MARKER + r"?)\s*(" + WORD + r" \[([^\[\]]+)\])\s*$")
UNDERLINE = re.compile(r"^\s*" + MARKER + r"?\s*(~+)\s*$")
LEADING = re.compile(r"^\s*(?:" + MARKER + r"\s*)?")
MENTION = re.compile(r"\b" + WORD + r"(s?)\s+\[([^\[\]]*)(\]?)")
TRAILING_WORD = re.compile(r"\b" + WORD + r"s?\s*$")
# A mention that continues a sentence ("See Note [x]: ...", "as in Note [x]: ...") cites.
CITING_WORD_BEFORE = re.compile(r"[A-Za-z]\s+$")


def tracked_files(root: str) -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=root, check=True, capture_output=True
    ).stdout
    names = [n for n in out.decode("utf-8", "surrogateescape").split("\0") if n]
    return [n for n in names if n != SELF and not n.startswith(SKIP_PREFIXES)]


def read_text(path: str) -> list[str] | None:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if b"\0" in data:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text.split("\n")


def continuation(line: str) -> str:
    """A wrapped line's text without its indentation and comment marker."""
    return LEADING.sub("", line, count=1).strip()


class Notes:
    def __init__(self) -> None:
        self.definitions: dict[str, list[tuple[str, int]]] = defaultdict(list)
        self.citations: dict[str, list[tuple[str, int]]] = defaultdict(list)
        self.problems: list[tuple[str, int, str]] = []

    def problem(self, path: str, line: int, message: str) -> None:
        self.problems.append((path, line, message))

    def scan(self, path: str, lines: list[str]) -> None:
        is_doc = path.endswith(DOC_SUFFIXES)
        heading_lines: set[int] = set()
        for i, line in enumerate(lines):
            m = HEADING.match(line)
            if not m:
                continue
            under = UNDERLINE.match(lines[i + 1]) if i + 1 < len(lines) else None
            # Without a comment marker (a Python docstring, a Markdown line) the line is a
            # heading only when its underline follows; otherwise it is a wrapped citation.
            if not m.group(1).strip() and under is None:
                continue
            heading_lines.add(i)
            text, name = m.group(2), " ".join(m.group(3).split())
            if is_doc:
                self.problem(path, i + 1, f"definition of [{name}] in a doc (docs only cite)")
            if under is None:
                self.problem(path, i + 1, f"heading [{name}] without its underline of tildes")
            elif len(under.group(1)) != len(text):
                self.problem(
                    path,
                    i + 2,
                    f"underline of [{name}] is {len(under.group(1))} tildes, "
                    f"the heading is {len(text)} characters",
                )
            self.definitions[name].append((path, i + 1))

        for i, line in enumerate(lines):
            if i in heading_lines:
                continue
            self.scan_mentions(path, lines, i, line)

    def scan_mentions(self, path: str, lines: list[str], i: int, line: str) -> None:
        # The word at the end of the line and its bracket on the next one.
        text = line
        if TRAILING_WORD.search(line) and i + 1 < len(lines):
            nxt = continuation(lines[i + 1])
            if nxt.startswith("["):
                text = line.rstrip() + " " + nxt
        for m in MENTION.finditer(text):
            if m.start() >= len(line):
                break
            ticks = line.count("`", 0, m.start())
            if ticks % 2 and "`" in line[m.start():]:
                continue  # inside a code span: an example of the syntax, not a citation
            plural, name, closed = m.group(1), m.group(2), m.group(3)
            end = m.end()
            joined = text
            j = i
            # A name broken across lines: join the following lines' text until the bracket.
            while not closed and j + 1 < len(lines) and j < i + 3:
                j += 1
                joined = joined[: m.end()] + " " + continuation(lines[j])
                m2 = re.compile(r"([^\[\]]*)(\]?)").match(joined, m.end())
                name = m.group(2) + m2.group(1)
                closed = m2.group(2)
                end = m2.end()
                if closed:
                    break
            name = " ".join(name.split())
            if not closed or not name:
                self.problem(path, i + 1, f"unterminated note name [{name}")
                continue
            if plural:
                self.problem(path, i + 1, f"plural mention of notes [{name}]: cite each one")
            self.citations[name].append((path, i + 1))
            after = joined[end:]
            before = line[: m.start()]
            if not continuation(before) and i > 0 and before.strip():
                # The mention opens a comment line: the sentence may have begun on the last one.
                prev = lines[i - 1]
                if prev.strip().startswith(before.strip()) and continuation(prev):
                    before = prev.rstrip() + " "
            if after.startswith(":") and not CITING_WORD_BEFORE.search(before):
                self.problem(
                    path,
                    i + 1,
                    f"inline definition of [{name}] (write a heading and its underline, "
                    "or cite it with See)",
                )

    def finish(self) -> None:
        for name, places in sorted(self.definitions.items()):
            if len(places) > 1:
                where = ", ".join(f"{p}:{n}" for p, n in places)
                for p, n in places:
                    self.problem(p, n, f"[{name}] defined {len(places)} times ({where})")
        for name, places in sorted(self.citations.items()):
            if name not in self.definitions:
                for p, n in places:
                    self.problem(p, n, f"citation of [{name}], which is defined nowhere")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", help="repository root (default: the git top level)")
    parser.add_argument("--list", action="store_true", help="list every name and its definition")
    args = parser.parse_args(argv)

    root = args.root
    if root is None:
        here = os.path.dirname(os.path.abspath(__file__))
        root = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            cwd=here, check=True, capture_output=True, text=True,
        ).stdout.strip()

    notes = Notes()
    for rel in tracked_files(root):
        lines = read_text(os.path.join(root, rel))
        if lines is not None:
            notes.scan(rel, lines)
    notes.finish()

    if args.list:
        for name in sorted(set(notes.definitions) | set(notes.citations)):
            where = ", ".join(f"{p}:{n}" for p, n in notes.definitions.get(name, [])) or "-"
            print(f"[{name}]  defined: {where}  cited: {len(notes.citations.get(name, []))}")

    for path, line, message in sorted(set(notes.problems)):
        print(f"{path}:{line}: {message}")
    names = set(notes.definitions) | set(notes.citations)
    n_def = sum(len(v) for v in notes.definitions.values())
    n_cit = sum(len(v) for v in notes.citations.values())
    n_prob = len(set(notes.problems))
    print(
        f"check_notes: {len(names)} names, {n_def} definitions, {n_cit} citations, "
        f"{n_prob} problem{'s' if n_prob != 1 else ''}"
    )
    return 1 if n_prob else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
