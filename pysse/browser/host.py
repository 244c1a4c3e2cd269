"""The bundled chat page's Python side of the wire to its view: messages in (the page's HTML at
start, then a frame with the events since the last one), ops out (once per frame at most).

The page's Python (``pysse.app``) runs in a dedicated module Web Worker (``web/worker.js``), or
on the main thread when a worker cannot start (``web/app.js``); either way this is its only
door. The protocol, the same in both threads (``docs/architecture.md``, "Threads"):

main thread -> Python
    ``{t: "start", page}``: the body's HTML, ``<html>``'s attributes, the saved settings,
    the page's address, site.json, messages typed while Python started
    ``{t: "frame", events, span, hidden}``: the events since the last frame (clicks,
    changes, sends, the log's view reports, replies), coalesced; also the acknowledgement
    that the last ops were applied, and the frame tick that renders streaming answers
    (``span``: the display frames since the last tick, its renders' budget)
    ``{t: "eval", id, code}``: for tests and tools, Python code run in the page's namespace

Python -> main thread
    ``{t: "ops", ops, blobs, want}``: ops as one JSON text (``pysse.view.ops``), the bytes
    some carry, and whether Python wants a frame soon
    ``{t: "want"}``: a frame, please (nothing to apply yet)
    ``{t: "ack", seq}``: the events of frame ``seq`` were handled, and nothing changed
    (``ops`` and ``want`` carry ``seq`` too: tests wait on it, ``pysse.settled()``)
    ``{t: "reply", id, value, error}``: the answer to ``eval``
    (``worker.js``: ``{t: "error", message, seq}``, an exception that got out of ``receive``:
    counted and logged by the page, never taken for a death; ``{t: "dead"}``, a fatal one)

At most one ops message is in flight: the next waits for the frame that acknowledges it. So
the main thread gets at most one batch a frame, and a slow main thread (a phone, a busy
frame) gets fewer renders, never a queue of them: the cadence fits the device. A batch is at
most ``BATCH_CHARS`` of ops (a restored chat's HTML goes over several frames).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import js
from pyodide.ffi import to_js

from .. import faults
from ..app.app import App
from ..app.platform import Location, Platform, spawn
from ..render.frames import FrameLoop
from ..view import Document, Ops
from .dom import js_obj
from .images import BrowserImages
from .lazy_assets import LazyAssets
from .net import BridgeNet
from .store import IndexedDBStore
from .tabs import BrowserTabs

__all__ = ["BATCH_CHARS", "PageHost"]

# The page's survived faults (``pysse.faults``) and failing callbacks, in the console's errors.
faults.REPORT[0] = lambda message: js.console.error(message)
BATCH_CHARS = 96_000  # ops a frame at most (HTML parsed on the main thread: a phone's budget)


class PageHost:
    """One page's Python (see the module docstring). ``send(message, transfer)`` delivers a
    message to the view: ``postMessage`` from a worker, a direct call on the main thread."""

    def __init__(self, send: Any) -> None:
        self._send = send
        self.app: App | None = None
        self.doc: Document | None = None
        self.loop = FrameLoop(self._want_frame)
        self._awaiting = False  # ops sent, their frame not come back yet
        self._asked = False  # "want" sent since the last frame
        self._in_frame = False
        self._kicked = False
        self._seq = 0  # the last frame handled (the view knows its events were dispatched)
        self._ack = False  # that frame brought events: it is answered, with ops or an ack
        self.namespace: dict[str, Any] = {"host": self}
        asyncio.get_event_loop().set_exception_handler(_loop_fault)

    # -- from the view -------------------------------------------------------------------------

    def receive(self, message: Any) -> None:
        """One message from the view. Never raises: an exception here would reach the
        worker's handler and read as the death of this Python, ending every answer (issue
        #40). What fails is reported (``pysse.faults``) and the page goes on; only a fatal
        error of the runtime itself (``on_fatal`` in worker.js) is a death."""
        try:
            msg = message.to_py(depth=1) if hasattr(message, "to_py") else dict(message)
            kind = msg.get("t")
            if kind == "frame":
                self._frame(msg)
            elif kind == "start":
                self._start(_plain(msg["page"]))
            elif kind == "eval":
                spawn(self._eval(int(msg["id"]), str(msg["code"])))
        except Exception as exc:
            faults.report(f"handling the view's {_kind(message)!r} message", exc)
            self._in_frame = False
            self._guarded("sending the ops", self._flush)

    def _start(self, page: dict[str, Any]) -> None:
        loc = page.get("location") or {}
        ops = Ops(on_first=self._poke)
        doc = Document(str(page["body"]), dict(page.get("htmlAttrs") or {}), ops)
        store = getattr(js, "pysseStore", None)
        platform = Platform(
            net=BridgeNet(),
            store=IndexedDBStore(store) if store is not None else None,
            clock=js.performance.now,
            location=Location(
                str(loc.get("href", "")), str(loc.get("origin", "")), str(loc.get("search", ""))
            ),
            loop=self.loop,
            now_epoch_ms=js.Date.now,
            stored_settings=page.get("settings") or None,
            images=BrowserImages() if hasattr(js, "OffscreenCanvas") else None,
        )
        if getattr(js, "pysseTabs", None) is not None:  # (web/tabs.js: the other tabs)
            platform.tabs = BrowserTabs(js.pysseTabs)
        self.loop.hidden = bool(page.get("hidden"))
        if page.get("lazy"):  # the site's lazy bundles: lexers and math, fetched when needed
            LazyAssets(page["lazy"], str(page.get("base") or loc.get("href", ""))).declare()
        self.doc = doc
        self.app = App(dict(page.get("site") or {}), platform, doc)
        self.namespace["app"] = self.app
        self.app.inspector.bind()
        rescued = [(str(m), str(t)) for m, t in page.get("rescued") or []]
        early = [str(t) for t in page.get("early") or []]
        spawn(self._boot(self.app, early, rescued, str(page.get("notice") or "")))
        self._flush()

    @staticmethod
    async def _boot(
        app: App, early: list[str], rescued: list[tuple[str, str]], notice: str
    ) -> None:
        """The app's boot; then the requests sent while Python started that no message
        adopted are dropped (their message went out with other bytes)."""
        await app.boot(early, rescued, notice)
        BridgeNet.drop_early()

    def _frame(self, msg: dict[str, Any]) -> None:
        self._awaiting = False
        self._asked = False
        self._in_frame = True
        self._seq = int(msg.get("seq") or 0)
        self._ack = bool(msg.get("events"))
        try:
            if "hidden" in msg:
                self._guarded(
                    "showing or hiding the page", self.loop.set_hidden, bool(msg["hidden"])
                )
            if self.doc is not None:
                for record in msg.get("events") or []:
                    self._dispatch(record)
            if self.loop.pending:  # (each answer's frame is isolated in the loop itself)
                span = float(msg.get("span") or 1.0)  # (frames of 60 Hz it stands for)
                self._guarded("the frame's renders", self.loop.on_frame, span)
        finally:
            self._in_frame = False
        self._guarded("sending the ops", self._flush)

    def _dispatch(self, record: Any) -> None:
        assert self.doc is not None
        data = record.to_py() if hasattr(record, "to_py") else record
        if data.get("type") == "pageshow":
            self.loop.page_return()
            return
        try:
            self.doc.dispatch(data)
        except Exception as exc:  # one failing listener must not lose the rest of the frame
            faults.report(f"the {data.get('type')!r} event's handler", exc)

    @staticmethod
    def _guarded(what: str, fn: Any, *args: Any) -> None:
        """``fn(*args)``; an exception ends that piece of work alone, reported."""
        try:
            fn(*args)
        except Exception as exc:
            faults.report(what, exc)

    # -- to the view ---------------------------------------------------------------------------

    def _want_frame(self) -> None:
        self._poke()

    def _poke(self) -> None:
        """Something to deliver outside a frame: deliver it at the end of this turn."""
        if not self._kicked and not self._in_frame:
            self._kicked = True
            asyncio.get_event_loop().call_soon(self._kick)

    def _kick(self) -> None:
        self._kicked = False
        if not self._awaiting and not self._in_frame:
            self._guarded("sending the ops", self._flush)

    def _flush(self) -> None:
        doc = self.doc
        if self._awaiting:
            return
        if doc is not None and doc.ops:
            items, blobs = doc.ops.take(BATCH_CHARS)
            buffers = [to_js(b) for b in blobs]
            message = {
                "t": "ops",
                "ops": Ops.encode(items),
                "blobs": buffers,
                "want": self.loop.pending or bool(doc.ops),
                "seq": self._seq,
                "now": doc.ops.urgent,
            }
            doc.ops.urgent = False
            self._awaiting = True
            self._ack = False
            self._send(js_obj(message), to_js([b.buffer for b in buffers]))
        elif self.loop.pending and not self._asked:
            self._asked = True
            self._ack = False
            self._send(js_obj({"t": "want", "seq": self._seq}), to_js([]))
        elif self._ack:
            self._ack = False
            self._send(js_obj({"t": "ack", "seq": self._seq}), to_js([]))

    # -- for tests and tools -------------------------------------------------------------------

    async def _eval(self, ident: int, code: str) -> None:
        from pyodide.code import eval_code_async

        reply: dict[str, Any] = {"t": "reply", "id": ident}
        try:
            value = await eval_code_async(code, self.namespace)
            reply["value"] = json.dumps(value, default=str)
        except Exception as exc:
            reply["error"] = f"{type(exc).__name__}: {exc}"
        self._send(js_obj(reply), to_js([]))


def _loop_fault(loop: Any, context: dict[str, Any]) -> None:
    """A timer's or callback's exception (``call_soon``, ``call_later``): that callback's
    work ends, reported like every fault (``pysse.faults``)."""
    exc = context.get("exception")
    if isinstance(exc, Exception):
        faults.report(f"a callback ({context.get('message', '')})", exc)
    else:
        loop.default_exception_handler(context)


def _kind(message: Any) -> str:
    """A message's ``t``, for a report (whatever the message turned out to be)."""
    try:
        return str(message.t if hasattr(message, "to_py") else message.get("t"))
    except Exception:
        return "?"


def _plain(value: Any) -> Any:
    """A JS value (the start message's page) as plain Python."""
    return value.to_py() if hasattr(value, "to_py") else value
