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
from typing import Any

__all__ = ["MAX_DEPTH", "JSONTooDeepError", "loads_bounded", "nesting_depth"]

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
    depth = deepest = 0
    for m in _TOKENS.finditer(_text(text)):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if stop_above is not None and deepest > stop_above:
                    return deepest
        elif c in "]}":
            depth = max(depth - 1, 0)
    return deepest


def loads_bounded(
    data: str | bytes | bytearray, max_depth: int = MAX_DEPTH, **json_options: Any
) -> Any:
    """``json.loads(data, **json_options)``, but a ``JSONTooDeepError`` (a ``ValueError``) when
    the text nests deeper than ``max_depth``, decided before any parsing."""
    text = _text(data)
    if text.count("[") + text.count("{") > max_depth:
        depth = nesting_depth(text, stop_above=max_depth)
        if depth > max_depth:
            raise JSONTooDeepError(depth, max_depth)
    return json.loads(text, **json_options)
