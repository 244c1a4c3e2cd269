"""Where the relay keeps answers so a page can resume them: the interface, and the default
in-memory store (embedded, nothing to install). ``redis_store.RedisStore`` is the other
implementation, for several relay processes behind a load balancer. This module never names
it: the implementations stand on the interface, and the choice between them by ``--store``
is made above both (``config.open_store``).

An answer in a store is a stream of bytes with an end. Its *producer* (the task reading the
upstream, in the process that started the answer) appends and ends it; any number of
*readers* (the page's first connection, later resumes) read it from a byte offset, first
what is recorded and then live, until its end. A reader leaving changes nothing for the
producer: that is the point. Stop is explicit (``stop``), and reaches the producer wherever
it runs.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Literal

from .record import Record, RecordBook

log = logging.getLogger("pysse.relay")

# What an answer that is no longer kept holds for its slowest reader, at most: past it, its
# producer waits (and so does the upstream, whose socket is no longer read) until the reader
# is back under half of it. Without this bound a reader that reads slower than the model
# writes (a phone on a bad network) made the relay hold the rest of the answer in memory.
BACKLOG_MAX = 1 << 20


def relay_note(why: str) -> bytes:
    """The comment line the relay ends an answer with when it ends it itself: a comment, so
    it changes no text, and the page reports the answer as truncated with this reason. Here,
    with the stores, because both kinds of writer add it to an answer's bytes: the producer
    (``resume``) and a Redis reader whose producer died (``redis_store``)."""
    return f"\n\n: pysse relay: stream ended, {why}\n\n".encode()


NOT_KEPT = (
    "not kept: the relay's store was full, so this answer could not be kept for resuming "
    "(its first connection got all of it); the text received so far is kept"
)

__all__ = [
    "AnswerGone",
    "AnswerStore",
    "MemoryStore",
    "OffsetError",
    "Opened",
    "StopResult",
    "check_store",
    "printable_store",
    "relay_note",
]

StopResult = Literal["stopped", "ended", "unknown"]


class AnswerGone(Exception):
    """The answer is not (or no longer) in the store: it expired, was evicted, or never was."""


class OffsetError(Exception):
    """A resume asked for bytes from an offset the answer never reached."""


@dataclass
class Opened:
    """A reader on one answer: what the answer was sent as, and its bytes from the offset."""

    content_type: str
    chunks: AsyncIterator[bytes]


class AnswerStore:
    """The interface every store implements (see the module docstring)."""

    kind = "none"
    ttl: float = 600.0

    async def create(self, answer_id: str, content_type: str) -> None:
        raise NotImplementedError

    async def append(self, answer_id: str, data: bytes) -> bool:
        """Add bytes; False when nobody reads the answer and nobody could resume it (the
        store was full): stop producing."""
        raise NotImplementedError

    async def end(self, answer_id: str) -> None:
        raise NotImplementedError

    async def open(self, answer_id: str, offset: int) -> Opened:
        """A reader from ``offset``: ``AnswerGone`` or ``OffsetError`` before any byte."""
        raise NotImplementedError

    def on_stop(self, answer_id: str, stop: Callable[[], None] | None) -> None:
        """The local producer's cancel function (None: forget it, the answer ended)."""
        raise NotImplementedError

    async def stop(self, answer_id: str) -> StopResult:
        """Cancel the answer's producer, wherever it runs."""
        raise NotImplementedError

    async def watched(self, answer_id: str) -> bool:
        """Whether some reader is attached to the answer right now (any process)."""
        raise NotImplementedError

    async def heartbeat(self, answer_ids: list[str]) -> set[str]:
        """The producing process says these answers are alive (every second); returns the
        ones some reader is attached to. One call for all, so a shared store answers with
        one round trip."""
        return {a for a in answer_ids if await self.watched(a)}

    async def aclose(self) -> None:
        """Release connections and tasks (the server is stopping)."""

    def check_at_start(self) -> None:
        """A ``ConfigError`` naming the fix if this store cannot work at all (a Redis that
        does not answer). The relay asks before it listens, so a wrong ``--store`` is one
        line at start rather than an error at the first chat. Memory always works."""

    def stats(self) -> dict[str, int]:
        """Counters for the relay's metrics (store bytes, answers, evictions...)."""
        return {}

    def gone_message(self) -> str:
        return (
            f"this answer expired on the relay (it keeps answers {self.ttl:g} s after they "
            "end, within a size limit); the text received so far is kept"
        )


