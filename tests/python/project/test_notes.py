"""The design notes: scripts/check_notes.py over the repository's tracked files.

Each note is defined once (a comment heading and its underline of tildes) and every citation
names a note that exists; docs/testing.md, "Design notes", describes the convention.
"""
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "check_notes.py"


def _is_git_checkout():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return False
    r = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=ROOT,
                       capture_output=True, text=True)
    return r.returncode == 0 and pathlib.Path(r.stdout.strip()).resolve() == ROOT


@pytest.mark.skipif(not _is_git_checkout(), reason="needs a git checkout (git ls-files)")
def test_every_note_defined_once_and_every_citation_resolves():
    r = subprocess.run([sys.executable, str(SCRIPT), "--root", str(ROOT)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"scripts/check_notes.py found problems:\n{r.stdout}{r.stderr}"
