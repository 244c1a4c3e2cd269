"""Checked reading of the values a chat record brings in from outside: an imported file, the
chat store (IndexedDB, which any script of the origin, an extension or an older build may have
written), localStorage.

Every value is checked where it enters: ints and floats bounded and finite, strings capped,
ids from a small alphabet (they become storage keys and CSS attribute selectors). A file is
read **strictly**: the first bad field refuses the whole file in one sentence that names the
field ("message 3's speed.ttft_ms must be a number from 0 to 1e+09"). The store is read
**leniently**: a bad optional field is dropped and noted, so a damaged chat still opens with
what is readable and the page says what was dropped. Nothing raises past this point but
``ImportError_`` (a ``ValueError``).
"""

from __future__ import annotations

import math
import re
from typing import Any, TypeVar

__all__ = [
    "ID_RE",
    "MAX_TEXT",
    "ImportError_",
    "Reader",
]

T = TypeVar("T")

MAX_TEXT = 4_000_000  # characters of one message (a long answer is ~100 KB)
MAX_SHORT = 2_000  # a title, a state word, a detail line, a URL
ID_RE = re.compile(r"[A-Za-z0-9_.:-]{1,64}")  # keys "chat/message/..." and [data-id='...']


class ImportError_(ValueError):  # "ImportError" is a builtin
    """A conversation file that cannot be imported; the message says what is wrong with it."""


class Reader:
    """Reads fields of one record, strictly (``strict=True``: the first bad one raises
    ``ImportError_`` naming it) or leniently (the bad value is replaced by the field's
    default and noted in ``dropped``)."""

    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.dropped: list[str] = []

    def bad(self, where: str, why: str, default: T) -> T:
        if self.strict:
            raise ImportError_(f"{where} {why}")
        self.dropped.append(f"{where} {why}")
        return default

    def text(self, value: Any, where: str, cap: int = MAX_SHORT) -> str:
        """A string (None reads as ""), at most ``cap`` characters."""
        if value is None:
            return ""
        if not isinstance(value, str):
            return self.bad(where, f"must be text, not {type(value).__name__}", "")
        if len(value) > cap:
            return self.bad(where, f"is longer than {cap:,} characters", value[:cap])
        return value

    def ident(self, value: Any, where: str) -> str:
        """An id: 1-64 characters of letters, digits and ``_.:-`` (never raises in lenient
        mode: "" means unreadable, and the caller drops the record)."""
        if isinstance(value, str) and ID_RE.fullmatch(value):
            return value
        shown = repr(value)[:40]
        return self.bad(where, f"must be an id of 1-64 letters, digits or _.:- (got {shown})", "")

    def number(self, value: Any, where: str, lo: float, hi: float) -> float | None:
        """A finite number from ``lo`` to ``hi`` (None reads as None)."""
        if value is None:
            return None
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if ok and isinstance(value, int):
            ok = lo <= value <= hi  # (a 401-digit int: compared exactly, never float()ed)
        elif ok:
            ok = math.isfinite(value) and lo <= value <= hi
        if not ok:
            return self.bad(where, f"must be a number from {lo:g} to {hi:g}", None)
        return float(value)

    def count(self, value: Any, where: str, lo: int, hi: int) -> int | None:
        """An integer from ``lo`` to ``hi`` (None reads as None)."""
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            return self.bad(where, f"must be a whole number from {lo:,} to {hi:,}", None)
        return value

    def flag(self, value: Any, where: str) -> bool | None:
        if value is None or isinstance(value, bool):
            return value
        return self.bad(where, "must be true or false", None)


def plain_number(value: Any, lo: float, hi: float) -> float | None:
    """``value`` as a float when it is a finite number in range, else None (for values read
    where nobody is told: a list row, an index)."""
    return Reader(strict=False).number(value, "", lo, hi)
