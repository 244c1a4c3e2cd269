"""pysse.testing.server: the scripted server on the wire. Every chunking arrives byte-identical,
one HTTP chunk per write (read with a raw socket); each fault behaves as documented; requests
and disconnects are recorded. Timing is only ever asserted as a lower bound the server's own
sleeps guarantee (bytes cannot arrive before they are sent), never as a race: where a wait
is, is asserted by holding the answer there (a stall for ever) and releasing it."""

from __future__ import annotations

import asyncio
import math
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from fixtures_util import FIXTURES
from pysse import Finish, Outcome, TextDelta, aiter_chat, iter_chat
from pysse.providers import error_message
from pysse.testing import KitError, Script, ScriptServer
from raw_http import exchange, parse, read_to_eof, send_raw

SAVED = Script.from_file(FIXTURES / "openai_chat_text.sse")
BODY = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture(scope="module")
def srv() -> Iterator[ScriptServer]:
    """One server for the module (tests run one at a time; each plays its own script)."""
    with ScriptServer() as server:
        yield server


# -- bytes on the wire ---------------------------------------------------------------------------


@pytest.mark.parametrize("chunks", ["whole", "event", "random", 1, 7])
def test_every_chunking_of_a_recorded_file_arrives_byte_identical(
    srv: ScriptServer, chunks: Any
) -> None:
    for path in sorted(FIXTURES.glob("*.sse")):
        script = Script.from_file(path).chunked(chunks, seed=5)
        srv.play(script)
        status, headers, got, ended = exchange(srv.url)
        assert status == "HTTP/1.1 200 OK" and ended, path.name
        assert headers["content-type"] == "text/event-stream; charset=utf-8"
        assert b"".join(got) == path.read_bytes(), path.name
        if chunks != "whole":  # one HTTP chunk per write, exactly as scripted
            assert got == [w.data for w in script.writes], path.name


def test_drop_after_byte_n_is_a_broken_body(srv: ScriptServer) -> None:
    srv.play(SAVED.chunked(1).drop(after_byte=300))
    _, _, got, ended = exchange(srv.url)
    assert got == [bytes([b]) for b in SAVED.body[:300]]
    assert not ended  # closed without the terminating zero-length chunk
    assert not srv.last_request.disconnected  # the server hung up, not the client


def test_drop_mid_answer_ends_iter_chat_truncated(srv: ScriptServer) -> None:
    script = SAVED.chunked("random", seed=2).drop(after_event=3)
    srv.play(script)
    with httpx.Client() as client, client.stream("POST", srv.url, json=BODY) as resp:
        events = list(iter_chat(resp.iter_bytes()))
    fin = events[-1]
    assert isinstance(fin, Finish) and fin.outcome == Outcome.TRUNCATED
    assert "incomplete chunked read" in fin.detail  # httpx saw a broken body, not an end
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == script.chat().text


def read_until(sock: socket.socket, done: Any) -> bytes:
    raw = b""
    while not done(raw):
        got = sock.recv(65536)
        assert got, ("closed early", raw)
        raw += got
    return raw


def nothing_waiting(sock: socket.socket) -> bool:
    """No byte has arrived that was not read yet (asked without waiting)."""
    sock.setblocking(False)
    try:
        sock.recv(1, socket.MSG_PEEK)
    except BlockingIOError:
        return True
    finally:
        sock.setblocking(True)
    return False


def two_events(raw: bytes) -> bool:
    return raw.count(b"data:") >= 2 and raw.endswith(b"\r\n")


def test_a_stall_sends_nothing_for_that_long(srv: ScriptServer) -> None:
    srv.play(SAVED.stall(1.0, after_event=2))
    before = SAVED.body[: len(SAVED.stall(1.0, after_event=2).writes[0].data)]
    sent = time.perf_counter()
    sock = send_raw(srv.url)
    raw = read_until(sock, two_events)
    rest = read_to_eof(sock)
    _, _, chunks, ended = parse(raw + rest)
    assert ended and b"".join(chunks) == SAVED.body
    assert b"".join(chunks).startswith(before)
    assert time.perf_counter() - sent >= 1.0  # the server waited the full second


