# Collects the fenced code blocks and relative links of README.md and docs/*.md for test_doc_snippets.py.
#
# Note [documentation snippets]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Every ```python and ```cpp block of README.md and docs/*.md runs as written
# (tests/python/project/test_doc_snippets.py). A page's Python blocks run in order in one fresh
# interpreter, so a later block may use the names an earlier one defined; a C++ block is either
# a complete program (it has `int main`), compiled against the built library and run, or a
# complete plugin source (it has `ISTHMUS_PLUGIN(name, ...)`), compiled with q.compile_string
# as C++ (a CUDA plugin's kernels then get their CPU launcher) and loaded.
# A block that cannot run here says so in the Markdown, on the line right before its fence:
#
#     <!-- snippet: skip (needs a CUDA GPU) -->        runs nowhere in CI; the reason is shown
#     <!-- snippet: fragment (declarations only) -->   not a program: a part of one, an outline
#
# The test reports both as skipped with their reason. An unmarked block must run: a C++ block
# that is neither a program nor a plugin and has no mark fails the test, naming the mark to add.
import dataclasses
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[3]
LANGUAGES = ("python", "cpp")

_FENCE = re.compile(r"^(\s*)```\s*([A-Za-z0-9_+-]*)\s*$")
_MARK = re.compile(r"^\s*<!--\s*snippet:\s*(skip|fragment)\s*(?:\((.*)\))?\s*-->\s*$")
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


@dataclasses.dataclass
class Snippet:
    """One fenced block: where it is, its language, its text and its mark (None: it must run)."""

    page: pathlib.Path
    line: int  # 1-based line of the opening fence
    language: str
    code: str
    mark: str | None = None  # "skip" or "fragment"
    reason: str = ""

    @property
    def where(self):
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def pages():
    """README.md and every page under docs/, in a stable order."""
    return [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))


def snippets(page):
    """The fenced blocks of one Markdown page, with the mark written right before each."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found = []
    marks = {n for n, text in enumerate(lines) if _MARK.match(text)}
    used = set()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, language = m.group(1), m.group(2).lower()
        start = i
        body = []
        i += 1
        while i < len(lines) and not re.match(r"^\s*```\s*$", lines[i]):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        if i >= len(lines):
            raise ValueError(f"{page.relative_to(ROOT)}:{start + 1}: unclosed ``` fence")
        i += 1
        mark, reason = None, ""
        before = start - 1
        while before >= 0 and not lines[before].strip():
            before -= 1
        if before >= 0:
            mm = _MARK.match(lines[before])
            if mm:
                mark, reason = mm.group(1), (mm.group(2) or "").strip()
                used.add(before)
        found.append(Snippet(page, start + 1, language, "\n".join(body) + "\n", mark, reason))
    stray = sorted(marks - used)
    if stray:
        raise ValueError(f"{page.relative_to(ROOT)}:{stray[0] + 1}: a snippet mark must come "
                         "right before a ``` fence (blank lines allowed)")
    return found


def relative_links(page):
    """(line, target) for each Markdown link of the page to a file of the repository."""
    out = []
    in_fence = False
    for n, text in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if _FENCE.match(text) or re.match(r"^\s*```\s*$", text):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        for target in _LINK.findall(re.sub(r"`[^`]*`", "", text)):  # not inside code spans
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue  # a URL (http:, mailto:) or an anchor in the same page
            out.append((n, target.split("#", 1)[0]))
    return out


def is_program(snippet):
    """Whether a C++ block is a whole program (it defines main)."""
    return re.search(r"\bint\s+main\s*\(", snippet.code) is not None


def plugin_name(snippet):
    """The name of the plugin a C++ block defines (ISTHMUS_PLUGIN(name, m)), else None."""
    m = re.search(r"\bISTHMUS_PLUGIN\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*,", snippet.code)
    return m.group(1) if m else None
