"""A script as an ASGI application: the same player on any ASGI server (uvicorn, hypercorn...)
inside an app of your own. The demo relay (``pysse.server.app``) answers every ``/demo``
scenario this way.

Each write is sent as its own ``http.response.body`` message (uvicorn writes it as one HTTP
chunk at once), and a disconnect stops the script. What ASGI cannot express is left to the
server: a ``drop`` returns without finishing the response, which uvicorn answers by closing the
connection (and logging "ASGI callable returned without completing response"). For byte-exact
faults (drops, slow headers) use the kit's own :class:`~pysse.testing.server.ScriptServer`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

from .player import play
from .script import Script

__all__ = ["ScriptResponse"]

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class ScriptResponse:
    """An ASGI app that plays one script: return it from a Starlette endpoint (it is called
    like a ``Response``) or serve it as an app.

    ``stop``, if given, is awaited beside the script: when it completes (the server is shutting
    down), the script stops and the response ends at once, properly."""

    def __init__(self, script: Script, stop: Callable[[], Awaitable[object]] | None = None) -> None:
        self.script = script
        self.stop = stop

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            raise ValueError(f"ScriptResponse serves HTTP, not {scope['type']!r}")
        sink = _ASGISink(send)
        playing = asyncio.create_task(play(self.script, sink))
        watching = asyncio.create_task(_until_disconnect(receive))
        waiting: set[asyncio.Future[Any]] = {playing, watching}
        # Shielded: the stop signal is shared by every response; ours must not cancel it.
        stopping = asyncio.shield(self.stop()) if self.stop is not None else None
        if stopping is not None:
            waiting.add(stopping)
        try:
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in waiting:
                task.cancel()
            await asyncio.gather(*waiting, return_exceptions=True)
        if stopping is not None and stopping.done() and not stopping.cancelled():
            await sink.end_now()
            return
        failed = None if playing.cancelled() else playing.exception()
        if failed is not None:
            raise failed


class _ASGISink:
    def __init__(self, send: Send) -> None:
        self.send = send
        self.started = self.ended = False

    async def start(self, status: int, headers: Sequence[tuple[str, str]]) -> None:
        raw = [(n.lower().encode("latin-1"), v.encode("latin-1")) for n, v in headers]
        await self.send({"type": "http.response.start", "status": status, "headers": raw})
        self.started = True

    async def end_now(self) -> None:
        """The server is stopping: end whatever was sent so far properly."""
        if not self.started:
            await self.start(503, [("content-type", "text/plain")])
        if not self.ended:
            await self.finish()

    async def write(self, data: bytes) -> None:
        await self.send({"type": "http.response.body", "body": data, "more_body": True})

    async def finish(self) -> None:
        await self.send({"type": "http.response.body", "body": b"", "more_body": False})
        self.ended = True

    async def drop(self) -> None:
        """Return without finishing the response: the server closes the connection."""


async def _until_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
