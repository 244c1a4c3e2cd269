"""Answers kept in Redis, so that any relay process behind a load balancer can resume (or
stop) an answer another one started. ``--store redis://host:port/db``; needs the ``redis``
package (``pip install 'pysse[redis]'``).

The layout, per answer ``ID`` (all keys expire ``ttl`` seconds after the answer ends, or
after its producer was last seen alive):

* ``pysse:a:ID:m``  a hash: the content type.
* ``pysse:a:ID:s``  a Redis Stream of the bytes. Entry ids encode byte offsets: the chunk
  starting at byte ``n`` is entry ``1-n``, so a resume from byte ``k`` finds its first chunk
  with one ``XREVRANGE ... 1-k - COUNT 1`` and then follows with ``XREAD BLOCK``. The end is
  entry ``2-0``.
* ``pysse:a:ID:p``  the producer's heartbeat (a few seconds' expiry, refreshed every second):
  when it lapses without an end, the process that was reading the upstream died; readers
  elsewhere end with a note instead of waiting for ever.
* ``pysse:a:ID:w``  a reader's heartbeat in another process: "someone is watching", for the
  producer's unwatched cap.
* channel ``pysse:stop``  Stop for an answer whose producer runs in another process.

The producing process also keeps the answer in a local ``MemoryStore``: its own readers (the
page's first connection, a resume that lands on the same process) are fed from memory, so
recording in Redis adds nothing to their latency; Redis is for the other processes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from ..errors import ConfigError
from .store import (
    AnswerGone,
    AnswerStore,
    MemoryStore,
    OffsetError,
    Opened,
    StopResult,
    printable_store,
    relay_note,
)

__all__ = ["RedisStore"]

log = logging.getLogger("pysse.relay")

STOP_CHANNEL = "pysse:stop"
END_ID = "2-0"
HEARTBEAT_MS = 5000
WATCH_MS = 3000
CATCH_UP_S = 2.0  # how long a resume past a live answer's bytes in Redis waits for them


def _key(answer_id: str, part: str) -> str:
    return f"pysse:a:{answer_id}:{part}"


def _start_of(entry_id: bytes | str) -> int:
    text = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    return int(text.split("-", 1)[1])


def _is_end(entry_id: bytes | str) -> bool:
    return (entry_id.decode() if isinstance(entry_id, bytes) else entry_id) == END_ID


def _clause(exc: Exception) -> str:
    """An exception's message to go inside a sentence: the system's reason when a socket
    failed (redis-py wraps it: "Error 111 connecting to host:port. Connection refused."),
    else its own message, on one line, without the final period."""
    cause = exc.__cause__ or exc.__context__
    if isinstance(cause, OSError) and cause.strerror:
        return cause.strerror
    return " ".join(str(exc).split()).rstrip(".") or type(exc).__name__


def _size_of(last: list[Any]) -> tuple[int, bool]:
    """An answer's size so far and whether it ended, from its stream's last two entries:
    the last data entry's start plus its length (the end entry, if any, is the last)."""
    data = [e for e in last if not _is_end(e[0])]
    size = _start_of(data[0][0]) + len(data[0][1][b"d"]) if data else 0
    return size, bool(last) and _is_end(last[0][0])


