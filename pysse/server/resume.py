"""Resumable answers on the relay: the answer outlives the connection.

The protocol (the page's side is ``web/bridge.js`` and ``pysse.call.reconnect``):

* ``POST {relay}`` starts an answer as before; the response carries
  ``X-Pysse-Answer-Id: <id>`` and its body is the upstream's bytes, unchanged.
* ``GET {relay}?answer=<id>&from=<n>`` (``n``: the bytes the page already has) replays the
  answer's bytes from byte ``n`` out of the record, then continues live, until the answer
  ends. ``410`` (``answer_expired``) once the answer is no longer kept.
* ``DELETE {relay}?answer=<id>`` is Stop: it cancels the upstream request and ends the record,
  whichever process and connection the answer is on.

A connection that drops without Stop changes nothing upstream: the answer keeps being
recorded, for up to ``unwatched`` seconds with no reader attached (then it is cancelled: a
generation nobody comes back for is not paid for long).

``Answers`` runs the producers (one task per answer: the upstream's bytes into the store,
plus a watchdog for Stop and the unwatched cap); ``TailResponse`` is a reader as an ASGI
response.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .body import json_error
from .serve import STOPPING
from .store import AnswerGone, AnswerStore, OffsetError, Opened, relay_note

__all__ = ["ANSWER_HEADER", "Answers", "TailResponse", "relay_note"]  # relay_note: from .store

ANSWER_HEADER = "x-pysse-answer-id"
RESUMED_HEADER = "x-pysse-resumed-from"
_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")
# ASCII digits only: str.isdigit() also says yes to '²', '①' and Arabic-Indic digits, which
# int() then refuses or takes as a number. 15 digits: a petabyte, far past any answer.
_OFFSET = re.compile(r"[0-9]{1,15}")

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class Answers:
    """The answers of one relay (or the demo): start them, resume them, stop them.

    One task per answer copies its bytes into the store. The unwatched cap is one sweeper
    for all of them (every ``check_every`` seconds it asks the store which answers someone
    reads, in one call: one Redis pipeline, not one per answer), not a timer per answer:
    with thousands of answers open, per-answer timers were thousands of wake-ups a second."""

    def __init__(self, store: AnswerStore, unwatched: float = 120.0) -> None:
        if unwatched <= 0:
            raise ValueError("--unwatched-timeout must be positive (or use --no-resume)")
        self.store = store
        self.unwatched = unwatched
        self.check_every = min(1.0, unwatched / 4)
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._stops: dict[str, Callable[[str], None]] = {}
        self._last_watched: dict[str, float] = {}
        self._sweeper: asyncio.Task[None] | None = None

    @property
    def running(self) -> int:
        """Producers still running (for tests, the bench and the metrics)."""
        return len(self._tasks)

    async def start(self, source: AsyncIterator[bytes], content_type: str) -> str:
        """Record ``source`` (already scrubbed and bounded by the relay) as a new answer, in
        a task of its own; returns the answer id."""
        answer_id = secrets.token_urlsafe(18)  # 144 bits: the id is the capability to read
        await self.store.create(answer_id, content_type)
        self._last_watched[answer_id] = time.monotonic()
        task = asyncio.create_task(self._produce(answer_id, source))
        self._tasks[answer_id] = task
        if self._sweeper is None or self._sweeper.done():
            self._sweeper = asyncio.create_task(self._sweep())
        return answer_id

    async def _produce(self, answer_id: str, source: AsyncIterator[bytes]) -> None:
        store = self.store
        task = asyncio.current_task()
        assert task is not None
        why: list[str] = []

        def stop(reason: str = "stopped by the user") -> None:
            if not why:
                why.append(reason)
                task.cancel()

        self._stops[answer_id] = stop
        store.on_stop(answer_id, stop)
        try:
            try:
                async for chunk in source:
                    if not await store.append(answer_id, chunk):
                        break  # not kept and nobody reads it: stop paying for it
            except asyncio.CancelledError:
                if not why:
                    raise
                task.uncancel()
            finally:
                aclose = getattr(source, "aclose", None)
                if aclose is not None:
                    await aclose()  # closes the upstream request
            if why:
                await store.append(answer_id, relay_note(why[0]))
        finally:
            self._tasks.pop(answer_id, None)
            self._stops.pop(answer_id, None)
            self._last_watched.pop(answer_id, None)
            store.on_stop(answer_id, None)
            with contextlib.suppress(Exception):
                await store.end(answer_id)

    async def _sweep(self) -> None:
        """The unwatched cap (and the producers' heartbeat, for a shared store)."""
        while self._tasks:
            await asyncio.sleep(self.check_every)
            ids = list(self._tasks)
            if not ids:
                break
            watched = await self.store.heartbeat(ids)
            now = time.monotonic()
            last = self._last_watched
            for answer_id in ids:
                if answer_id in watched:
                    last[answer_id] = now
                elif now - last.get(answer_id, now) >= self.unwatched:
                    stop = self._stops.get(answer_id)
                    if stop is not None:
                        stop(f"nobody watched it for {self.unwatched:g} s")

    async def aclose(self) -> None:
        tasks = list(self._tasks.values())
        if self._sweeper is not None:
            tasks.append(self._sweeper)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.store.aclose()

    # -- the HTTP side -------------------------------------------------------------------------

    async def resume(self, request: Request, headers: dict[str, str]) -> Response | TailResponse:
        """``GET ?answer=ID&from=N``: the answer from byte N, recorded then live."""
        answer_id = request.query_params.get("answer", "")
        start = request.query_params.get("from", "0")
        if not _ID.fullmatch(answer_id):
            return json_error(400, "bad_answer_id", "answer= must be an id the relay gave", headers)
        if not _OFFSET.fullmatch(start):
            return json_error(
                400,
                "bad_offset",
                f"from= must be a byte count in ASCII digits (0, 1, 2...), not {start[:20]!r}",
                headers,
            )
        try:
            opened = await self.store.open(answer_id, int(start))
        except AnswerGone as exc:
            return json_error(410, "answer_expired", str(exc), headers)
        except OffsetError as exc:
            return json_error(416, "bad_offset", str(exc), headers)
        return TailResponse(opened, answer_id, {**headers, RESUMED_HEADER: start})

    async def stop_request(self, request: Request, headers: dict[str, str]) -> Response:
        """``DELETE ?answer=ID``: Stop. Cancels the upstream wherever the answer runs."""
        answer_id = request.query_params.get("answer", "")
        if not _ID.fullmatch(answer_id):
            return json_error(400, "bad_answer_id", "answer= must be an id the relay gave", headers)
        result = await self.store.stop(answer_id)
        return JSONResponse(
            {"answer": answer_id, "result": result},
            headers={**headers, "cache-control": "no-store"},
        )


class TailResponse:
    """One reader of an answer as an ASGI response: the recorded bytes from the offset, then
    live ones, each sent as it comes (one HTTP chunk each). A client that leaves only ends
    this reader. ``cut_after``: drop the connection after that many bytes (the demo's
    ``/demo cut``), as a network would: no terminating chunk."""

    def __init__(
        self,
        opened: Opened,
        answer_id: str,
        headers: dict[str, str],
        cut_after: int | None = None,
    ) -> None:
        self.opened = opened
        self.answer_id = answer_id
        self.headers = {
            "content-type": opened.content_type,
            "cache-control": "no-cache",
            "x-accel-buffering": "no",
            **headers,
            ANSWER_HEADER: answer_id,
        }
        self.cut_after = cut_after

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        raw = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in self.headers.items()]
        chunks = self.opened.chunks
        finish = False
        try:
            await send({"type": "http.response.start", "status": 200, "headers": raw})
            pumping = asyncio.ensure_future(self._pump(send))
            leaving = asyncio.ensure_future(_until_disconnect(receive))
            stopping = STOPPING.waiter()
            waiting: set[asyncio.Future[Any]] = {pumping, leaving, stopping}
            try:
                await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for fut in waiting:
                    fut.cancel()
                await asyncio.gather(*waiting, return_exceptions=True)
            if pumping.done() and not pumping.cancelled():
                failed = pumping.exception()
                if failed is not None and not isinstance(failed, AnswerGone | OSError):
                    raise failed
                finish = failed is None and pumping.result()  # else: cut or gone, drop it
            elif stopping.done() and not stopping.cancelled():
                finish = True  # the server is shutting down: end what was sent properly
        finally:
            if isinstance(chunks, AsyncGenerator):
                with contextlib.suppress(Exception):
                    await chunks.aclose()
        if finish:
            with contextlib.suppress(OSError):
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        # else: return without ending the body; the server closes the connection, and the
        # client sees a broken stream, which it resumes.

    async def _pump(self, send: Send) -> bool:
        """Send the answer; True when it ended, False when cut on purpose."""
        sent = 0
        async for chunk in self.opened.chunks:
            if self.cut_after is not None and sent + len(chunk) >= self.cut_after:
                piece = chunk[: self.cut_after - sent]
                if piece:
                    await send({"type": "http.response.body", "body": piece, "more_body": True})
                return False
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            sent += len(chunk)
        return True


async def _until_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
