"""pysse in the browser, and the only package that imports ``js`` or ``pyodide``: the IO of the
pure layers below it.

For any page (or worker) running Pyodide, one call streams an answer into an element:

    from pysse.browser import stream_chat
    result = await stream_chat("/relay", body, into="#answer")

The bundled chat page's Python (``pysse.app``) runs in a Web Worker, or on the page's main
thread where a worker cannot start: ``web/worker.js`` (or ``web/app.js``) boots Pyodide and
makes a :class:`~pysse.browser.host.PageHost` (``page_host``), its one door to the page.

    stream.py           stream_chat: the public call, its arguments checked
    net.py              the Net port over bridge.js: fetch() and the read loop
    bridge.js/.py       fetch() + the read loop in JavaScript, and finding it from Python
    frame_loop.py       frames from requestAnimationFrame (a page's main thread)
    follow.py           scroll following for an answer in any scroller (stream_chat)
    remote.py           stream_chat's updates posted from a worker to its page
    js_writer.py        dom_writer.js writing stream_chat's updates into an element here
    host.py             the bundled page's host: messages in, ops out, once a frame
    store.py            the chat store's backend: IndexedDB (web/store.js)
    dom.py              JS objects from Python
"""

from __future__ import annotations

from typing import Any

from ..call.call import ChatCall, ChatResult, Timeouts
from .stream import ElementBusyError, StreamChatError, stream_chat

__all__ = [
    "ChatCall",
    "ChatResult",
    "ElementBusyError",
    "StreamChatError",
    "Timeouts",
    "page_host",
    "stream_chat",
]


def page_host(send: Any) -> Any:
    """The bundled page's host (``host.PageHost``); ``send(message, transfer)`` delivers its
    messages to the page's view. Imported here, on demand: an embedder's page never loads the
    chat page's modules."""
    from .host import PageHost

    return PageHost(send)
