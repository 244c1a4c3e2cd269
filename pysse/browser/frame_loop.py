"""One animation-frame loop for every answer streaming in this page (or worker).

Each answer has a ``FrameScheduler`` (``pysse.render.frames``) that decides *whether* to
render; this loop owns the one ``requestAnimationFrame`` they share, so ten answers streaming
at once still cost one frame callback, and it tells them when a hidden tab becomes visible
again (a hidden tab gets no frames: NOTES.md) or comes back from the back-forward cache (its
connections may be dead: ``pageshow``). In a worker without ``requestAnimationFrame``
a 16 ms timer stands in, and nothing is ever hidden.
"""

from __future__ import annotations

from typing import Any, Protocol

import js
from pyodide.ffi import create_proxy

__all__ = ["LOOP", "FrameLoop"]

FALLBACK_MS = 16


class Scheduled(Protocol):
    def on_frame(self) -> None: ...

    def on_visible(self) -> None: ...

    def on_hidden(self) -> None: ...

    def on_page_return(self, persisted: bool) -> None: ...


class FrameLoop:
    """The shared frame callback (see the module docstring)."""

    def __init__(self) -> None:
        self.frames = 0  # frame callbacks run (the page's stats)
        self._waiting: list[Scheduled] = []
        self._live: list[Scheduled] = []  # told when the page becomes visible again
        self._pending = False
        # What this global scope offers, looked up at first use, never at import: the page's
        # modules are imported at build time, in Node, for the memory snapshot.
        self._proxy: Any = None
        self._has_document = False
        self._has_raf = False

    def add(self, who: Scheduled) -> None:
        """``who`` is streaming: tell it when the page becomes visible again."""
        if self._proxy is None:
            self._start()
        if who not in self._live:
            self._live.append(who)

    def remove(self, who: Scheduled) -> None:
        if who in self._live:
            self._live.remove(who)
        if who in self._waiting:
            self._waiting.remove(who)

    def request(self, who: Scheduled) -> None:
        """Call ``who.on_frame()`` on the next animation frame (once, however often asked)."""
        if who not in self._waiting:
            self._waiting.append(who)
        if self._pending:
            return
        if self._proxy is None:
            self._start()
        self._pending = True
        if self._has_raf:
            js.requestAnimationFrame(self._proxy)
        else:
            js.setTimeout(self._proxy, FALLBACK_MS)

    def is_hidden(self) -> bool:
        if self._proxy is None:
            self._start()
        return bool(self._has_document and js.document.visibilityState == "hidden")

    def _start(self) -> None:
        self._proxy = create_proxy(self._on_frame)
        self._has_document = hasattr(js, "document")
        self._has_raf = hasattr(js, "requestAnimationFrame")
        if self._has_document:
            js.document.addEventListener("visibilitychange", create_proxy(self._on_visibility))
            js.window.addEventListener("pageshow", create_proxy(self._on_pageshow))

    def _on_frame(self, *_: Any) -> None:
        self.frames += 1
        self._pending = False
        waiting, self._waiting = self._waiting, []
        for who in waiting:
            who.on_frame()

    def _on_visibility(self, *_: Any) -> None:
        hidden = self.is_hidden()
        for who in list(self._live):
            if hidden:
                who.on_hidden()  # no frames from now on
            else:
                who.on_visible()

    def _on_pageshow(self, e: Any) -> None:
        """Back from the back-forward cache: its connections were closed meanwhile."""
        if e.persisted:
            for who in list(self._live):
                who.on_page_return(persisted=True)


LOOP = FrameLoop()
