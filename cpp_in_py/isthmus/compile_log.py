"""Notices of slow plugin compiles: the ``isthmus.compile`` logger (Note [compile notices]).

A ``q.compile_string`` / ``q.compile_file`` that still compiles after half a second (the
``ISTHMUS_COMPILE_NOTICE_SECONDS`` setting) reports once what it compiles and where it caches,
through :func:`report`, which the native module calls on the compiling thread:

    INFO:isthmus.compile:isthmus: compiling plugin 'color_temperature' (C++, g++) into
    /root/.cache/isthmus/color_temperature-1f0c....so; a first compile takes seconds, ...

A program whose logging shows INFO records of ``isthmus.compile`` gets the record like any
other (level INFO; the record's ``plugin``, ``language``, ``compiler``, ``library`` and
``waiting`` attributes hold the parts). Where no handler would show it (no logging configured,
or ``logging.basicConfig()`` at its default WARNING level, or the logger's level above INFO),
the message goes to stderr instead, so a slow compile is never silent; ``ISTHMUS_VERBOSE=0``
turns that off.
"""

from __future__ import annotations

import logging
import os
import sys

__all__ = ["logger", "report"]

#: The logger compile notices go to.
logger = logging.getLogger("isthmus.compile")


def report(plugin: str, language: str, compiler: str, library: str, waiting: bool,
           message: str) -> None:
    """Reports one slow compile (called by the native module; see the module's doc)."""
    if _shown(logging.INFO):
        logger.info(message, extra={"plugin": plugin, "language": language,
                                    "compiler": compiler, "library": library,
                                    "waiting": waiting})
        return
    if os.environ.get("ISTHMUS_VERBOSE", "1") != "0":
        print(message, file=sys.stderr, flush=True)


def _shown(level: int) -> bool:
    """Whether a record of ``level`` on the compile logger reaches a handler that emits it."""
    if not logger.isEnabledFor(level):
        return False
    node: logging.Logger | None = logger
    while node is not None:
        if any(level >= h.level for h in node.handlers):
            return True
        if not node.propagate:
            return False
        node = node.parent
    return False
