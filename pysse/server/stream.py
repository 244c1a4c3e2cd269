"""The upstream's bytes as they arrive, with the relay's deadlines: the per-chunk path.

A chunk's path is: httpx reads it, the content watch looks at it (``watch``), the scrubber
replaces the key in it (``upstream.Scrubber``), and it is yielded (to the answer's record,
or straight to the client with ``--no-resume``). Nothing else happens per chunk: no timer,
no task, no copy.

Why the deadlines live here, in one task for all streams (``StreamGuard``): the idle,
content and total deadlines used to be a ``asyncio.wait`` with a timeout around every read,
a task, a future and a timer per chunk, and they were most of the relay's CPU at a few
thousand streams. Now each read only writes the time it got bytes, and one sweeper, a few
times a second, ends the streams past a deadline (so a deadline is late by at most the
sweep interval, a quarter of the shortest deadline, at most 1 s). Server shutdown ends
every stream at once the same way.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable

import httpx

from .serve import STOPPING
from .upstream import Decompressor, Scrubber
from .watch import ContentWatch

__all__ = ["StreamGuard", "passthrough"]

log = logging.getLogger("pysse.relay")


class _Slot:
    """One open stream, as the sweeper sees it."""

    __slots__ = ("deadline", "last_byte", "last_content", "note", "reading", "task")

    def __init__(self, task: asyncio.Task[object], now: float, deadline: float | None) -> None:
        self.task = task
        self.last_byte = now
        self.last_content = now
        self.deadline = deadline
        self.reading = False  # waiting on the upstream: the only place a deadline cancels
        self.note = ""  # why the sweeper ends it


class StreamGuard:
    """The deadlines of every open upstream stream of one relay, checked by one task."""

    def __init__(self, idle: float, content: float, total: float | None) -> None:
        self.idle = idle
        self.content = content
        self.total = total
        self.every = min(1.0, idle / 4, content / 4, total / 4 if total else 1.0)
        self._slots: set[_Slot] = set()
        self.chunks = 0  # relayed, ever (for the metrics)
        self._sweeper: asyncio.Task[None] | None = None
        self._stop_hook: asyncio.Future[None] | None = None

    @property
    def open_streams(self) -> int:
        return len(self._slots)

    def open(self) -> _Slot:
        task = asyncio.current_task()
        assert task is not None
        now = time.monotonic()
        slot = _Slot(task, now, now + self.total if self.total else None)
        self._slots.add(slot)
        if self._sweeper is None or self._sweeper.done():
            self._sweeper = asyncio.create_task(self._sweep())
        loop = task.get_loop()
        if self._stop_hook is None or self._stop_hook.get_loop() is not loop:
            self._stop_hook = STOPPING.waiter()  # one per relay and loop, not per stream
            self._stop_hook.add_done_callback(self._stop_all)
        return slot

    def close(self, slot: _Slot) -> None:
        self._slots.discard(slot)

    def _end(self, slot: _Slot, note: str) -> None:
        if not slot.note:
            slot.note = note
            if slot.reading:
                slot.task.cancel()
            # else it is writing: it sees the note before its next read

    def _stop_all(self, hook: asyncio.Future[None]) -> None:
        if hook.cancelled():
            return
        for slot in list(self._slots):
            self._end(slot, "the relay is shutting down")

    async def _sweep(self) -> None:
        while self._slots:
            await asyncio.sleep(self.every)
            now = time.monotonic()
            for slot in list(self._slots):
                if slot.note:
                    continue
                if not slot.reading:  # its reader holds it: see passthrough
                    if slot.deadline is not None and now >= slot.deadline:
                        self._end(slot, f"the answer took over {self.total or 0:g} s")
                    continue
                if now - slot.last_byte >= self.idle:
                    self._end(slot, f"no bytes for {self.idle:g} s")
                elif now - slot.last_content >= self.content:
                    self._end(slot, f"only keep-alives for {self.content:g} s")
                elif slot.deadline is not None and now >= slot.deadline:
                    self._end(slot, f"the answer took over {self.total or 0:g} s")


async def passthrough(
    upstream: httpx.Response,
    dec: Decompressor | None,
    scrub: Scrubber,
    guard: StreamGuard,
    release: Callable[[], None],
) -> AsyncIterator[bytes]:
    """The upstream's bytes as they arrive. Ends (without the format's terminal signal, so
    the page reports it as truncated) when the upstream is silent for the idle timeout,
    sends only keep-alives for the content timeout, or the answer's total deadline passes;
    a comment line says which. After the terminal signal only keep-alives or the end can
    come, and the upstream closes: the deadlines then only bound an upstream that does not
    close."""
    watch = ContentWatch()
    slot = guard.open()
    it = upstream.aiter_raw().__aiter__()
    note = ""
    clock = time.monotonic
    try:
        while not slot.note:
            # The time since the last chunk was spent by whoever reads this (a slow client,
            # or a producer waiting for a slow reader: ``MemoryStore.drain``), not waiting on
            # the upstream: it is not the upstream's silence, so the deadlines move on by it.
            held = clock() - slot.last_byte
            slot.last_byte += held
            slot.last_content += held
            slot.reading = True
            try:
                chunk = await it.__anext__()
            except StopAsyncIteration:
                break
            except asyncio.CancelledError:
                if not slot.note:
                    raise  # the client left (--no-resume) or Stop: not a deadline
                slot.task.uncancel()
                break
            except httpx.HTTPError as exc:
                note = f"the upstream connection broke ({type(exc).__name__})"
                break
            finally:
                slot.reading = False
            now = slot.last_byte = clock()
            guard.chunks += 1
            if dec is None:
                if watch.feed(chunk):
                    slot.last_content = now
                out = scrub.feed(chunk)
                if out:
                    yield out
                continue
            for piece in dec.feed(chunk):
                if watch.feed(piece):
                    slot.last_content = now
                out = scrub.feed(piece)
                if out:
                    yield out
        note = note or slot.note
        tail = scrub.flush()
        if tail:
            yield tail
        if note:
            if not STOPPING.is_set():  # at shutdown the one line is "pysse: stopped"
                log.warning("stream ended: %s", note)
            yield f"\n\n: pysse relay: stream ended, {note}\n\n".encode()
    finally:
        guard.close(slot)
        try:
            await upstream.aclose()  # also runs when the browser disconnects
        finally:
            release()
