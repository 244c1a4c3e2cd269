"""Resumable answers through the real relay on loopback (``pysse.server.resume``): the
connection is cut at random byte offsets and at every offset of a short answer, in all four
formats, and the resumed stream is byte-identical to the uninterrupted one, with one upstream
request per answer; a disconnect is not Stop, Stop is; the unwatched cap; expiry; bounded
memory with many unwatched answers at once."""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from pysse import ChatStream
from pysse.server.relay import RelayConfig, create_relay_app
from pysse.server.resume import Answers
from pysse.server.store import MemoryStore
from pysse.testing import Script, ScriptServer
from support import LiveServer

PAGE = "http://page.example"
FORMATS = ["openai-chat", "openai-responses", "anthropic", "gemini"]
# Multi-byte characters everywhere, so cuts fall inside UTF-8 sequences; Gemini's CRLF
# framing puts cuts between a CR and its LF.
LONG_TEXT = (
    "Résumé of the answer: 東京 is big, 🙂 is a smile, naïve café. Line two\nand three. " * 6
)
SHORT_TEXT = "Hé 東 🙂!"


def make_relay(
    up: ScriptServer, fmt: str, clock: Callable[[], float] | None = None, **kw: Any
) -> tuple[LiveServer, Answers]:
    """The relay in this process; ``clock``: the answer store's clock, which the test moves
    (expiry without sleeping past a time to live)."""
    cfg = RelayConfig(
        upstream=up.url + ("/v1beta" if fmt == "gemini" else "/v1"),
        format=fmt,
        allow_origins=[PAGE],
        **kw,
    )
    answers = cfg.answers()
    assert answers is not None
    if clock is not None:
        store = MemoryStore(cfg.answer_ttl, cfg.store_max_bytes, clock=clock)
        answers = Answers(store, cfg.unwatched_timeout)
    return LiveServer(create_relay_app(cfg, answers=answers)), answers


