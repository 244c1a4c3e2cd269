"""Scroll following, as the page's Python sees it: what happened, told to the view.

Where the reader's view goes needs layout (heights, positions), which only the browser's main
thread has, so the view does it (``web/view.js``: follows the bottom while the reader is there,
never yanks one who scrolled up, holds the view still where the engine has no scroll
anchoring, shows "Jump to latest"). The page's Python only says what the reader did or what a
change means: a message sent (follow again), another chat opened (start over), a search
result opened (stay there), a rebuild that must not move the reader.
"""

from __future__ import annotations

from typing import Any

from ..view import Document

__all__ = ["Scroll"]


class Scroll:
    def __init__(self, doc: Document) -> None:
        self.doc = doc

    def _op(self, what: str, *args: Any) -> None:
        self.doc.ops.add(["scroll", what, *args])

    def follow(self) -> None:
        """The reader sent a message: show the bottom again, and follow it."""
        self._op("follow")

    def reset(self) -> None:
        """Another chat is shown: follow its end; the jump button goes."""
        self._op("reset")

    def release(self) -> None:
        """Stay where the reader is going (a search result), not at the chat's end."""
        self._op("release")

    def center(self, el: Any) -> None:
        """Bring ``el`` to the middle of the view (and stop following)."""
        self._op("center", el.handle)

    def hold(self) -> None:
        """The changes from here to ``unhold`` must not move the reader (another version of
        a message shown in place)."""
        self._op("hold")

    def unhold(self) -> None:
        self._op("unhold")
