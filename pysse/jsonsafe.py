"""JSON from untrusted sources with its nesting bounded before it is parsed.

``json.loads`` recurses once per level of nesting. In CPython a deep enough payload raises
``RecursionError`` (not a ``ValueError``, so code that catches bad JSON lets it through); in
Pyodide it can exhaust the JavaScript stack, which is a fatal error that kills the runtime for
good. A 12 KB SSE payload of ``[`` x 6000 is enough. So every payload from a stream, an error
body or a request is checked first, in linear time and mostly in C:

* ``str.count`` of the opening brackets: if there are no more than ``max_depth`` of them the
  nesting cannot be deeper, and nothing else is done (the common case: chat payloads are a
  few levels deep);
* otherwise one regex pass that skips string literals (brackets in strings do not nest) and
  yields only the brackets, whose depth Python tracks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator
from typing import Any

from .steps import run_steps

__all__ = [
    "MAX_DEPTH",
    "JSONTooDeepError",
    "loads_bounded",
    "loads_bounded_steps",
    "nesting_depth",
]

MAX_DEPTH = 128  # far beyond any provider payload or chat request, far below any stack limit

# A string literal (skipped whole; possessive, so an unterminated one cannot backtrack) or
# one bracket.
_TOKENS = re.compile(r'"(?:[^"\\]++|\\.)*+"?|[\[\]{}]', re.DOTALL)


class JSONTooDeepError(ValueError):
    """The JSON text nests arrays/objects deeper than allowed; it was not parsed."""

    def __init__(self, depth: int, max_depth: int) -> None:
        super().__init__(f"JSON nested more than {max_depth} levels deep (at least {depth})")
        self.depth = depth
        self.max_depth = max_depth


def _text(data: str | bytes | bytearray) -> str:
    if isinstance(data, str):
        return data
    data = bytes(data)
    return data.decode(json.detect_encoding(data), "surrogatepass")  # as json.loads does


def nesting_depth(text: str | bytes | bytearray, stop_above: int | None = None) -> int:
    """The deepest array/object nesting in a JSON text (brackets inside strings ignored).
    Counting stops early once it is above ``stop_above``."""
    return run_steps(_depth_steps(_text(text), stop_above, len(text) + 1))


def _depth_steps(text: str, stop_above: int | None, chunk: int) -> Generator[None, None, int]:
    """``nesting_depth``, yielding after each ``chunk`` characters scanned."""
    depth = deepest = 0
    next_pause = chunk
    for m in _TOKENS.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if stop_above is not None and deepest > stop_above:
                    return deepest
        elif c in "]}":
            depth = max(depth - 1, 0)
        if m.end() >= next_pause:
            next_pause = m.end() + chunk
            yield
    return deepest


def loads_bounded(
    data: str | bytes | bytearray, max_depth: int = MAX_DEPTH, **json_options: Any
) -> Any:
    """``json.loads(data, **json_options)``, but a ``JSONTooDeepError`` (a ``ValueError``) when
    the text nests deeper than ``max_depth``, decided before any parsing."""
    return run_steps(loads_bounded_steps(data, max_depth, **json_options))


def loads_bounded_steps(
    data: str | bytes | bytearray,
    max_depth: int = MAX_DEPTH,
    chunk: int = 1 << 16,
    **json_options: Any,
) -> Generator[None, None, Any]:
    """``loads_bounded`` in steps, for a page that must not freeze on a long text (a chat of
    100 long answers is ~700 KB): it yields after each ``chunk`` characters of the depth scan
    and before the parse (one C call), and returns the parsed value."""
    text = _text(data)
    if text.count("[") + text.count("{") > max_depth:
        depth = yield from _depth_steps(text, max_depth, chunk)
        if depth > max_depth:
            raise JSONTooDeepError(depth, max_depth)
    yield
    return json.loads(text, **json_options)
