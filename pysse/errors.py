"""The exception tree: one base class a caller can catch, one subclass per layer.

    PysseError
    ├── SSEProtocolError       bytes that are not a usable event stream (invalid UTF-8 in
    │   │                      strict mode, feeding a closed parser)
    │   ├── LineTooLongError   a line over ``max_line_bytes``
    │   └── EventTooLargeError an event's data over ``max_event_bytes``
    ├── ChatStreamError        a ChatStream asked for something it cannot do (unknown format)
    ├── ConfigError            a setting that cannot work (a relay's missing key variable,
    │                          an unknown format, no Chromium to test with); the message
    │                          says what to change
    └── KitError               the testing kit (``pysse.testing``) could not do what a test
                               asked: a server that did not start, a request that never came

``ChatStreamError`` and ``ConfigError`` are also ``ValueError``s.

Provider-side failures (an ``error`` event, a malformed JSON payload) are *not* exceptions:
they are data, reported as a ``ProviderError`` event and ``ChatStream.outcome == "error"``,
so the partial answer is never lost to a stack unwind.
"""

from __future__ import annotations

from .sse_event import SSEEvent


class PysseError(Exception):
    """Base class of every exception pysse raises on purpose."""


class SSEProtocolError(PysseError, ValueError):
    """The byte stream cannot be parsed as ``text/event-stream``.

    ``offset`` is the byte offset in the stream (counting from the first byte fed, BOM included)
    where the problem starts, or None when there is no single position. ``events`` holds the
    events that were complete before the problem, so a caller that catches the error loses
    nothing that had already arrived.
    """

    def __init__(
        self, message: str, *, offset: int | None = None, events: list[SSEEvent] | None = None
    ) -> None:
        super().__init__(message)
        self.offset = offset
        self.events: list[SSEEvent] = list(events or [])


class LineTooLongError(SSEProtocolError):
    """A line longer than the parser's ``max_line_bytes``: not an event stream, or a broken
    server. Raised before the line is buffered past the cap."""


class EventTooLargeError(SSEProtocolError):
    """An event whose data is larger than the parser's ``max_event_bytes``: raised as soon as
    the data waiting for its blank line passes the cap, so memory stays bounded."""


class ChatStreamError(PysseError, ValueError):
    """A ChatStream was asked for something it does not support (an unknown format)."""


class ConfigError(PysseError, ValueError):
    """A configuration that cannot work; the message names the setting and the fix."""


class AttachmentError(PysseError, ValueError):
    """A file no provider would take with a question (its type, its size, data that is not
    what it claims); the message names the file, why, and what to attach instead."""


class KitError(PysseError):
    """The testing kit could not do what a test asked: a scripted or live server that did not
    start, a request that did not arrive in time. The message says which and why."""
