"""The repository holds source, docs and small test data only: no tracked file over 1 MB
(downloaded packages, wheels and build outputs stay out of git), fuzz corpora excepted."""
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
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