def test_a_stall_for_ever_holds_the_answer_until_released(srv: ScriptServer) -> None:
    # Where the stall is, without racing its end: held until the test lets it go on.
    srv.play(SAVED.stall(after_event=2))
    sock = send_raw(srv.url)
    raw = read_until(sock, two_events)
    assert nothing_waiting(sock)  # the first two events, then nothing: held
    assert not srv.last_request.ended
    srv.last_request.release()
    _, _, chunks, ended = parse(raw + read_to_eof(sock))
    assert ended and b"".join(chunks) == SAVED.body
    assert srv.last_request.wait_ended(30) and not srv.last_request.disconnected


def test_slow_headers_send_not_even_the_status_line(srv: ScriptServer) -> None:
    srv.play(SAVED.headers_after(0.5))
    sent = time.perf_counter()
    sock = send_raw(srv.url)
    first = sock.recv(1)
    assert time.perf_counter() - sent >= 0.5 and first == b"H"
    _, _, chunks, ended = parse(first + read_to_eof(sock))
    assert ended and b"".join(chunks) == SAVED.body
    srv.play(SAVED.headers_after(math.inf))
    n = len(srv.requests)
    sock = send_raw(srv.url)
    request = srv.wait_for_requests(n + 1)[n]
    assert nothing_waiting(sock)  # the request is in, and not a byte came back
    request.release()
    status, _, chunks, ended = parse(read_to_eof(sock))
    assert status == "HTTP/1.1 200 OK" and ended and b"".join(chunks) == SAVED.body


def test_first_byte_after_sends_the_headers_at_once(srv: ScriptServer) -> None:
    srv.play(SAVED.first_byte_after(0.5))
    sent = time.perf_counter()
    sock = send_raw(srv.url)
    rest = read_to_eof(sock)
    assert time.perf_counter() - sent >= 0.5
    assert b"".join(parse(rest)[2]) == SAVED.body
    srv.play(SAVED.first_byte_after(math.inf))
    sock = send_raw(srv.url)
    head = read_until(sock, lambda raw: b"\r\n\r\n" in raw)
    assert head.endswith(b"\r\n\r\n") and nothing_waiting(sock)  # headers, then held
    srv.last_request.release()
    assert b"".join(parse(head + read_to_eof(sock))[2]) == SAVED.body


@pytest.mark.parametrize("fmt", ["openai-chat", "anthropic", "gemini"])
def test_http_error_with_a_provider_shaped_body(srv: ScriptServer, fmt: Any) -> None:
    srv.play(Script.http_error(429, "Rate limit reached", format=fmt, retry_after=7))
    resp = httpx.post(srv.url + "/v1/messages", json=BODY)
    assert resp.status_code == 429 and resp.headers["retry-after"] == "7"
    assert resp.headers["content-type"] == "application/json"
    assert error_message(resp.text) == "Rate limit reached"


def test_wrong_content_type(srv: ScriptServer) -> None:
    srv.play(Script.from_bytes(b"<!doctype html><h1>nginx</h1>").content_type("text/html"))
    resp = httpx.post(srv.url, json=BODY)
    assert resp.status_code == 200 and resp.headers["content-type"] == "text/html"
    assert resp.content == b"<!doctype html><h1>nginx</h1>"


def test_keepalives_only(srv: ScriptServer) -> None:
    srv.play(Script.keepalives(20))
    _, _, chunks, ended = exchange(srv.url)
    assert ended and chunks == [b": keep-alive\n\n"] * 20
    with httpx.Client() as client, client.stream("POST", srv.url, json=BODY) as resp:
        events = list(iter_chat(resp.iter_bytes()))
    assert events == [Finish(Outcome.TRUNCATED, None, events[0].detail)]  # type: ignore[union-attr]