class RedisStore(AnswerStore):
    """See the module docstring."""

    kind = "redis"

    def __init__(self, url: str, ttl: float = 600.0, max_bytes: int = 64 << 20) -> None:
        try:
            import redis.asyncio  # noqa: F401
        except ImportError:
            raise ConfigError(
                "--store redis:// needs the redis package: pip install 'pysse[redis]'"
            ) from None
        self.url = url
        self.ttl = ttl
        self.local = MemoryStore(ttl, max_bytes, mirror=True)
        self._redis: Any = None
        self._offsets: dict[str, int] = {}  # next byte offset of each local answer
        self._listener: asyncio.Task[None] | None = None
        self._warned = 0.0
        self._refreshed = 0.0
        # Bytes for Redis, written by one flusher task in one pipeline per loop turn (not one
        # round trip per chunk): (answer id, entry id, fields), in order.
        self._queue: list[tuple[str, str, dict[str, Any]]] = []
        self._written: list[asyncio.Future[None]] = []  # set once their batch is in Redis
        self._flusher: asyncio.Task[None] | None = None

    @property
    def redis(self) -> Any:
        if self._redis is None:
            import redis.asyncio as aioredis

            # Waits for a free connection instead of failing at redis-py's default cap of
            # 100 (each reader in another process holds one while its XREAD blocks).
            pool = aioredis.BlockingConnectionPool.from_url(
                self.url, max_connections=1024, timeout=30
            )
            self._redis = aioredis.Redis(connection_pool=pool)
        return self._redis

    def check_at_start(self, timeout: float = 3.0) -> None:
        """One PING before the relay listens: a Redis that is not running, not there, or
        refuses the password is a ``ConfigError`` now, not an error at the first chat.
        Synchronous, on a client of its own: no event loop runs yet, and the relay's own
        connections belong to the loop that serves."""
        import redis

        shown = printable_store(self.url)
        try:
            client = redis.Redis.from_url(
                self.url, socket_connect_timeout=timeout, socket_timeout=timeout
            )
        except ValueError as exc:  # a port that is no number, an unknown option
            raise ConfigError(
                f"--store {shown}: {exc}; give a URL like redis://127.0.0.1:6379/0"
            ) from None
        try:
            client.ping()
        except redis.AuthenticationError as exc:
            raise ConfigError(
                f"--store {shown}: Redis refused the credentials ({_clause(exc)}): put the "
                "right password in the URL, redis://:PASSWORD@host:port/db"
            ) from None
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise ConfigError(
                f"--store {shown}: cannot reach Redis ({_clause(exc)}): start redis-server "
                "there, or correct the host and port in --store"
            ) from None
        except redis.RedisError as exc:
            raise ConfigError(
                f"--store {shown}: Redis refused to serve ({_clause(exc)}): correct --store"
            ) from None
        finally:
            client.close()

    def _warn(self, what: str, exc: Exception) -> None:
        now = time.monotonic()
        if now - self._warned > 10:
            self._warned = now
            log.warning("redis store (%s): %s failed: %s", printable_store(self.url), what, exc)

    # -- the producing process -----------------------------------------------------------------

    async def create(self, answer_id: str, content_type: str) -> None:
        await self.local.create(answer_id, content_type)
        self._offsets[answer_id] = 0
        self._ensure_listener()
        # Written with whatever else this loop turn queued (one pipeline for many requests),
        # and awaited: the page learns the answer's id only once any process can find it.
        written = asyncio.get_running_loop().create_future()
        self._written.append(written)
        self._enqueue(answer_id, "", {"ct": content_type})
        await written

    async def append(self, answer_id: str, data: bytes) -> bool:
        self.local.append_now(answer_id, data)  # local readers first, no Redis wait
        start = self._offsets.get(answer_id)
        if start is None:
            return False
        if not data:
            return True
        self._offsets[answer_id] = start + len(data)
        self._enqueue(answer_id, f"1-{start}", {"d": data})
        await self.local.drain(answer_id)  # a slow local reader of a copy no longer kept
        return True  # kept whole in Redis, whatever the local copy's cap

    async def end(self, answer_id: str) -> None:
        self.local.end_now(answer_id)
        if self._offsets.pop(answer_id, None) is None:
            return
        self._enqueue(answer_id, END_ID, {"end": 1})

    def _enqueue(self, answer_id: str, entry_id: str, fields: dict[str, Any]) -> None:
        """Queue a write: ``entry_id`` "" is the answer's creation (its metadata and first
        heartbeat), ``END_ID`` its end, else a chunk."""
        self._queue.append((answer_id, entry_id, fields))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())

    async def _flush(self) -> None:
        """Write what was queued, in one pipeline per round, until the queue is empty. Redis
        down: local readers go on; other processes cannot resume (one warning per 10 s)."""
        ttl_ms = int(self.ttl * 1000)
        while self._queue:
            await asyncio.sleep(0)  # let this loop turn's other chunks join the batch
            batch, self._queue = self._queue, []
            written, self._written = self._written, []
            try:
                async with self.redis.pipeline(transaction=False) as pipe:
                    for answer_id, entry_id, fields in batch:
                        if not entry_id:
                            pipe.hset(_key(answer_id, "m"), mapping=fields)
                            pipe.pexpire(_key(answer_id, "m"), ttl_ms)
                            pipe.set(_key(answer_id, "p"), 1, px=HEARTBEAT_MS)
                            continue
                        pipe.xadd(_key(answer_id, "s"), fields, id=entry_id)
                        if entry_id == END_ID:
                            pipe.pexpire(_key(answer_id, "s"), ttl_ms)
                            pipe.pexpire(_key(answer_id, "m"), ttl_ms)
                            pipe.delete(_key(answer_id, "p"))
                    await pipe.execute(raise_on_error=False)
            except Exception as exc:
                self._warn("write", exc)
            finally:
                for fut in written:
                    if not fut.done():
                        fut.set_result(None)

    async def watched(self, answer_id: str) -> bool:
        return answer_id in await self.heartbeat([answer_id])

    async def heartbeat(self, answer_ids: list[str]) -> set[str]:
        """Every second from the producing process, for all its answers in one pipeline:
        the producers' heartbeats, "is a reader elsewhere watching", and (every quarter of
        the time to live) the keys' expiry pushed back."""
        seen = {a for a in answer_ids if self.local.watchers(a) > 0}
        if not answer_ids:
            return seen
        now = time.monotonic()
        refresh = now - self._refreshed >= self.ttl / 4
        if refresh:
            self._refreshed = now
        ttl_ms = int(self.ttl * 1000)
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                for answer_id in answer_ids:
                    pipe.set(_key(answer_id, "p"), 1, px=HEARTBEAT_MS)
                    pipe.exists(_key(answer_id, "w"))
                    if refresh:
                        pipe.pexpire(_key(answer_id, "s"), ttl_ms)
                        pipe.pexpire(_key(answer_id, "m"), ttl_ms)
                replies = await pipe.execute()
        except Exception as exc:
            self._warn("heartbeat", exc)
            return seen
        step = 4 if refresh else 2
        for i, answer_id in enumerate(answer_ids):
            if replies[i * step + 1]:
                seen.add(answer_id)
        return seen

    def stats(self) -> dict[str, int]:
        return self.local.stats()

    def on_stop(self, answer_id: str, stop: Callable[[], None] | None) -> None:
        self.local.on_stop(answer_id, stop)

    def _ensure_listener(self) -> None:
        if self._listener is None or self._listener.done():
            self._listener = asyncio.create_task(self._listen())

    async def _listen(self) -> None:
        """Stops published by other processes, for the answers produced here."""
        pubsub = self.redis.pubsub()
        try:
            await pubsub.subscribe(STOP_CHANNEL)
            while True:
                msg = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                if msg and msg.get("type") == "message":
                    data = msg["data"]
                    self.local.stop_now(data.decode() if isinstance(data, bytes) else str(data))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._warn("subscribe", exc)
        finally:
            with contextlib.suppress(Exception):
                await pubsub.aclose()

    # -- any process ---------------------------------------------------------------------------

    async def stop(self, answer_id: str) -> StopResult:
        if self.local.stop_now(answer_id) == "stopped":
            return "stopped"
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.exists(_key(answer_id, "m"))
            pipe.xrevrange(_key(answer_id, "s"), "+", "-", count=1)
            known, last = await pipe.execute()
        if not known:
            return "unknown"
        if last and _is_end(last[0][0]):
            return "ended"
        await self.redis.publish(STOP_CHANNEL, answer_id)
        return "stopped"

    async def open(self, answer_id: str, offset: int) -> Opened:
        if self.local.has(answer_id):
            with contextlib.suppress(AnswerGone):  # not kept here for space: Redis has it
                return await self.local.open(answer_id, offset)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hget(_key(answer_id, "m"), "ct")
            pipe.xrevrange(_key(answer_id, "s"), "+", "-", count=2)
            ctype, last = await pipe.execute()
        if ctype is None:
            raise AnswerGone(self.gone_message())
        size, ended = _size_of(last)
        # Past the size so far is a 416, as from the memory store. But the producing process
        # feeds its own readers before its chunks reach Redis (one pipeline per loop turn),
        # so a page may hold bytes Redis has not got yet: a live answer gets a moment
        # (CATCH_UP_S) to catch up before the offset is refused.
        deadline = time.monotonic() + CATCH_UP_S
        while offset > size and not ended and time.monotonic() < deadline:
            await self.redis.xread({_key(answer_id, "s"): "$"}, count=1, block=100)
            size, ended = _size_of(
                await self.redis.xrevrange(_key(answer_id, "s"), "+", "-", count=2)
            )
        if offset > size:
            raise OffsetError(
                f"this answer has {size} bytes so far; a resume cannot start at byte {offset}"
            )
        return Opened(ctype.decode(), self._tail(answer_id, offset))

    async def _tail(self, answer_id: str, offset: int) -> AsyncIterator[bytes]:
        stream = _key(answer_id, "s")
        r = self.redis
        last = "0-0"
        found = await r.xrevrange(stream, f"1-{offset}", "-", count=1)
        pending: list[Any] = list(found)
        watch_at = 0.0
        while True:
            for entry_id, fields in pending:
                last = entry_id
                if _is_end(entry_id):
                    return
                start, data = _start_of(entry_id), fields[b"d"]
                if start + len(data) > offset:
                    yield data[max(0, offset - start) :]
                    offset = start + len(data)
            now = time.monotonic()
            if now - watch_at > 1.0:
                watch_at = now
                await r.set(_key(answer_id, "w"), 1, px=WATCH_MS)
            got = await r.xread({stream: last}, count=256, block=1000)
            pending = got[0][1] if got else []
            if not pending and not await r.exists(_key(answer_id, "p")):
                # One last look: the end may have been written just before the heartbeat went.
                tail = await r.xread({stream: last}, count=256)
                pending = tail[0][1] if tail else []
                if not pending:
                    yield relay_note("the relay process that was streaming it stopped")
                    return

    async def aclose(self) -> None:
        if self._flusher is not None:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(self._flusher, 2)
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(BaseException):
                await self._listener
        if self._redis is not None:
            with contextlib.suppress(Exception):
                await self._redis.aclose()
                await self._redis.connection_pool.disconnect()  # ours: aclose leaves it
