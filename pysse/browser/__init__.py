"""Frames -> DOM: pysse in the browser, and the only package that imports ``js`` or
``pyodide``.

For any page (or worker) running Pyodide, one call streams an answer into an element:

    from pysse.browser import stream_chat
    result = await stream_chat("/relay", body, into="#answer")

The bundled chat page is built on the same call; ``web/app.js`` boots Pyodide and calls
:func:`start`.

    stream.py           stream_chat: the public call, its arguments checked
    call.py             ChatCall: one answer's bridge sink, markdown and frames; ChatResult
    bridge.js/.py       fetch() + the read loop in JavaScript, and finding it from Python
    frame_loop.py       one requestAnimationFrame for every streaming answer
    follow.py           scroll following for an answer in any scroller
    app.py              the chat page's controller: the open chat, events, timers
    answers.py          what the page sends and what comes back: start, finish, queue, replays
    turn.py             one answer in the page: a ChatCall with its footer (status, speed)
    log_view.py         the messages on screen, their footers, the welcome screen
    actions.py          message actions: copy, regenerate, continue, edit, versions
    chats.py            the chat list (drawer), export and import
    storage.py          chats and recordings in IndexedDB (web/store.js), or in memory
    settings_form.py    the Settings panel and the theme
    scroll.py           scroll following bound to the page's log
    inspector_panel.py  the stream inspector bound to its panel
    dom.py              query, JS objects, listeners, tasks, downloads
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .call import ChatCall, ChatResult, Timeouts
from .stream import ElementBusyError, StreamChatError, stream_chat

if TYPE_CHECKING:
    from .app import App

__all__ = [
    "ChatCall",
    "ChatResult",
    "ElementBusyError",
    "StreamChatError",
    "Timeouts",
    "start",
    "stream_chat",
]

_app: App | None = None


def start(site_json: str, early: Any = None) -> App:
    """Called once by ``web/app.js`` when Pyodide is ready. The saved chats load (the open
    one comes back), then prompts typed meanwhile are sent and ``body[data-ready]`` is set."""
    import js
    from pyodide.ffi import create_proxy

    from .app import App
    from .dom import spawn

    global _app
    _app = App(json.loads(site_json))
    js.pysseApp = create_proxy(_app)
    _app.inspector.bind()
    spawn(_app.boot([str(text) for text in (early or [])]))
    return _app
