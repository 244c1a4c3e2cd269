"""Two relay processes sharing one real Redis (Debian's redis-server, started here on a free
loopback port): an answer started through relay A is resumed through relay B byte for byte,
stopped through B (A's upstream request is cancelled), and, when A itself dies, B replays what
was recorded and ends with a note instead of waiting for ever. Nothing is mocked."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Iterator

import httpx
import pytest

from pysse import ChatStream
from pysse.testing import Script, ScriptServer
from support import RedisServer, ServerProcess, free_port

BODY = {"model": "demo", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
TEXT = "Résumé: 東京 🙂 — one answer, two relays, no second generation. " * 8


def relay_process(up: ScriptServer, redis_url: str, *extra: str) -> ServerProcess:
    port = free_port()
    argv = [sys.executable, "-m", "pysse.server.relay", "--upstream", up.url + "/v1"]
    argv += ["--store", redis_url, "--port", str(port), *extra]
    return ServerProcess(argv, port)


@pytest.fixture
def two_relays(
    sse_server: ScriptServer, redis_server: RedisServer
) -> Iterator[tuple[ScriptServer, ServerProcess, ServerProcess]]:
    a = relay_process(sse_server, redis_server.url)
    try:
        b = relay_process(sse_server, redis_server.url)
    except BaseException:
        a.stop()
        raise
    try:
        yield sse_server, a, b
    finally:
        a.stop()
        b.stop()


def start_and_drop(c: httpx.Client, url: str, n: int) -> tuple[str, bytes]:
    """POST, keep the first ``n`` bytes received, drop the connection."""
    got = b""
    with c.stream("POST", url, json=BODY) as resp:
        assert resp.status_code == 200, resp.read()
        answer_id = resp.headers["x-pysse-answer-id"]
        for chunk in resp.iter_raw():
            got += chunk
            if len(got) >= n:
                break
    return answer_id, got[:n]


def test_relay_b_resumes_an_answer_relay_a_started(two_relays: tuple) -> None:  # type: ignore[type-arg]
    up, a, b = two_relays
    script = Script.answer(TEXT).chunked("random", sizes=(1, 50), seed=3).paced(0.005)
    whole = script.sent
    up.play(script)
    with httpx.Client(timeout=30) as c:
        for k in (1, 137, 600, len(whole) // 2 + 1, len(whole) - 3):
            answer_id, prefix = start_and_drop(c, a.url + "/relay", k)
            resp = c.get(b.url + "/relay", params={"answer": answer_id, "from": k})
            assert resp.status_code == 200, resp.text
            assert resp.headers["x-pysse-answer-id"] == answer_id
            assert prefix + resp.content == whole, f"cut at {k}"
    cs = ChatStream()
    cs.feed(whole)
    assert cs.outcome == "completed" and cs.text == TEXT
    assert len(up.requests) == 5  # one generation per answer, never a second


def test_stop_through_relay_b_cancels_relay_a_upstream(two_relays: tuple) -> None:  # type: ignore[type-arg]
    up, a, b = two_relays
    up.play(Script.answer(TEXT).paced(0.05).stall(after_event=5))  # generating for ever
    with httpx.Client(timeout=30) as c:
        answer_id, _ = start_and_drop(c, a.url + "/relay", 10)
        with c.stream("GET", b.url + "/relay", params={"answer": answer_id, "from": 10}) as resp:
            assert resp.status_code == 200
            it = resp.iter_raw()
            next(it)
            assert not up.last_request.wait_disconnected(0.5)  # still generating
            stop = c.delete(b.url + "/relay", params={"answer": answer_id})
            assert stop.json()["result"] == "stopped"
            # (It generates for ever: only the Stop ends it. Was also "within 3 s".)
            assert up.last_request.wait_disconnected(30), "A's upstream kept generating"
            rest = b"".join(it)  # B's reader sees the end A wrote
        assert rest.endswith(b"stream ended, stopped by the user\n\n")
        again = c.delete(a.url + "/relay", params={"answer": answer_id})
        assert again.json()["result"] == "ended"


def test_when_relay_a_dies_b_replays_what_was_kept_and_says_why(two_relays: tuple) -> None:  # type: ignore[type-arg]
    up, a, b = two_relays
    script = Script.answer(TEXT).paced(0.05).stall(after_event=8)
    held = script.sent  # the body (it stalls after the eighth event)
    eight = [i for i in range(len(held)) if held.startswith(b"\n\n", i)][7] + 2
    up.play(script)
    with httpx.Client(timeout=30) as c:
        answer_id, prefix = start_and_drop(c, a.url + "/relay", 40)
        # Wait until Redis holds all eight events (B serves them from there): was a 0.5 s
        # sleep, which a busy machine outran with fewer recorded.
        got = prefix
        with c.stream("GET", b.url + "/relay", params={"answer": answer_id, "from": 40}) as resp:
            for chunk in resp.iter_raw():
                got += chunk
                if len(got) >= eight:
                    break
        assert got[:eight] == held[:eight]
        a.proc.kill()  # the process holding the upstream connection is gone
        a.proc.wait(5)
        resp = c.get(b.url + "/relay", params={"answer": answer_id, "from": 40}, timeout=30)
        assert resp.status_code == 200
        data = prefix + resp.content
        assert data.endswith(b"the relay process that was streaming it stopped\n\n")
        cs = ChatStream()
        cs.feed(data)
        cs.close()
        assert cs.outcome == "truncated" and TEXT.startswith(cs.text) and cs.text
    assert up.last_request.wait_disconnected(30)


def test_an_answer_expires_from_redis(sse_server: ScriptServer, redis_server: RedisServer) -> None:
    # Redis keeps its own time: the answer is kept 5 s (room for the reads below on a busy
    # machine; it was 1 s), and its going is waited for, not slept past.
    sse_server.play(Script.answer("short and sweet"))
    a = relay_process(sse_server, redis_server.url, "--answer-ttl", "5")
    b = relay_process(sse_server, redis_server.url, "--answer-ttl", "5")
    try:
        with httpx.Client(timeout=30) as c:
            resp = c.post(a.url + "/relay", json=BODY)
            answer_id = resp.headers["x-pysse-answer-id"]
            kept = c.get(b.url + "/relay", params={"answer": answer_id, "from": 5})
            assert kept.content == resp.content[5:]
            too_far = c.get(b.url + "/relay", params={"answer": answer_id, "from": 10**6})
            assert too_far.status_code == 416
            deadline = time.monotonic() + 60
            while (
                gone := c.get(b.url + "/relay", params={"answer": answer_id, "from": 5})
            ).status_code == 200 and time.monotonic() < deadline:
                time.sleep(0.25)
            assert gone.status_code == 410
            assert "expired on the relay" in gone.json()["error"]["message"]
    finally:
        a.stop()
        b.stop()


def test_an_offset_past_a_live_answers_end_is_a_416_through_another_relay(
    redis_server: RedisServer,
) -> None:
    # The memory store answers 416 bad_offset for an offset the answer never reached; the
    # Redis store, asked by a process that does not produce the answer, gave 200 and nothing.
    from pysse.server.redis_store import RedisStore
    from pysse.server.store import OffsetError

    async def main() -> None:
        a, b = RedisStore(redis_server.url), RedisStore(redis_server.url)
        try:
            await a.create("live-answer-1", "text/event-stream")
            await a.append("live-answer-1", b"data: 12345\n\n")
            for store in (a, b):  # the producer's own process, and another one
                with pytest.raises(OffsetError, match="has 13 bytes so far"):
                    await store.open("live-answer-1", 14)
            opened = await b.open("live-answer-1", 13)  # exactly the end: fine, it waits
            assert opened.content_type == "text/event-stream"
            await a.create("live-answer-2", "text/event-stream")  # no byte yet
            with pytest.raises(OffsetError, match="has 0 bytes so far"):
                await b.open("live-answer-2", 1)
        finally:
            await a.aclose()
            await b.aclose()

    asyncio.run(main())


def test_a_slow_local_reader_of_a_copy_no_longer_kept_holds_the_producer(
    redis_server: RedisServer,
) -> None:
    # Past the local cap the producing process's copy holds only what its own readers have
    # not read; Redis keeps the whole answer. A slow local reader made that copy grow without
    # a bound; now the producer waits for it, and every byte still reaches Redis.
    from pysse.server.redis_store import RedisStore

    async def main() -> None:
        a, b = RedisStore(redis_server.url, max_bytes=10), RedisStore(redis_server.url)
        a.local.backlog_max = 100
        event = b"data: 0123456789\n\n"
        try:
            await a.create("slow-reader", "text/event-stream")
            reader = (await a.open("slow-reader", 0)).chunks.__aiter__()
            first = asyncio.create_task(reader.__anext__())
            await asyncio.sleep(0)
            await a.append("slow-reader", event)  # over the local cap: not kept locally
            got = await first
            written = 1
            producer = asyncio.create_task(a.append("slow-reader", event))
            for _ in range(50):
                await asyncio.sleep(0)
                if not producer.done():
                    break
                written += 1
                producer = asyncio.create_task(a.append("slow-reader", event))
            assert not producer.done() and a.local.stats()["backlog_waits"] == 1
            held = a.local.book.get("slow-reader", a.local.clock())
            assert held is not None and not held.kept and len(held.data) <= 100 + len(event)
            while not producer.done():  # reading lets it go on
                got += await reader.__anext__()
                await asyncio.sleep(0)
            assert await producer
            written += 1
            await a.end("slow-reader")
            got += b"".join([c async for c in reader])
            assert got == event * written  # the local copy has no note (Redis keeps it all)
            whole = b"".join([c async for c in (await b.open("slow-reader", 0)).chunks])
            assert whole == event * written
        finally:
            await a.aclose()
            await b.aclose()

    asyncio.run(main())
