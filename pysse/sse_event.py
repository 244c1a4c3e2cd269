"""The one SSE event type, in a module of its own at the bottom of the package.

Why here and not beside the parser (``pysse.sse``, which re-exports it): the parser raises
the errors of ``pysse.errors``, and those errors carry the events that were complete before
the problem, so they name this type too. With the type in the parser's module the two
modules needed each other; here, both stand on it and neither on the other.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["SSEEvent"]


class SSEEvent(NamedTuple):
    """One dispatched event.

    A NamedTuple because it is immutable, tiny and about three times cheaper to build than a
    frozen dataclass; a chat stream makes one per token or two.

    ``id`` is the stream's last event ID at the moment of dispatch (the spec's
    ``lastEventId``), which persists across events until an ``id:`` line changes it.
    """

    event: str = "message"
    data: str = ""
    id: str = ""
