"""Faults the page survived: an exception in one action, one event's handler, one answer's
render or one spawned task ends that piece of work alone. Each is reported here (a line with
its traceback, and a count the page's stats expose) instead of reaching the worker's message
handler, where the page would take it for the death of its Python (issue #40).

Pure: where a report goes is a registry filled from above (stderr here; the browser's console
in ``pysse.browser``), so the render, page and app layers can all report without importing
the browser.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable

__all__ = ["COUNT", "REPORT", "count", "report"]


def _to_stderr(message: str) -> None:
    print(message, file=sys.stderr)


REPORT: list[Callable[[str], object]] = [_to_stderr]
COUNT = [0]  # faults survived since the page started (``app.stats()["faults"]``)
LAST: list[str] = []  # the last few reports' first lines (tests and tools read them)


def report(where: str, exc: BaseException) -> None:
    """``where`` failed with ``exc``, and the page goes on: count it and say so, with the
    traceback (the console is where a developer looks). Never raises."""
    COUNT[0] += 1
    head = f"pysse: {where} failed ({type(exc).__name__}: {exc}); the page goes on"
    LAST.append(head)
    del LAST[:-10]
    try:
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        REPORT[0](f"{head}\n{tb}")
    except Exception:  # a report must never become a fault of its own
        _to_stderr(head)


def count() -> int:
    return COUNT[0]