def test_error_event_and_malformed_json_mid_stream(srv: ScriptServer) -> None:
    srv.play(Script.answer("one two three four", "anthropic", error_after=2, error_message="boom"))
    with httpx.Client() as client, client.stream("POST", srv.url, json=BODY) as resp:
        events = list(iter_chat(resp.iter_bytes()))
    assert events[-1].outcome == Outcome.ERROR  # type: ignore[union-attr]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "one two "
    srv.play(Script.answer("one two three four", malformed_after=1))
    with httpx.Client() as client, client.stream("POST", srv.url, json=BODY) as resp:
        events = list(iter_chat(resp.iter_bytes()))
    assert events[-1].outcome == Outcome.ERROR and "not JSON" in events[-1].detail  # type: ignore[union-attr]


# -- what the server records -----------------------------------------------------------------------


def test_requests_are_recorded_with_headers_and_body(sse_server: ScriptServer) -> None:
    sse_server.play(Script.answer("first"), Script.answer("second"))
    with httpx.Client() as client:
        one = client.post(
            sse_server.url + "/v1/chat/completions",
            json=BODY,
            headers={"Authorization": "Bearer k"},
        )
        two = client.get(sse_server.url + "/events?room=7")
        three = client.post(sse_server.url, content=(part for part in [b'{"a":', b" 1}"]))
    assert [r.status_code for r in (one, two, three)] == [200, 200, 200]
    first, second, third = sse_server.wait_for_requests(3)
    assert first.method == "POST" and first.path == "/v1/chat/completions"
    assert first.headers["authorization"] == "Bearer k" and first.json() == BODY
    assert second.method == "GET" and second.target == "/events?room=7" and second.body == b""
    assert third.headers["transfer-encoding"] == "chunked" and third.json() == {"a": 1}
    # the scripts in order, then the last one again
    assert [r.script.chat().text for r in (first, second, third)] == ["first", "second", "second"]
    # (the server marks a request ended just after its last byte: the client may be faster)
    assert all(r.wait_ended(5) and not r.disconnected for r in (first, second, third))


def test_a_client_that_leaves_is_recorded_as_disconnected(sse_server: ScriptServer) -> None:
    sse_server.play(SAVED.stall(after_event=2))  # then silent until the client gives up
    with httpx.Client() as client, client.stream("POST", sse_server.url, json=BODY) as resp:
        chunks = resp.iter_raw()  # kept: a dropped iterator would close the response
        next(chunks)
        assert not sse_server.last_request.ended
    # leaving the block closed the connection mid-answer: that is what Stop must do
    assert sse_server.last_request.wait_disconnected(timeout=10)


def test_a_finished_answer_is_not_a_disconnect(sse_server: ScriptServer) -> None:
    sse_server.play(SAVED)
    httpx.post(sse_server.url, json=BODY)
    assert sse_server.last_request.wait_ended(10)
    assert not sse_server.last_request.wait_disconnected(timeout=10)


def test_leaving_during_slow_headers_is_a_disconnect(sse_server: ScriptServer) -> None:
    sse_server.play(SAVED.headers_after(60))
    send_raw(sse_server.url).close()
    (request,) = sse_server.wait_for_requests(1)
    assert request.wait_disconnected(timeout=10)


def test_waiting_for_a_request_that_never_comes(sse_server: ScriptServer) -> None:
    with pytest.raises(KitError, match="no request reached"):
        _ = sse_server.last_request
    with pytest.raises(KitError, match=r"expected 1 request\(s\) .* got 0"):
        sse_server.wait_for_requests(1, timeout=0.1)


def test_without_a_script_the_answer_says_what_to_do(sse_server: ScriptServer) -> None:
    resp = httpx.post(sse_server.url, json=BODY)
    assert resp.status_code == 500 and "ScriptServer.play" in resp.json()["error"]["message"]
    with pytest.raises(ValueError):
        sse_server.play()


def test_cors_lets_a_page_on_another_origin_in(sse_server: ScriptServer) -> None:
    sse_server.play(Script.http_error(429, retry_after=3))
    origin = {"origin": "http://page.example"}
    pre = httpx.options(
        sse_server.url,
        headers={
            **origin,
            "access-control-request-method": "POST",
            "access-control-request-headers": "content-type, x-relay-secret",
        },
    )
    assert pre.status_code == 204
    assert pre.headers["access-control-allow-origin"] == "http://page.example"
    assert pre.headers["access-control-allow-headers"] == "content-type, x-relay-secret"
    resp = httpx.post(sse_server.url, json=BODY, headers=origin)
    assert resp.headers["access-control-allow-origin"] == "http://page.example"
    assert "retry-after" in resp.headers["access-control-expose-headers"]
    assert len(sse_server.requests) == 1  # the preflight is answered, not recorded


