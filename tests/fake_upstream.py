"""Upstreams for the relay tests. Ordinary answers and faults are testing-kit scripts
(``ANSWER``, ``ENDLESS``, ...; played on the kit's ``sse_server``). What a script cannot say is
here as code: ``Upstream`` misbehaves on request (``mode``) in ways that depend on the request
or never end (echoing the key back, gzip it was not asked for, huge or endless error bodies),
and ``RawUpstream`` answers canned bytes that no HTTP framework would send (status 700, ...)."""

from __future__ import annotations

import asyncio
import gzip
import json
import random
import socket
import threading
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from pysse.providers import PROVIDERS, encode_answer, encoder_for
from pysse.server.demo import split_deltas
from pysse.testing import Script

KEY = "sk-test-SECRET-0123456789"
DELTAS = split_deltas("Hello from the fake upstream — 東京 🙂 " * 20, random.Random(3))
EVENTS = encode_answer(PROVIDERS["openai-chat"], DELTAS)
SSE = {"content-type": "text/event-stream"}

# Well-behaved and ordinary faults, scripted with the testing kit (played on ``sse_server``).
ANSWER = Script.from_events(EVENTS).paced(0.01)  # one event per write, 10 ms apart
RATE_LIMITED = Script.http_error(429, "slow down", retry_after=12)
# The first event at once, then silence until the client leaves: a relay must forward it
# without waiting for more (the client gets it at all only if it does).
SLOW_FIRST = Script.from_events(EVENTS).stall(after_byte=len(EVENTS[0]))
# The answer, then keep-alive comments for minutes: only a disconnect ends it early.
ENDLESS = Script.from_events([*EVENTS, *[b": still generating\n\n"] * 6000]).paced(0.02)


class Upstream:
    """A fake provider: records what it received, streams EVENTS, notices disconnects."""

    def __init__(self) -> None:
        self.headers: list[dict[str, str]] = []
        self.bodies: list[bytes] = []
        self.targets: list[str] = []  # path?query of each request, as received
        self.cancelled = threading.Event()
        self.body_sent = 0  # bytes of an error body written so far
        self.mode = "ok"
        self.app = Starlette(routes=[Route("/{path:path}", self.endpoint, methods=["POST"])])

    async def endpoint(self, request: Request) -> Response:
        self.headers.append(dict(request.headers))
        self.bodies.append(await request.body())
        raw_path = request.scope.get("raw_path", b"").decode("latin-1")
        query = request.scope.get("query_string", b"").decode("latin-1")
        self.targets.append(raw_path + ("?" + query if query else ""))
        mode = self.mode
        if mode == "429":
            return JSONResponse(
                {"error": {"message": "slow down", "type": "rate_limit"}},
                429,
                headers={"retry-after": "12"},
            )
        if mode == "echo-400":  # a gateway that echoes the request headers in its error
            return JSONResponse(
                {"error": {"message": f"bad request; you sent {dict(request.headers)}"}}, 400
            )
        if mode == "html":
            return Response(
                b"<!doctype html><html><head><title>Portal</title></head>"
                b"<body><h1>Sign in</h1><script>alert(1)</script></body></html>",
                200,
                headers={"content-type": "text/html"},
            )
        if mode == "gzip":
            return Response(
                gzip.compress(b"".join(EVENTS)), 200, headers={**SSE, "content-encoding": "gzip"}
            )
        if mode == "br":
            return Response(b"xx", 200, headers={**SSE, "content-encoding": "br"})
        if mode in ("big-500", "endless-500"):
            return StreamingResponse(self.big_body(mode == "endless-500"), 500)

        async def gen() -> AsyncIterator[bytes]:
            try:
                if mode == "echo-stream":  # the key inside a delta, cut across writes
                    leak = encoder_for(PROVIDERS["openai-chat"])().delta(f"auth was {KEY}!")[0]
                    cut = leak.index(KEY.encode()) + 5
                    yield leak[:cut]
                    await asyncio.sleep(0.05)
                    yield leak[cut:]
                if mode == "keepalive-only":
                    yield EVENTS[0]
                    while True:
                        yield b": keep-alive\n\n"
                        await asyncio.sleep(0.1)
                for ev in EVENTS:
                    yield ev
                    await asyncio.sleep(0.01 if mode != "endless" else 0.05)
                while mode == "endless":
                    yield b": still generating\n\n"
                    await asyncio.sleep(0.05)
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
            finally:
                if mode in ("endless", "keepalive-only"):
                    self.cancelled.set()

        return StreamingResponse(gen(), headers=SSE)

    async def big_body(self, endless: bool) -> AsyncIterator[bytes]:
        piece = b"x" * 65536
        try:
            while endless or self.body_sent < 50 * 1024 * 1024:
                yield piece
                self.body_sent += len(piece)
                await asyncio.sleep(0)
        finally:
            self.cancelled.set()


class RawUpstream:
    """A TCP server that answers every connection with ``response`` (raw bytes), for
    responses no HTTP framework would produce."""

    def __init__(self, response: bytes) -> None:
        self.response = response
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                data = b""
                while b"\r\n\r\n" not in data:
                    got = conn.recv(65536)
                    if not got:
                        break
                    data += got
                conn.sendall(self.response)

    def __enter__(self) -> RawUpstream:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()


def as_json(resp_text: str) -> dict[str, object]:
    obj = json.loads(resp_text)
    assert isinstance(obj, dict)
    return obj
