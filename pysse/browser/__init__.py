"""Frames -> DOM: the chat page in the browser, and the only package that imports ``js`` or
``pyodide``. ``web/app.js`` boots Pyodide and calls :func:`start`.

    app.py              the controller: the open chat, events, frames, timers
    answers.py          what is sent and what comes back: start, finish, queue, replays
    turn.py             one answer: stream, markdown, DOM, state, speed
    log_view.py         the messages on screen, their footers, the welcome screen
    actions.py          message actions: copy, regenerate, continue, edit, versions
    chats.py            the chat list (drawer), export and import
    storage.py          chats and recordings in IndexedDB (web/store.js), or in memory
    settings_form.py    the Settings panel and the theme
    scroll.py           scroll following bound to the log
    inspector_panel.py  the stream inspector bound to its panel
    dom.py              query, JS objects, listeners, tasks, downloads
"""

from __future__ import annotations

import json
from typing import Any

import js
from pyodide.ffi import create_proxy

from .app import App
from .dom import spawn

__all__ = ["App", "start"]

_app: App | None = None


def start(site_json: str, early: Any = None) -> App:
    """Called once by ``web/app.js`` when Pyodide is ready. The saved chats load (the open
    one comes back), then prompts typed meanwhile are sent and ``body[data-ready]`` is set."""
    global _app
    _app = App(json.loads(site_json))
    js.pysseApp = create_proxy(_app)
    _app.inspector.bind()
    spawn(_app.boot([str(text) for text in (early or [])]))
    return _app
