# pytest configuration of the Python fuzzers: imports `isthmus` from the build folder and starts it.
import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
BUILD_DIR = pathlib.Path(os.environ.get("ISTHMUS_BUILD_DIR", ROOT / "build")).resolve()
if str(BUILD_DIR / "python") not in sys.path:
    sys.path.insert(0, str(BUILD_DIR / "python"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import isthmus as q  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def runtime():
    """The runtime, initialised once for the session."""
    q.init("cpu")
    yield q
    q.destroy()
