"""A fake provider on loopback for the relay tests: records what it received, streams a known
answer (or a 429, or a slow first byte, or an endless keep-alive), and notices disconnects."""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from pysse.providers import PROVIDERS, encode_answer
from pysse.server.demo import split_deltas

KEY = "sk-test-SECRET-0123456789"
DELTAS = split_deltas("Hello from the fake upstream — 東京 🙂 " * 20, random.Random(3))
EVENTS = encode_answer(PROVIDERS["openai-chat"], DELTAS)


class Upstream:
    """A fake provider: records what it received, streams EVENTS, notices disconnects."""

    def __init__(self) -> None:
        self.headers: list[dict[str, str]] = []
        self.bodies: list[bytes] = []
        self.first_sent: float | None = None
        self.cancelled = threading.Event()
        self.mode = "ok"
        self.app = Starlette(
            routes=[Route("/v1/chat/completions", self.endpoint, methods=["POST"])]
        )

    async def endpoint(self, request: Request) -> Response:
        self.headers.append(dict(request.headers))
        self.bodies.append(await request.body())
        if self.mode == "429":
            return JSONResponse(
                {"error": {"message": "slow down", "type": "rate_limit"}},
                429,
                headers={"retry-after": "12"},
            )

        async def gen() -> AsyncIterator[bytes]:
            try:
                if self.mode == "slow-first":
                    self.first_sent = time.perf_counter()
                    yield EVENTS[0]
                    await asyncio.sleep(2.0)  # the relay must not wait for more
                for ev in EVENTS if self.mode != "slow-first" else EVENTS[1:]:
                    yield ev
                    await asyncio.sleep(0.01 if self.mode != "endless" else 0.05)
                while self.mode == "endless":
                    yield b": still generating\n\n"
                    await asyncio.sleep(0.05)
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
            finally:
                if self.mode == "endless":
                    self.cancelled.set()

        return StreamingResponse(gen(), headers={"content-type": "text/event-stream"})
