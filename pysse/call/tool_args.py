"""A tool call's JSON arguments, shown while they stream: pretty JSON of what has arrived,
with the incomplete tail held back (the same rule as markdown's hold-back: never show what
may still change meaning), and the whole, pretty, once it parses.

A model streams ``{"city": "Lis`` and then ``bon", "days": 3}``. Mid-way, the text is not
JSON; closing what is open (the string, the object) makes it JSON, and a key whose value has
not started yet, or a number or ``true`` still arriving, is held back until it is whole. The
arguments are model output: the result is plain text (the page sets it as ``textContent``),
nesting is bounded (``jsonsafe``), and past ``PARTIAL_MAX`` characters a partial value is not
re-parsed on every frame (only its size is shown) so the cost per frame stays flat.
"""

from __future__ import annotations

import json

from ..jsonsafe import loads_bounded

__all__ = ["PARTIAL_MAX", "pretty_arguments"]

PARTIAL_MAX = 16_384  # characters of incomplete arguments still completed and shown


def pretty_arguments(text: str) -> tuple[str, bool]:
    """``(shown, complete)``: the arguments as indented JSON and whether they parsed whole.
    Incomplete arguments show their longest prefix that can be closed into JSON."""
    if not text.strip():
        return "", False
    try:
        return _pretty(loads_bounded(text)), True
    except ValueError:
        pass
    if len(text) > PARTIAL_MAX:
        return f"… {len(text):,} characters so far", False
    value = _complete(text)
    return ("" if value is None else _pretty(value)), False


def _pretty(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _complete(text: str) -> object | None:
    """The value of ``text`` with its open string and containers closed, the last member cut
    back until that parses; None if nothing does."""
    cut = len(text)
    for _ in range(8):  # each try cuts back to an earlier comma, colon or opening bracket
        closed = _close(text[:cut])
        if closed is not None:
            try:
                value: object = loads_bounded(closed)
            except ValueError:
                pass
            else:
                return value
        cut = _last_boundary(text, cut)
        if cut <= 0:
            return None
    return None


class _Strings:
    """Where JSON text is inside a string, a character at a time (a backslash escapes the
    next character; only a quote outside a string opens one)."""

    def __init__(self) -> None:
        self.inside = self.escaped = False

    def outside(self, c: str) -> bool:
        """Take ``c``: True if it is structure (outside every string, and not a quote)."""
        if self.inside:
            if self.escaped:
                self.escaped = False
            elif c == "\\":
                self.escaped = True
            elif c == '"':
                self.inside = False
            return False
        if c == '"':
            self.inside = True
            return False
        return True


_LITERAL = frozenset("0123456789.+-eEtrufalsn")  # what a bare JSON value's last character is


def _close(prefix: str) -> str | None:
    """``prefix`` with its open string and brackets closed (a dangling ``,`` or ``:`` is
    dropped first), or None if it cannot be closed."""
    stack: list[str] = []
    strings = _Strings()
    for c in prefix:
        if not strings.outside(c):
            continue
        if c in "[{":
            stack.append("]" if c == "[" else "}")
        elif c in "]}":
            if not stack:
                return None
            stack.pop()
    if not strings.inside and prefix[-1:] in _LITERAL:
        return None  # a number (or true, false, null) that may still be arriving: 12 -> 14
    body = prefix
    if strings.inside:
        body = body[:-1] if strings.escaped else body  # a lone backslash cannot end a string
        body += '"'
    body = body.rstrip()
    while body.endswith((",", ":")):
        body = body[:-1].rstrip()
    return body + "".join(reversed(stack))


def _last_boundary(text: str, before: int) -> int:
    """The position just before the last ``,``, ``:`` or opening bracket before ``before``
    that is outside a string (where a member can be cut off whole)."""
    best = -1
    strings = _Strings()
    for i, c in enumerate(text[:before]):
        if not strings.outside(c):
            continue
        if c in ",:":
            best = i
        elif c in "[{":
            best = i + 1 if i + 1 < before else i  # always strictly earlier: progress
    return best