class MemoryStore(AnswerStore):
    """Answers in this process's memory: a ``RecordBook`` (time to live, total size cap,
    ended answers evicted first, then live ones no longer kept; see ``record``) plus the
    waiting: readers of an answer sleep on one future that its next append or end sets."""

    kind = "memory"

    def __init__(
        self,
        ttl: float = 600.0,
        max_bytes: int = 64 << 20,
        clock: Callable[[], float] | None = None,
        mirror: bool = False,
    ) -> None:
        """``mirror``: this process's copy of answers a shared store keeps whole (Redis):
        no note and no stopped producer when the cap stops keeping one here."""
        self.book = RecordBook(ttl, max_bytes, notes=not mirror)
        self.mirror = mirror
        self.ttl = ttl
        self.clock = clock or time.monotonic
        # Each waiting reader's own future (a cancelled reader cancels only its own).
        self._changed: dict[str, list[asyncio.Future[None]]] = {}
        self._stoppers: dict[str, Callable[[], None]] = {}
        self.backlog_max = BACKLOG_MAX
        self._drains: dict[str, asyncio.Future[None]] = {}  # producers waiting on a reader
        self.backlog_waits = 0  # times a producer waited for a slow reader (the metrics)

    def _wake(self, answer_id: str) -> None:
        for fut in self._changed.pop(answer_id, ()):
            if not fut.done():
                fut.set_result(None)

    def _unread(self, recs: list[Record]) -> None:
        """Answers nobody reads and nobody could resume (not kept): stop their producers."""
        for rec in recs:
            stop = self._stoppers.pop(rec.answer_id, None)
            if stop is not None:
                stop()

    async def create(self, answer_id: str, content_type: str) -> None:
        self.book.create(answer_id, self.clock(), content_type)

    def append_now(self, answer_id: str, data: bytes) -> bool:
        """``append`` without awaiting (the Redis store's local mirror uses it)."""
        rec = self.book.get(answer_id, self.clock())
        if rec is None or rec.ended:
            return False
        unread = self.book.append(rec, data, self.clock())
        if unread and not self.mirror:
            self._unread([r for r in unread if r is not rec])
            if rec in unread:
                return False
        self._wake(answer_id)
        return True

    async def append(self, answer_id: str, data: bytes) -> bool:
        if not self.append_now(answer_id, data):
            return False
        await self.drain(answer_id)
        return True

    async def drain(self, answer_id: str) -> None:
        """Wait while the answer is not kept and its slowest reader is more than
        ``backlog_max`` bytes behind (a kept answer holds its bytes anyway: its readers
        never hold more). Ends when the reader catches up to half of it, or leaves."""
        rec = self.book.get(answer_id, self.clock())
        if rec is None or rec.kept or len(rec.data) <= self.backlog_max or not rec.cursors:
            return
        self.backlog_waits += 1
        log.info(
            "answer %s...: a reader is %d KiB behind; its upstream waits until it catches up",
            answer_id[:6],
            len(rec.data) >> 10,
        )
        while len(rec.data) > self.backlog_max // 2 and rec.cursors and not rec.ended:
            fut = self._drains[answer_id] = asyncio.get_running_loop().create_future()
            try:
                await fut
            finally:
                self._drains.pop(answer_id, None)

    def _drained(self, rec: Record) -> None:
        fut = self._drains.get(rec.answer_id)
        caught_up = len(rec.data) <= self.backlog_max // 2 or not rec.cursors
        if fut is not None and not fut.done() and caught_up:
            fut.set_result(None)

    def end_now(self, answer_id: str) -> None:
        rec = self.book.get(answer_id, self.clock())
        if rec is not None:
            self.book.end(rec, self.clock())
        self._stoppers.pop(answer_id, None)
        self._wake(answer_id)

    async def end(self, answer_id: str) -> None:
        self.end_now(answer_id)

    def has(self, answer_id: str) -> bool:
        return self.book.get(answer_id, self.clock()) is not None

    async def open(self, answer_id: str, offset: int) -> Opened:
        rec = self.book.get(answer_id, self.clock())
        if rec is None:
            raise AnswerGone(self.gone_message())
        if not rec.kept:
            raise AnswerGone(NOT_KEPT)
        if offset < 0 or offset > rec.size:
            raise OffsetError(
                f"this answer has {rec.size} bytes so far; a resume cannot start at byte {offset}"
            )
        return Opened(rec.content_type, self._tail(rec, offset))

    async def _tail(self, rec: Record, offset: int) -> AsyncIterator[bytes]:
        book = self.book
        cursor = book.attach(rec, offset)
        if cursor is None:  # let go between open() and the first read
            raise AnswerGone(NOT_KEPT)
        key = rec.answer_id
        try:
            while True:
                chunk = book.read(rec, cursor)
                if chunk:
                    if self._drains:
                        self._drained(rec)
                    yield chunk
                    continue
                if rec.ended:
                    return
                fut = asyncio.get_running_loop().create_future()
                self._changed.setdefault(key, []).append(fut)
                await fut
        finally:
            if book.detach(rec, cursor) and not self.mirror:
                self._unread([rec])
            if self._drains:
                self._drained(rec)

    def on_stop(self, answer_id: str, stop: Callable[[], None] | None) -> None:
        if stop is None:
            self._stoppers.pop(answer_id, None)
        else:
            self._stoppers[answer_id] = stop

    def stop_now(self, answer_id: str) -> StopResult:
        stop = self._stoppers.pop(answer_id, None)
        if stop is not None:
            stop()
            return "stopped"
        return "ended" if self.has(answer_id) else "unknown"

    async def stop(self, answer_id: str) -> StopResult:
        return self.stop_now(answer_id)

    def watchers(self, answer_id: str) -> int:
        rec = self.book.get(answer_id, self.clock())
        return len(rec.cursors) if rec is not None else 0

    async def watched(self, answer_id: str) -> bool:
        return self.watchers(answer_id) > 0

    def stats(self) -> dict[str, int]:
        book = self.book
        return {
            "store_bytes": book.total,
            "store_answers": len(book),
            "evictions": book.evictions,
            "not_kept": book.not_kept,
            "backlog_waits": self.backlog_waits,
        }


REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def printable_store(spec: str) -> str:
    """``--store`` as a message may show it: what comes before an ``@`` (a user and a
    password) and a ``password=`` query value replaced by ``***``."""
    shown = re.sub(r"(?<=://)[^/?#]*@", "***@", spec, count=1)
    return re.sub(r"(?i)([?&]password=)[^&#]*", r"\1***", shown)


def check_store(spec: str, unwatched: float = 120.0) -> None:
    """A ``ValueError`` naming the fix when ``--store`` or ``--unwatched-timeout`` is wrong."""
    if spec not in ("", "memory") and not spec.startswith(REDIS_SCHEMES):
        raise ValueError(
            f"--store {printable_store(spec)!r}: expected 'memory' or a URL like "
            "redis://127.0.0.1:6379/0"
        )
    if not unwatched > 0:
        raise ValueError("--unwatched-timeout must be a positive number of seconds")
