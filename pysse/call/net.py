"""Where an answer's bytes come from, as a port: ``Net`` starts a request (or reattaches to an
answer a relay keeps) and calls a ``Sink`` synchronously, in order, as facts arrive. In the
browser it is ``fetch()`` and the read loop of ``bridge.js`` (``pysse.browser.net``); in tests,
scripted bytes. ``ChatCall`` (``call.py``) is the sink."""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from .reconnect import Drop

__all__ = ["Net", "NetHandle", "Probe", "Sink", "Timeouts"]


@dataclass(frozen=True)
class Timeouts:
    """Seconds the bridge waits for the first byte, between any two bytes (idle), and for
    chat content while only keep-alive comments arrive (a relay's pings prove the
    connection, not progress)."""

    first_byte: float = 60.0
    idle: float = 30.0
    no_content: float = 300.0

    def ms(self) -> tuple[int, int, int]:
        return (
            round(self.first_byte * 1000),
            round(self.idle * 1000),
            round(self.no_content * 1000),
        )


@dataclass(frozen=True)
class Probe:
    """What a GET to the relay found (``Net.probe``): it answered (``reached``) with ``status``
    and up to a few KB of ``text``, or it did not (``error``)."""

    reached: bool
    status: int = 0
    relay: str = ""
    text: str = ""
    error: str = ""


class NetHandle(Protocol):
    """One answer's connection(s), as the network side keeps them."""

    def abort(self) -> None:
        """Stop: end the request (and tell a relay keeping the answer)."""

    def revive(self) -> None:
        """The page is back in view: resume a connection that died meanwhile, now."""


class Sink(Protocol):
    """What the network tells an answer (the ``ChatCall``), named after what happened."""

    def on_open(
        self, status: int, content_type: str, fmt: str, relay: str, answer_id: str = ""
    ) -> None: ...
    def on_chunk(self, data: bytes) -> bool: ...
    def on_end(self) -> bool: ...
    def on_http_error(
        self, status: int, retry_after: Any, content_type: str, text: str
    ) -> None: ...
    def on_wrong_type(self, status: int, content_type: str, text: str) -> None: ...
    def on_network_error(self, name: str, message: str, probe: str = "") -> None: ...
    def on_read_error(self, name: str, message: str) -> None: ...
    def on_drop(self, kind: Drop, name: str, message: str) -> float: ...
    def on_resumed(self, offset: int) -> None: ...
    def on_resume_failed(self, status: int, text: str) -> None: ...
    def on_timeout(self, kind: str, seconds: float) -> None: ...


class Net(Protocol):
    """Starts requests; see the module docstring."""

    def start(
        self, url: str, headers: Mapping[str, str], body: str, sink: Sink, t: Timeouts
    ) -> NetHandle: ...

    def reattach(
        self,
        url: str,
        headers: Mapping[str, str],
        answer_id: str,
        received: int,
        sink: Sink,
        t: Timeouts,
    ) -> NetHandle: ...

    def probe(self, url: str, limit: int = 8192) -> Awaitable[Probe]:
        """A GET to ``url``: its status and up to ``limit`` bytes of its body."""
        ...