def body_for(fmt: str) -> dict[str, Any]:
    if fmt == "gemini":
        return {"model": "demo", "contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    return {"model": "demo", "stream": True, "messages": [{"role": "user", "content": "hi"}]}


def summary(cs: ChatStream) -> tuple[Any, ...]:
    return (cs.text, cs.outcome, cs.usage, cs.finish_reason, cs.finish_detail)


def parse(pieces: list[bytes], fmt: str) -> ChatStream:
    cs = ChatStream(fmt)  # type: ignore[arg-type]
    for p in pieces:
        cs.feed(p)
    cs.close()
    return cs


async def cut_and_resume(
    client: httpx.AsyncClient, url: str, fmt: str, k: int, rnd: random.Random
) -> tuple[bytes, list[bytes]]:
    """POST, read until k bytes arrived, drop the connection (bytes past k count as lost in
    flight), then resume from k. Returns the bytes the client ends up with, and the pieces as
    they were fed (the prefix cut again at random, then the resumed chunks)."""
    got = b""
    async with client.stream("POST", url, json=body_for(fmt)) as resp:
        assert resp.status_code == 200, await resp.aread()
        answer_id = resp.headers["x-pysse-answer-id"]
        async for chunk in resp.aiter_raw():
            got += chunk
            if len(got) >= k:
                break
    prefix = got[:k]
    pieces = []
    i = 0
    while i < len(prefix):
        n = rnd.randint(1, 64)
        pieces.append(prefix[i : i + n])
        i += n
    async with client.stream("GET", url, params={"answer": answer_id, "from": k}) as resp:
        assert resp.status_code == 200, await resp.aread()
        assert resp.headers["x-pysse-resumed-from"] == str(k)
        async for chunk in resp.aiter_raw():
            pieces.append(chunk)
    return b"".join(pieces), pieces


async def run_cuts(url: str, fmt: str, offsets: list[int], seed: int) -> list[Any]:
    rnd = random.Random(seed)
    sem = asyncio.Semaphore(16)
    limits = httpx.Limits(max_connections=40)
    async with httpx.AsyncClient(timeout=30, limits=limits) as client:

        async def one(k: int) -> tuple[int, bytes, list[bytes]]:
            async with sem:
                data, pieces = await cut_and_resume(
                    client, url, fmt, k, random.Random(rnd.random())
                )
                return k, data, pieces

        return await asyncio.gather(*(one(k) for k in offsets))


@pytest.mark.parametrize("fmt", FORMATS)
def test_resume_at_random_offsets_is_byte_exact(sse_server: ScriptServer, fmt: str) -> None:
    # Paced, so many cuts land while the upstream is still generating: the resume replays
    # the record, then continues live.
    script = Script.answer(LONG_TEXT, fmt).chunked("random", sizes=(1, 60), seed=7)  # type: ignore[arg-type]
    script = script.paced(0.001)
    whole = script.sent
    expected = summary(parse([whole], fmt))
    assert expected[1] == "completed" and expected[2] is not None and expected[3]
    sse_server.play(script)
    rnd = random.Random(fmt)
    offsets = sorted(rnd.randrange(1, len(whole)) for _ in range(200))
    relay, _ = make_relay(sse_server, fmt)
    with relay:
        results = asyncio.run(run_cuts(relay.url + "/relay", fmt, offsets, seed=1))
    for k, data, pieces in results:
        assert data == whole, f"cut at byte {k}: the resumed bytes differ"
        assert summary(parse(pieces, fmt)) == expected, f"cut at byte {k}"
    # One upstream request per answer: a resume never asks the provider again.
    assert len(sse_server.requests) == len(offsets)


async def one_byte_at_a_time(url: str, fmt: str) -> tuple[list[bytes], int]:
    """Every connection cut after one byte: the POST after its first byte, then each resume
    after the next one, to the end (each cut at the next offset, so every offset is a cut).
    Returns the pieces received and the number of requests made."""
    pieces: list[bytes] = []
    requests = 1
    async with httpx.AsyncClient(timeout=30) as client:
        async with client.stream("POST", url, json=body_for(fmt)) as resp:
            answer_id = resp.headers["x-pysse-answer-id"]
            async for chunk in resp.aiter_raw():
                pieces.append(chunk[:1])
                break
        while True:
            params = {"answer": answer_id, "from": len(pieces)}
            requests += 1
            async with client.stream("GET", url, params=params) as resp:
                assert resp.status_code == 200
                got = b""
                async for chunk in resp.aiter_raw():
                    got = chunk[:1]
                    break
            if not got:
                return pieces, requests
            pieces.append(got)


@pytest.mark.parametrize("fmt", FORMATS)
def test_resume_at_every_offset_of_a_short_answer(sse_server: ScriptServer, fmt: str) -> None:
    script = Script.answer(SHORT_TEXT, fmt).chunked(5)  # type: ignore[arg-type]
    whole = script.sent
    expected = summary(parse([whole], fmt))
    sse_server.play(script)
    relay, _ = make_relay(sse_server, fmt)
    with relay:
        pieces, requests = asyncio.run(one_byte_at_a_time(relay.url + "/relay", fmt))
    assert b"".join(pieces) == whole
    assert requests == len(whole) + 1  # a cut at every offset, and the final empty resume
    assert summary(parse(pieces, fmt)) == expected
    assert len(sse_server.requests) == 1  # and the provider was asked once
    if fmt == "gemini":  # its CRLF framing: some cuts fell between a CR and its LF
        assert b"\r\n" in whole


# -- a disconnect is not Stop; Stop is --------------------------------------------------------

ENDLESS = Script.answer("one two three four five six").paced(0.02).stall(after_event=3)


@pytest.fixture
def chat_relay(sse_server: ScriptServer) -> Iterator[tuple[ScriptServer, LiveServer, Answers]]:
    relay, answers = make_relay(sse_server, "openai-chat", unwatched_timeout=60)
    with relay:
        yield sse_server, relay, answers


def start_and_drop(client: httpx.Client, url: str, n: int = 2) -> tuple[str, bytes]:
    with client.stream("POST", url, json=body_for("openai-chat")) as resp:
        answer_id = resp.headers["x-pysse-answer-id"]
        it = resp.iter_raw()
        got = b"".join(next(it) for _ in range(n))
    return answer_id, got


def test_a_disconnect_keeps_the_upstream_and_stop_cancels_it(chat_relay: Any) -> None:
    up, relay, _ = chat_relay
    up.play(ENDLESS)
    url = relay.url + "/relay"
    with httpx.Client(timeout=10) as c:
        answer_id, _ = start_and_drop(c, url)
        # The page went away without Stop: the provider keeps generating into the record.
        assert not up.last_request.wait_disconnected(1.0)
        resp = c.delete(url, params={"answer": answer_id}, headers={"origin": PAGE})
        assert resp.status_code == 200 and resp.json()["result"] == "stopped"
        assert resp.headers["access-control-allow-origin"] == PAGE
        # (The upstream generates for ever: only Stop ends it. Was also "within 3 s".)
        assert up.last_request.wait_disconnected(30), "Stop did not cancel the upstream"
        # The record ends with the relay's note; a resume gets it, then the end.
        rest = c.get(url, params={"answer": answer_id, "from": 0})
        assert rest.status_code == 200
        assert rest.content.endswith(b": pysse relay: stream ended, stopped by the user\n\n")
        cs = parse([rest.content], "openai-chat")
        assert cs.outcome == "truncated" and cs.text.startswith("one ")
        # Stop again: nothing left to stop, and it says so.
        assert c.delete(url, params={"answer": answer_id}).json()["result"] == "ended"


def test_stop_after_a_resume_cancels_the_upstream(chat_relay: Any) -> None:
    up, relay, _ = chat_relay
    up.play(ENDLESS)
    url = relay.url + "/relay"
    with httpx.Client(timeout=10) as c:
        answer_id, got = start_and_drop(c, url)
        with c.stream("GET", url, params={"answer": answer_id, "from": len(got)}) as resp:
            assert resp.status_code == 200
            it = resp.iter_raw()
            next(it)
            assert c.delete(url, params={"answer": answer_id}).json()["result"] == "stopped"
            assert up.last_request.wait_disconnected(5)
            rest = b"".join(it)  # the resumed reader ends too
        assert rest.endswith(b"stopped by the user\n\n")


def test_an_unwatched_answer_is_cancelled_after_the_cap(sse_server: ScriptServer) -> None:
    sse_server.play(ENDLESS)
    relay, _ = make_relay(sse_server, "openai-chat", unwatched_timeout=0.5)
    with relay, httpx.Client(timeout=10) as c:
        answer_id, _ = start_and_drop(c, relay.url + "/relay")
        assert sse_server.last_request.wait_disconnected(10), "nobody watched, yet it ran on"
        rest = c.get(relay.url + "/relay", params={"answer": answer_id, "from": 0}).content
        assert rest.endswith(b"stream ended, nobody watched it for 0.5 s\n\n")


def test_a_watched_answer_is_not_cancelled_by_the_cap(sse_server: ScriptServer) -> None:
    sse_server.play(Script.answer("slow and steady " * 10).paced(0.1))
    relay, _ = make_relay(sse_server, "openai-chat", unwatched_timeout=0.3)
    with relay, httpx.Client(timeout=10) as c:
        resp = c.post(relay.url + "/relay", json=body_for("openai-chat"))
        assert parse([resp.content], "openai-chat").outcome == "completed"


def test_resume_errors_are_clear(chat_relay: Any) -> None:
    up, relay, _ = chat_relay
    up.play(Script.answer("short"))
    url = relay.url + "/relay"
    with httpx.Client(timeout=10) as c:
        gone = c.get(url, params={"answer": "x" * 24, "from": 0}, headers={"origin": PAGE})
        assert gone.status_code == 410
        assert gone.json()["error"]["type"] == "answer_expired"
        assert "expired on the relay" in gone.json()["error"]["message"]
        assert gone.headers["access-control-allow-origin"] == PAGE
        assert c.get(url, params={"answer": "../etc", "from": 0}).status_code == 400
        assert c.get(url, params={"answer": "x" * 24, "from": "-1"}).status_code == 400
        resp = c.post(url, json=body_for("openai-chat"))
        answer_id = resp.headers["x-pysse-answer-id"]
        too_far = c.get(url, params={"answer": answer_id, "from": len(resp.content) + 1})
        assert too_far.status_code == 416 and "cannot start at byte" in too_far.text
        assert c.put(url, params={"answer": answer_id}).status_code == 405


def test_cors_exposes_the_answer_id_and_allows_delete(chat_relay: Any) -> None:
    _, relay, _ = chat_relay
    with httpx.Client(timeout=10) as c:
        resp = c.post(relay.url + "/relay", json=body_for("openai-chat"), headers={"origin": PAGE})
        assert "x-pysse-answer-id" in resp.headers["access-control-expose-headers"]
        pre = c.options(
            relay.url + "/relay",
            headers={"origin": PAGE, "access-control-request-method": "DELETE"},
        )
        assert "DELETE" in pre.headers["access-control-allow-methods"]


def test_an_expired_answer_says_so(sse_server: ScriptServer) -> None:
    # The store's clock is the test's: a resume "within 0.3 s" and "0.6 s later" are moves
    # of it, not races with a busy machine (the first resume came too late once it was slow).
    now = [0.0]
    sse_server.play(Script.answer("short"))
    relay, _ = make_relay(sse_server, "openai-chat", clock=lambda: now[0], answer_ttl=0.3)
    with relay, httpx.Client(timeout=30) as c:
        resp = c.post(relay.url + "/relay", json=body_for("openai-chat"))
        answer_id = resp.headers["x-pysse-answer-id"]
        again = c.get(relay.url + "/relay", params={"answer": answer_id, "from": 3})
        assert again.status_code == 200 and again.content == resp.content[3:]  # so it ended
        now[0] += 0.29
        assert c.get(relay.url + "/relay", params={"answer": answer_id}).status_code == 200
        now[0] += 0.02
        late = c.get(relay.url + "/relay", params={"answer": answer_id, "from": 3})
        assert late.status_code == 410
        assert "expired on the relay (it keeps answers 0.3 s" in late.json()["error"]["message"]


def test_resume_needs_the_secret_and_can_be_turned_off(
    sse_server: ScriptServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    sse_server.play(Script.answer("short"))
    relay, _ = make_relay(sse_server, "openai-chat", shared_secret="s3cret-value")
    with relay, httpx.Client(timeout=10) as c:
        resp = c.post(
            relay.url + "/relay",
            json=body_for("openai-chat"),
            headers={"x-relay-secret": "s3cret-value"},
        )
        answer_id = resp.headers["x-pysse-answer-id"]
        params = {"answer": answer_id, "from": 0}
        assert c.get(relay.url + "/relay", params=params).status_code == 401
        assert c.delete(relay.url + "/relay", params=params).status_code == 401
        ok = c.get(relay.url + "/relay", params=params, headers={"x-relay-secret": "s3cret-value"})
        assert ok.content == resp.content
    off = RelayConfig(upstream=sse_server.url + "/v1", resume=False)
    with LiveServer(create_relay_app(off)) as r, httpx.Client(timeout=10) as c:
        resp = c.post(r.url + "/relay", json=body_for("openai-chat"))
        assert "x-pysse-answer-id" not in resp.headers
        assert c.get(r.url + "/relay", params={"answer": "x" * 24}).status_code == 404


def test_many_unwatched_answers_stay_within_the_size_cap(sse_server: ScriptServer) -> None:
    # 24 answers of ~40 KB each, all dropped by their clients at once, into a 256 KiB store.
    big = Script.answer("word " * 6000).chunked(4096).paced(0.005)
    sse_server.play(big)
    cap = 256 * 1024
    cfg = RelayConfig(upstream=sse_server.url + "/v1", unwatched_timeout=60)
    store = MemoryStore(ttl=600, max_bytes=cap)
    answers = Answers(store, unwatched=60)
    peak = 0
    with LiveServer(create_relay_app(cfg, answers=answers)) as relay, httpx.Client(timeout=30) as c:
        ids = [start_and_drop(c, relay.url + "/relay", 1)[0] for _ in range(24)]
        deadline = time.monotonic() + 30
        while answers.running and time.monotonic() < deadline:
            peak = max(peak, store.book.total)
            time.sleep(0.01)
        assert answers.running == 0, "evicted answers kept their upstream running"
        peak = max(peak, store.book.total)
        assert peak <= cap
        assert store.book.evictions > 0
        # Every upstream request ended: completed, or cancelled when its record was evicted.
        assert all(r.wait_ended(5) for r in sse_server.requests)
        assert any(r.disconnected for r in sse_server.requests)
        kept = [i for i in ids if store.has(i)]
        gone = c.get(relay.url + "/relay", params={"answer": ids[0], "from": 0})
        assert ids[0] not in kept and gone.status_code == 410


def test_stop_before_the_first_byte_cancels_the_upstream(chat_relay: Any) -> None:
    # The page pressed Stop while the provider had not answered yet: it never learnt the
    # answer's id, so the relay must not keep the answer running for nobody.
    up, relay, answers = chat_relay
    # The provider's headers are held until the client has given up (they came after 1 s,
    # which a client starved for 0.7 s saw arrive before its own 0.3 s timeout). The relay
    # notices a client gone only once the upstream's headers are in: then it cancels.
    up.play(Script.answer("late but long " * 20).headers_after(math.inf).paced(0.05))
    with httpx.Client(timeout=0.3) as c, pytest.raises(httpx.ReadTimeout):
        c.post(relay.url + "/relay", json=body_for("openai-chat"))
    (request,) = up.wait_for_requests(1)
    request.release()
    assert request.wait_disconnected(30)
    assert answers.running == 0


@pytest.mark.parametrize("offset", ["²", "①", "٣", "۳", "𝟙", "1²", " 1", "+1", "0x1"])
def test_an_offset_of_anything_but_ascii_digits_is_a_400(chat_relay: Any, offset: str) -> None:
    # str.isdigit() says yes to '²' and '①' (int() then raised: a 500 with a traceback) and
    # int() takes Arabic-Indic digits as an offset: only 0-9 are a byte count.
    _, relay, _ = chat_relay
    with httpx.Client(timeout=10) as c:
        resp = c.get(relay.url + "/relay", params={"answer": "x" * 24, "from": offset})
    assert resp.status_code == 400, resp.text
    err = resp.json()["error"]
    assert err["type"] == "bad_offset" and "ASCII digits" in err["message"]


def test_a_full_store_never_cuts_the_answer_being_read(sse_server: ScriptServer) -> None:
    # Issue #22: 200 streams of 20 KB events filled the store, and 23 were cut mid-answer
    # with no note, their upstreams cancelled. Now the answer being read streams on whole
    # (a note says it is no longer kept), and only a later resume is refused, saying why.
    text = "twenty kilobytes of answer, " * 700
    sse_server.play(Script.answer(text).chunked(2048).paced(0.002))
    cfg = RelayConfig(upstream=sse_server.url + "/v1", unwatched_timeout=60)
    store = MemoryStore(ttl=600, max_bytes=16 * 1024)
    with LiveServer(create_relay_app(cfg, answers=Answers(store, 60))) as relay:
        with httpx.Client(timeout=30) as c:
            resp = c.post(relay.url + "/relay", json=body_for("openai-chat"))
            assert resp.status_code == 200
            cs = parse([resp.content], "openai-chat")
            assert cs.outcome == "completed" and cs.text == text  # every byte, in order
            assert b": pysse relay: this answer is no longer kept for resuming" in resp.content
            assert not sse_server.last_request.disconnected  # its upstream ran to the end
            again = c.get(
                relay.url + "/relay",
                params={"answer": resp.headers["x-pysse-answer-id"], "from": 100},
            )
        assert again.status_code == 410
        assert "not kept: the relay's store was full" in again.json()["error"]["message"]
        assert store.book.not_kept == 1 and store.book.total == 0
