"""Streaming from a Web Worker: Python (bridge, parser, markdown) runs in the worker, the page
owns the DOM. Each render's ``Update`` is posted as plain data; the page applies it with
``dom_writer.js`` (the JavaScript twin of ``pysse.render.dom.DomWriter``).

In the worker:

    from pysse.browser import stream_chat
    from pysse.browser.remote import poster
    result = await stream_chat(url, body, on_update=poster("answer-1"))

In the page, for messages whose ``type`` is ``"pysse-update"``: ``writer.apply(msg.update)``.
A structured clone of a few short strings per frame is cheap; the HTML is parsed once, on the
page, by ``insertAdjacentHTML``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import js
from pyodide.ffi import to_js

from ..render.update import Update
from .dom import js_obj

__all__ = ["MESSAGE_TYPE", "poster", "update_to_js"]

MESSAGE_TYPE = "pysse-update"


def update_to_js(update: Update) -> Any:
    """``{ops: [[depth, html, opens, replaces], ...], tails: [...], final}`` as a JS object."""
    return js_obj(
        {
            "ops": to_js([[op.depth, op.html, op.opens, op.replaces] for op in update.ops]),
            "tails": to_js(list(update.tails)),
            "final": update.final,
        }
    )


def poster(answer: str, target: Any = None) -> Callable[[Update], None]:
    """An ``on_update`` for ``stream_chat`` that posts each update to the page:
    ``{type: "pysse-update", answer, update}`` through ``target.postMessage`` (the worker's
    own scope by default)."""

    def post(update: Update) -> None:
        message = js_obj({"type": MESSAGE_TYPE, "answer": answer, "update": update_to_js(update)})
        (target or js).postMessage(message)

    return post
