"""Telling content from keep-alives in a stream the relay passes through, in O(1) memory.

The relay's content timeout ends an answer whose upstream sends only keep-alives (``:``
comments, Anthropic's ``event: ping``) for too long. For that it has to see events, not
bytes; but it must not *keep* anything of them: a chat parser accumulates the answer's text
(462 MiB per 1,000 streams of 20 KB events, even with ``--no-resume``), and parsing each
event's JSON cost 27 us of the relay's per-event budget. So this watcher reads SSE lines
(WHATWG framing: CR, LF or CRLF, a line cut anywhere across chunks), keeps only the first
bytes of an unfinished line and the current event's name, and says when an event with data
completed. What the data says is the page's business.
"""

from __future__ import annotations

__all__ = ["KEEPALIVE_EVENTS", "ContentWatch"]

# Event names that are keep-alives whatever their data (Anthropic's ``ping``, and the usual
# spellings): ChatStream ignores these too.
KEEPALIVE_EVENTS = frozenset({b"ping", b"keepalive", b"keep-alive"})
_HEAD = 64  # bytes of an unfinished line kept: enough to know its field and if it has data


class ContentWatch:
    """``feed(chunk)`` is True when the chunk completed an event that carries data and is
    not a keep-alive."""

    __slots__ = ("_cr", "_event", "_has_data", "_head")

    def __init__(self) -> None:
        self._head = b""  # the start of a line not finished yet
        self._cr = False  # the last chunk ended in CR: a LF first in the next one is its pair
        self._event = b""  # the current event's name
        self._has_data = False  # the current event has a data line with something in it

    def feed(self, chunk: bytes) -> bool:
        if self._cr and chunk[:1] == b"\n":
            chunk = chunk[1:]
        if not chunk:
            return False
        last = chunk[-1:]
        self._cr = last == b"\r"
        lines = chunk.splitlines()  # bytes: splits on CR, LF and CRLF only, as SSE does
        if self._head:
            lines[0] = self._head + lines[0][:_HEAD]
            self._head = b""
        if last != b"\n" and last != b"\r":
            self._head = lines.pop()[:_HEAD]  # unfinished: its start is enough
        content = False
        for line in lines:
            if not line:  # a blank line: the event is complete
                if self._has_data and self._event not in KEEPALIVE_EVENTS:
                    content = True
                self._event = b""
                self._has_data = False
            elif line.startswith(b"data"):
                if not self._has_data and line[4:5] in (b":", b"") and line[5:].strip():
                    self._has_data = True
            elif line.startswith(b"event:"):
                self._event = line[6:].strip()[:32]
        return content
