"""The network as the browser has it: ``fetch()`` and the read loop of ``bridge.js``, behind the
page's ``Net`` port (``pysse.call.call``).

The loop is JavaScript because a JS loop calling Python once per chunk costs ~6 us, while
awaiting ``reader.read()`` from Python costs ~20x that (NOTES.md). It runs wherever Python
does: in the bundled page's Web Worker (``fetch`` works there) or in a page's main thread.
The sink it calls is a small adapter that turns JavaScript values into Python ones (a chunk's
``Uint8Array`` into ``bytes``) before the pure ``ChatCall`` sees them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import js
from pyodide.ffi import create_proxy

from ..call.net import NetHandle, Probe, Sink, Timeouts
from ..call.reconnect import Drop
from .bridge import get_bridge
from .dom import js_obj

__all__ = ["BridgeNet", "JsSink"]


class JsSink:
    """What ``bridge.js`` calls for one answer: each fact, converted, to the ``ChatCall``."""

    def __init__(self, call: Sink) -> None:
        self.call = call

    def on_chunk(self, u8: Any) -> bool:
        return self.call.on_chunk(u8.to_bytes())

    def on_end(self) -> bool:
        return self.call.on_end()

    def on_open(
        self, status: int, content_type: str, fmt: str, relay: str, answer_id: str = ""
    ) -> None:
        self.call.on_open(int(status), str(content_type), str(fmt), str(relay), str(answer_id))

    def on_http_error(self, status: int, retry_after: Any, content_type: str, text: str) -> None:
        self.call.on_http_error(int(status), retry_after, str(content_type), str(text))

    def on_wrong_type(self, status: int, content_type: str, text: str) -> None:
        self.call.on_wrong_type(int(status), str(content_type), str(text))

    def on_network_error(self, name: str, message: str, probe: str = "") -> None:
        self.call.on_network_error(str(name), str(message), str(probe or ""))

    def on_read_error(self, name: str, message: str) -> None:
        self.call.on_read_error(str(name), str(message))

    def on_drop(self, kind: Drop, name: str, message: str) -> float:
        return self.call.on_drop(kind, str(name), str(message))

    def on_resumed(self, offset: int) -> None:
        self.call.on_resumed(int(offset))

    def on_resume_failed(self, status: int, text: str) -> None:
        self.call.on_resume_failed(int(status), str(text))

    def on_timeout(self, kind: str, seconds: float) -> None:
        self.call.on_timeout(str(kind), float(seconds))


class BridgeNet:
    """``Net`` over ``bridge.js`` (the page's, or pysse's own copy: ``get_bridge``).

    A request made while Python started (``web/worker.js``'s ``pysseEarly``: a message sent
    during boot goes out at once) is adopted by the first ``start`` with the very same URL
    and body: its facts so far are replayed into the sink, the rest go there as they come.
    Nothing is sent twice; an early request nobody adopts is aborted (``drop_early``)."""

    def start(
        self, url: str, headers: Mapping[str, str], body: str, sink: Sink, t: Timeouts
    ) -> NetHandle:
        proxy = create_proxy(JsSink(sink))
        early = self._early(url, body)
        if early is not None:
            early.adopted = True
            early.sink.adopt(proxy)
            adopted: NetHandle = early.handle
            return adopted
        handle: NetHandle = get_bridge().start(url, js_obj(dict(headers)), body, proxy, *t.ms())
        return handle

    @staticmethod
    def _early(url: str, body: str) -> Any:
        for entry in getattr(js, "pysseEarly", None) or []:
            if not entry.adopted and str(entry.url) == url and str(entry.body) == body:
                return entry
        return None

    @staticmethod
    def drop_early() -> int:
        """Abort the early requests no answer adopted (their message went out another way:
        the page would have sent other bytes). Returns how many."""
        dropped = 0
        for entry in getattr(js, "pysseEarly", None) or []:
            if not entry.adopted:
                entry.adopted = True
                entry.handle.abort()
                dropped += 1
        return dropped

    def reattach(
        self,
        url: str,
        headers: Mapping[str, str],
        answer_id: str,
        received: int,
        sink: Sink,
        t: Timeouts,
    ) -> NetHandle:
        proxy = create_proxy(JsSink(sink))
        bridge = get_bridge()
        handle: NetHandle = bridge.reattach(
            url, js_obj(dict(headers)), answer_id, received, proxy, *t.ms()
        )
        return handle

    async def probe(self, url: str, limit: int = 8192) -> Probe:
        found = await get_bridge().probe(url, limit)
        if not found.reached:
            return Probe(False, error=str(getattr(found, "error", "") or ""))
        return Probe(True, int(found.status), str(found.relay or ""), str(found.text or ""))
