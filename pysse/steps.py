"""Stepwise computations: a generator that yields where a browser task may pause and
returns its result.

Long work on the page's thread (encoding a long chat, parsing an import, searching) is
written once, as steps: the page runs them a frame's budget at a time
(``browser.dom.run_sliced``), and CPython, the CLI and tests run them to the end at once
with ``run_steps``. What a step yields (nothing, or the results so far) is for a caller
that shows progress; ``run_steps`` ignores it.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, TypeVar, cast

__all__ = ["run_steps"]

T = TypeVar("T")


def run_steps(steps: Generator[Any, Any, T]) -> T:
    """Drive a stepwise computation to its end at once, and return its result."""
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            return cast(T, stop.value)
