"""The frame loop of a page that runs pysse on its main thread (``stream_chat`` in someone's
page): the pure ``FrameLoop`` (``pysse.render.frames``) driven by ``requestAnimationFrame``,
told when the tab is hidden or shown (a hidden tab gets no frames: NOTES.md) and when the page
comes back from the back-forward cache (its connections may be dead: ``pageshow``). In a
worker without ``requestAnimationFrame`` (an embedder's own worker), a 16 ms timer stands in,
and nothing is ever hidden. The bundled page drives its loop itself (``host.py``).
"""

from __future__ import annotations

from typing import Any

import js
from pyodide.ffi import create_proxy

from ..render.frames import FrameLoop

__all__ = ["page_loop"]

FALLBACK_MS = 16
_LOOP: list[FrameLoop] = []


def page_loop() -> FrameLoop:
    """This global scope's loop, made at first use (never at import: the page's modules are
    imported at build time, in Node, for the memory snapshot)."""
    if _LOOP:
        return _LOOP[0]
    has_document = hasattr(js, "document")
    loop = FrameLoop()
    frame = create_proxy(lambda *_: loop.on_frame())
    if hasattr(js, "requestAnimationFrame"):
        loop.request_frame = lambda: js.requestAnimationFrame(frame)
    else:
        loop.request_frame = lambda: js.setTimeout(frame, FALLBACK_MS)
    if has_document:

        def on_visibility(*_: Any) -> None:
            loop.set_hidden(js.document.visibilityState == "hidden")

        def on_pageshow(e: Any) -> None:
            if e.persisted:
                loop.page_return()

        loop.hidden = js.document.visibilityState == "hidden"
        js.document.addEventListener("visibilitychange", create_proxy(on_visibility))
        js.window.addEventListener("pageshow", create_proxy(on_pageshow))
    _LOOP.append(loop)
    return loop