def test_a_bad_request_is_a_400(sse_server: ScriptServer) -> None:
    sock = socket.create_connection(("127.0.0.1", sse_server.port), timeout=10)
    sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")
    assert read_to_eof(sock).startswith(b"HTTP/1.1 400 ")
    assert sse_server.requests == []


def test_stop_cuts_off_answers_still_playing() -> None:
    server = ScriptServer(SAVED.stall()).start()
    sock = send_raw(server.url)
    assert sock.recv(65536).startswith(b"HTTP/1.1 200 OK")
    server.stop()  # does not wait for the endless stall
    assert not parse(read_to_eof(sock))[3]  # the body was never ended
    assert server.last_request.ended and not server.last_request.disconnected  # cut off by us
    with pytest.raises(httpx.ConnectError):
        httpx.post(server.url, json=BODY)


def test_several_servers_from_the_factory(sse_servers: Any) -> None:
    a = sse_servers(Script.answer("from a"))
    b = sse_servers(Script.answer("from b", "gemini"))
    assert a.port != b.port
    for server, text in ((a, "from a"), (b, "from b")):
        with httpx.Client() as client, client.stream("POST", server.url) as resp:
            assert (
                "".join(e.text for e in iter_chat(resp.iter_bytes()) if isinstance(e, TextDelta))
                == text
            )


# -- examples: testing code that streams with httpx ----------------------------------------------


def summarize(url: str) -> tuple[str, str]:
    """Code under test: stream an answer with httpx, return (text, how it ended)."""
    text = []
    with httpx.Client() as client, client.stream("POST", url, json=BODY) as resp:
        for ev in iter_chat(resp.iter_bytes()):
            if isinstance(ev, TextDelta):
                text.append(ev.text)
            elif isinstance(ev, Finish):
                return "".join(text), ev.outcome.value
    raise AssertionError("iter_chat always ends with a Finish")


def test_example_sync_client_sees_a_drop_as_truncated(sse_server: ScriptServer) -> None:
    sse_server.play(Script.answer("Hello, world! How are you?").chunked(1).drop(after_event=3))
    assert summarize(sse_server.url) == ("Hello, world! ", "truncated")
    assert sse_server.last_request.json()["messages"][0]["content"] == "hi"


def test_example_async_client_at_one_byte_per_chunk(sse_server: ScriptServer) -> None:
    sse_server.play(Script.answer("Hello — 東京 🙂", "anthropic").chunked(1))

    async def main() -> tuple[str, str]:
        text = []
        async with httpx.AsyncClient() as client, client.stream("POST", sse_server.url) as resp:
            async for ev in aiter_chat(resp.aiter_bytes()):
                if isinstance(ev, TextDelta):
                    text.append(ev.text)
                elif isinstance(ev, Finish):
                    return "".join(text), ev.outcome.value
        raise AssertionError("aiter_chat always ends with a Finish")

    assert asyncio.run(main()) == ("Hello — 東京 🙂", "completed")


def test_example_async_client_gives_up_on_a_stall(sse_server: ScriptServer) -> None:
    sse_server.play(Script.answer("never finishes").stall(after_event=1))

    async def main() -> str:
        timeout = httpx.Timeout(10, read=0.5)  # gives up after 0.5 s without a byte
        async with (
            httpx.AsyncClient(timeout=timeout) as client,
            client.stream("POST", sse_server.url) as resp,
        ):
            events = [ev async for ev in aiter_chat(resp.aiter_bytes())]
        assert isinstance(events[-1], Finish)
        return events[-1].detail

    assert "ReadTimeout" in asyncio.run(main())
    assert sse_server.last_request.wait_disconnected(timeout=10)
