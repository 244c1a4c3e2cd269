"""The in-memory answer store: readers from any offset see recorded then live bytes and the
end; a reader leaving changes nothing for the producer; Stop reaches the producer; eviction
ends readers and stops producers; bad offsets and unknown answers are clear errors."""

from __future__ import annotations

import asyncio

import pytest

from pysse.server.config import open_store
from pysse.server.store import AnswerGone, MemoryStore, OffsetError, check_store


async def collect(store: MemoryStore, answer_id: str, offset: int) -> bytes:
    opened = await store.open(answer_id, offset)
    return b"".join([c async for c in opened.chunks])


def test_readers_get_recorded_then_live_bytes_then_the_end() -> None:
    async def main() -> None:
        store = MemoryStore()
        await store.create("a" * 10, "text/event-stream")
        await store.append("a" * 10, b"hello ")
        early = asyncio.create_task(collect(store, "a" * 10, 2))
        late = asyncio.create_task(collect(store, "a" * 10, 6))
        await asyncio.sleep(0.01)
        assert store.watchers("a" * 10) == 2 and await store.watched("a" * 10)
        await store.append("a" * 10, b"world")
        await store.end("a" * 10)
        assert await early == b"llo world" and await late == b"world"
        assert store.watchers("a" * 10) == 0
        assert await collect(store, "a" * 10, 11) == b""

    asyncio.run(main())


def test_a_reader_leaving_is_not_stop_and_stop_reaches_the_producer() -> None:
    async def main() -> None:
        store = MemoryStore()
        await store.create("b" * 10, "text/event-stream")
        stopped: list[str] = []
        store.on_stop("b" * 10, lambda: stopped.append("yes"))
        reader = asyncio.create_task(collect(store, "b" * 10, 0))
        await asyncio.sleep(0.01)
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
        assert stopped == [] and store.watchers("b" * 10) == 0
        assert await store.stop("b" * 10) == "stopped" and stopped == ["yes"]
        await store.end("b" * 10)
        assert await store.stop("b" * 10) == "ended"
        assert await store.stop("c" * 10) == "unknown"

    asyncio.run(main())


def test_a_full_store_never_cuts_a_reader_and_stops_only_an_unread_answer() -> None:
    async def main() -> None:
        store = MemoryStore(max_bytes=10)
        await store.create("old", "text/event-stream")
        await store.create("read", "text/event-stream")
        await store.create("new", "text/event-stream")
        stopped: list[str] = []
        for name in ("old", "read"):
            store.on_stop(name, lambda name=name: stopped.append(name))
        await store.append("old", b"1\n\n")
        await store.append("read", b"22\n\n")
        reader = asyncio.create_task(collect(store, "read", 0))
        await asyncio.sleep(0.01)
        assert await store.append("new", b"1234567")  # over the cap: "old", then "read"
        assert stopped == ["old"]  # nobody read "old": its upstream goes
        assert not await store.append("old", b"more")
        assert await store.append("read", b"33\n\n")  # "read" streams on to its reader
        await store.end("read")
        got = await reader
        assert got.startswith(b"22\n\n: pysse relay: this answer is no longer kept")
        assert got.endswith(b"33\n\n")
        for name in ("old", "read"):
            with pytest.raises(AnswerGone, match="not kept: the relay's store was full"):
                await store.open(name, 0)
        assert store.stats()["not_kept"] == 2

    asyncio.run(main())


def test_offsets_past_the_recorded_bytes_are_refused() -> None:
    async def main() -> None:
        store = MemoryStore()
        await store.create("d" * 10, "text/event-stream")
        await store.append("d" * 10, b"abc")
        with pytest.raises(OffsetError, match="has 3 bytes so far"):
            await store.open("d" * 10, 4)

    asyncio.run(main())


def test_store_specs() -> None:
    assert isinstance(open_store("memory"), MemoryStore)
    assert open_store("redis://127.0.0.1:1/0").kind == "redis"  # connects on first use only
    with pytest.raises(ValueError, match="expected 'memory' or a URL like redis://"):
        check_store("postgres://x")
    with pytest.raises(ValueError, match="positive"):
        check_store("memory", 0)


def test_an_answer_no_longer_kept_holds_at_most_its_backlog_for_a_slow_reader() -> None:
    # A full store stops keeping an answer, and then holds only what its reader has not
    # read yet; a reader slower than the upstream made that grow without a bound. Now the
    # producer waits (and with it the upstream) until the reader catches up.
    async def main() -> None:
        store = MemoryStore(max_bytes=10)
        store.backlog_max = 200  # more than the first event and the note together
        await store.create("slow", "text/event-stream")
        chunks = (await store.open("slow", 0)).chunks.__aiter__()
        first = asyncio.create_task(chunks.__anext__())  # the reader, attached and waiting
        await asyncio.sleep(0)
        event = b"data: 0123456789\n\n"  # 18 bytes
        await store.append("slow", event)  # over the cap: no longer kept, one reader
        got = await first
        assert got.startswith(event + b": pysse relay: this answer is no longer kept")
        written = 1
        producer = asyncio.create_task(store.append("slow", event))
        for _ in range(100):  # the producer appends until the reader is too far behind
            await asyncio.sleep(0)
            if not producer.done():
                break
            assert producer.result()
            written += 1
            producer = asyncio.create_task(store.append("slow", event))
        assert not producer.done()  # it waits for the reader
        held = store.book.get("slow", store.clock())
        assert held is not None and not held.kept
        assert 200 < len(held.data) <= 200 + len(event)  # bounded, not the whole answer
        while not producer.done():  # reading lets it go on (at half the backlog)
            got += await chunks.__anext__()
            await asyncio.sleep(0)
        assert await producer and len(held.data) <= 100
        await store.end("slow")
        got += b"".join([c async for c in chunks])
        # every event once, in order, also the one whose append waited (it was in already)
        assert got.count(event) == written + 1 and store.stats()["backlog_waits"] == 1

    asyncio.run(main())


def test_a_producer_waiting_on_a_slow_reader_goes_on_when_the_reader_leaves() -> None:
    async def main() -> None:
        store = MemoryStore(max_bytes=10)
        store.backlog_max = 200  # more than the first event and the note together
        event = b"data: 0123456789\n\n"  # 18 bytes
        await store.create("gone", "text/event-stream")
        reader = (await store.open("gone", 0)).chunks.__aiter__()
        first = asyncio.create_task(reader.__anext__())
        await asyncio.sleep(0)
        await store.append("gone", event)  # over the cap: no longer kept, one reader
        await first  # the event and the note: the reader is up to date
        for _ in range(200 // len(event)):
            await store.append("gone", event)  # 198 bytes behind: under the bound, no wait
        assert store.backlog_waits == 0
        waiting = asyncio.create_task(store.append("gone", event))  # 216: over it
        for _ in range(5):
            await asyncio.sleep(0)
        assert not waiting.done() and store.backlog_waits == 1  # blocked on the reader
        await reader.aclose()  # the page left: nobody reads it, nobody can resume it
        assert await waiting is True  # released; the next append says stop
        assert not await store.append("gone", event)

    asyncio.run(main())
