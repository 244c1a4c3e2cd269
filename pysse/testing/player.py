"""Playing a :class:`~pysse.testing.script.Script`: the one place that turns a script's
timeline into actions, whatever carries them.

A transport is a :class:`Sink` with four operations: send the status line and headers, send one
write (as its own HTTP chunk), end the body properly, or drop the connection. The kit's raw
HTTP server (:mod:`pysse.testing.server`) and the ASGI adapter (:mod:`pysse.testing.asgi`, which
the demo relay uses) are the two sinks; timing and order live only here.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import Protocol

from .script import Script

__all__ = ["Sink", "play", "wait"]


class Sink(Protocol):
    """Where a script is played to."""

    async def start(self, status: int, headers: Sequence[tuple[str, str]]) -> None:
        """Send the status line and these headers."""

    async def write(self, data: bytes) -> None:
        """Send ``data`` now, as one HTTP chunk (flushed, not buffered)."""

    async def finish(self) -> None:
        """End the body properly (the terminating zero-length chunk)."""

    async def drop(self) -> None:
        """Close the connection without ending the body."""


async def wait(seconds: float, release: asyncio.Semaphore | None = None) -> None:
    """``asyncio.sleep``, where ``math.inf`` means "until released" (one ``release`` per wait
    for ever: a test holding the answer at a point) or cancelled (the client left or the server
    stops)."""
    if math.isinf(seconds):
        if release is None:
            await asyncio.Event().wait()
        else:
            await release.acquire()
    elif seconds > 0:
        await asyncio.sleep(seconds)


async def play(script: Script, sink: Sink, release: asyncio.Semaphore | None = None) -> None:
    """Perform ``script`` on ``sink``: the headers after ``headers_delay``, then each write after
    its delay, then the ending. Cancel the task to stop it (a disconnected client). A delay of
    ``math.inf`` (``.stall()`` without seconds, ...) lasts until ``release`` is released, if
    given: that is how a test holds an answer at a point for as long as it needs."""
    await wait(script.headers_delay, release)
    await sink.start(script.status, script.response_headers())
    for delay, data in script.writes:
        await wait(delay, release)
        if data:
            await sink.write(data)
    if script.ending == "drop":
        await sink.drop()
    else:
        await sink.finish()
