"""The repository holds source, docs and small test data only: no tracked file over 1 MB
(downloaded packages, wheels and build outputs stay out of git), fuzz corpora excepted; and no
words of how the project is developed in its text."""
import pathlib
import re
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
LIMIT = 1 << 20
EXEMPT = ("tests/fuzz/corpus/",)


def tracked_files():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True,
                         check=True).stdout
    return [p for p in out.decode().split("\0") if p]


def test_no_tracked_file_over_a_megabyte():
    files = tracked_files()
    assert files
    big = []
    for rel in files:
        path = ROOT / rel
        if rel.startswith(EXEMPT) or not path.is_file():
            continue
        size = path.stat().st_size
        if size > LIMIT:
            big.append(f"{rel} ({size / LIMIT:.1f} MB)")
    assert not big, "tracked files over 1 MB: " + ", ".join(big)


def test_no_packages_or_build_outputs_tracked():
    suffixes = (".whl", ".so", ".o", ".a", ".pyc", ".tar.gz")
    bad = [rel for rel in tracked_files() if rel.endswith(suffixes)]
    assert not bad, f"packages or build outputs tracked: {bad}"


# Words of how the project is developed, not of what it is: a source document is named for what
# it is ("the PyQuasar manual"), and history (which change fixed what) lives in git.
INTERNAL_WORDS = [
    (re.compile(r"\bthe s[e]ed's\b", re.IGNORECASE),
     "name the document (the PyQuasar manual, the Quadrants docs, ...)"),
    (re.compile(r"\bi[s]sues? \d+\b|\(i[s]sue\b", re.IGNORECASE), "history lives in git"),
]


def test_no_internal_words_in_tracked_text():
    bad = []
    for rel in tracked_files():
        path = ROOT / rel
        if rel.startswith(EXEMPT) or not path.is_file() or path.stat().st_size > LIMIT:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for lineno, line in enumerate(text.splitlines(), 1):
            for pattern, fix in INTERNAL_WORDS:
                if pattern.search(line):
                    bad.append(f"{rel}:{lineno}: {line.strip()[:80]} ({fix})")
    assert not bad, "internal words:\n" + "\n".join(bad)


@pytest.mark.parametrize("line,flagged", [
    ("the " + "se" + "ed's LOCK_* constants", True),
    ("the PyQuasar manual's LOCK_* constants", False),
    ("Regression reproducers of " + "is" + "sue 13", True),
    ("(" + "is" + "sue 7, item 4)", True),
    ("starting from the seed corpora in tests/fuzz/corpus/", False),
    ("Philox keyed by the seed, counter = element index", False),
])
def test_the_internal_word_patterns(line, flagged):
    assert any(p.search(line) for p, _ in INTERNAL_WORDS) == flagged
