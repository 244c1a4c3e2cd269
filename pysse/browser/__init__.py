"""Frames -> DOM: the chat page in the browser, and the only package that imports ``js`` or
``pyodide``. ``web/app.js`` boots Pyodide and calls :func:`start`.

    app.py              the controller: settings, conversation, sending, frames
    turn.py             one answer: stream, markdown, DOM, state
    scroll.py           scroll following bound to the log
    inspector_panel.py  the stream inspector bound to its panel
    dom.py              query, JS objects, listeners, tasks
"""

from __future__ import annotations

import json
from typing import Any

import js
from pyodide.ffi import create_once_callable, create_proxy

from .app import App

__all__ = ["App", "start"]

_app: App | None = None


def start(site_json: str, early: Any = None) -> App:
    """Called once by ``web/app.js`` when Pyodide is ready; sends prompts typed meanwhile."""
    global _app
    _app = App(json.loads(site_json))
    js.pysseApp = create_proxy(_app)
    for text in list(early or []):
        _app.send(str(text))
    _app.inspector.bind()
    if "inspect=1" in str(js.location.search):
        _app.inspector.open()
    js.document.body.dataset.ready = "1"
    if not _app.current:
        js.setTimeout(create_once_callable(_app.warm_up), 30)
    return _app
