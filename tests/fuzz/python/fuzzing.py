"""Shared machinery of the Python fuzzers: the time budget, seeds, corpus replay, reporting.

Each fuzzer is a pytest test that first replays its committed corpus
(tests/fuzz/corpus/<target>/seeds.txt, one case per line) and then runs hypothesis in batches
until its time budget is spent. Environment:

  ISTHMUS_FUZZ_SECONDS  seconds each fuzzer runs after the replay (default 20; scripts/fuzz
                        sets it, run longer by hand with e.g. ISTHMUS_FUZZ_SECONDS=600)
  ISTHMUS_FUZZ_SEED     the first batch's seed, to replay a run (unset or "random": a fresh
                        one, printed)
"""

import os
import pathlib
import random
import re
import sys
import time

import hypothesis
import numpy as np
from hypothesis import HealthCheck, Phase

CORPUS = pathlib.Path(__file__).resolve().parents[1] / "corpus"
SECONDS = float(os.environ.get("ISTHMUS_FUZZ_SECONDS", "20"))

# Names a corpus line may use: NumPy's (array, int64, uint8, bool_, ...), slice and np itself.
_NAMESPACE = {k: v for k, v in vars(np).items() if not k.startswith("_")}
_NAMESPACE.update({"np": np, "slice": slice, "Ellipsis": Ellipsis, "__builtins__": {}})


def corpus_cases(target, fields):
    """The cases of tests/fuzz/corpus/<target>/seeds.txt: each line holds `fields` Python
    expressions over NumPy's names, separated by ' ; ' (the last may contain it); an empty
    field (also a trailing ' ;') is None; lines starting with # are comments."""
    path = CORPUS / target / "seeds.txt"
    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = [f.strip() for f in re.split(r"\s;(?=\s|$)", line, maxsplit=fields - 1)]
        parts += [""] * (fields - len(parts))
        out.append((f"{target}/seeds.txt:{n}", [eval(f, _NAMESPACE) if f else None for f in parts]))
    return out


def replay(target, fields, check):
    """Runs check(tuple(case)) on every corpus case; raises one AssertionError listing every
    failing case (not only the first)."""
    failures = []
    for where, case in corpus_cases(target, fields):
        try:
            check(tuple(case))
        except Exception as e:  # noqa: BLE001 - every failing case is reported
            failures.append(f"{where}: {type(e).__name__}: {e}")
    if failures:
        raise AssertionError(f"{len(failures)} corpus case(s) fail:\n" + "\n".join(failures))


def _expression(value):
    """A Python expression over corpus_cases' names that rebuilds `value`: repr, except for
    NumPy arrays, whose repr can abbreviate (`...`) or name a shape `array` does not take."""
    if isinstance(value, np.ndarray):
        if value.size == 0:
            return f"empty({value.shape!r}, dtype={value.dtype.name})"
        return f"array({value.tolist()!r}, dtype={value.dtype.name})"
    if isinstance(value, tuple):
        inner = ", ".join(_expression(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_expression(v) for v in value) + "]"
    return " ".join(repr(value).split())


def corpus_line(*fields):
    """A corpus line for the given values (one line), to paste into seeds.txt."""
    return " ; ".join("" if f is None else _expression(f) for f in fields)


def run_for(strategy, check, seconds=None, batch=100):
    """Runs check(case) on cases drawn from `strategy` for `seconds` (at least one batch).
    A failure is shrunk by hypothesis and re-raised with the falsifying case and the seed."""
    seconds = SECONDS if seconds is None else seconds
    given = os.environ.get("ISTHMUS_FUZZ_SEED", "random")
    first = random.randrange(1 << 30) if given in ("", "random") else int(given)
    # Straight to file descriptor 2, past pytest's --capture=sys (scripts/fuzz): the seed must
    # survive a crash.
    os.write(2, f"fuzzing {seconds:g} s from seed {first} (ISTHMUS_FUZZ_SEED={first} repeats "
                f"it)\n".encode())
    end = time.monotonic() + seconds
    n = 0
    while n == 0 or time.monotonic() < end:

        @hypothesis.seed(first + n)
        @hypothesis.settings(max_examples=batch, database=None, deadline=None,
                             suppress_health_check=list(HealthCheck),
                             phases=[Phase.generate, Phase.shrink], report_multiple_bugs=False)
        @hypothesis.given(strategy)
        def one(case):
            check(case)

        one()
        n += 1
    print(f"fuzzed {n} batches of {batch}", file=sys.stderr)
