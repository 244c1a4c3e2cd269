"""pysse.testing.asgi: the same player on an ASGI server (uvicorn), and the demo relay, whose
scenarios are Scripts played through it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from fixtures_util import FIXTURES
from pysse import iter_chat
from pysse.providers import PROVIDERS, error_message
from pysse.server import demo
from pysse.server.app import create_app
from pysse.testing import LiveServer, Script, ScriptResponse
from raw_http import parse, read_to_eof, send_raw

SAVED = Script.from_file(FIXTURES / "openai_chat_text.sse")


class Recorder:
    """An ASGI app that plays whatever ``script`` is and says when it stopped playing."""

    def __init__(self) -> None:
        self.script = SAVED
        self.done = threading.Event()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.done.clear()
        try:
            await ScriptResponse(self.script)(scope, receive, send)
        finally:
            self.done.set()


@pytest.fixture(scope="module")
def app() -> Iterator[tuple[Recorder, LiveServer]]:
    rec = Recorder()
    with LiveServer(rec) as live:
        yield rec, live


@pytest.mark.parametrize("chunks", ["event", 1, 7])
def test_each_write_is_one_http_chunk_under_uvicorn(app: Any, chunks: Any) -> None:
    rec, live = app
    rec.script = SAVED.chunked(chunks)
    raw = read_to_eof(send_raw(live.url, extra="Connection: close\r\n"))
    status, headers, got, ended = parse(raw)
    assert status == "HTTP/1.1 200 OK" and ended
    assert headers["content-type"] == "text/event-stream; charset=utf-8"
    assert got == [w.data for w in rec.script.writes]


def test_a_body_in_one_piece_has_a_content_length(app: Any) -> None:
    rec, live = app
    rec.script = Script.http_error(503, "busy", format="gemini")
    resp = httpx.post(live.url)
    assert resp.status_code == 503 and resp.headers["content-length"] == str(len(resp.content))
    assert error_message(resp.text) == "busy"


def test_a_disconnect_stops_the_script(app: Any) -> None:
    rec, live = app
    rec.script = SAVED.stall(after_event=2)  # silent for ever after two events
    with httpx.Client() as client, client.stream("POST", live.url) as resp:
        chunks = resp.iter_raw()
        next(chunks)
        assert not rec.done.is_set()
    assert rec.done.wait(10), "the player kept going after the client left"


# -- the demo relay plays its scenarios through the kit --------------------------------------------


@pytest.mark.parametrize("fmt", list(PROVIDERS))
def test_demo_errors_are_provider_shaped(fmt: str) -> None:
    limited = demo.plan(fmt, "/demo 429")
    assert isinstance(limited, Script) and limited.status == 429
    assert dict(limited.headers)["retry-after"] == "7"
    assert error_message(limited.body.decode()) == "Rate limit reached (demo)."
    assert error_message(demo.plan(fmt, "/demo 401").body.decode()) == "Invalid API key (demo)."


def test_demo_scenarios_as_scripts() -> None:
    assert {len(w.data) for w in demo.plan("openai-chat", "/demo bytes").writes} == {1}
    assert len(demo.plan("anthropic", "/demo burst").writes) == 1
    stall = demo.plan("gemini", "/demo stall")
    assert stall.writes[-1] == (300, b"") and stall.chat().outcome == "truncated"
    assert (
        demo.plan("openai-chat", "hi", seed=4).writes
        == demo.plan("openai-chat", "hi", seed=4).writes
    )
    html = dict(demo.plan("openai-chat", "/demo html").response_headers())
    assert html["content-type"] == "text/html; charset=utf-8" and "content-length" in html


@pytest.fixture(scope="module")
def demo_relay() -> Iterator[LiveServer]:
    with LiveServer(create_app(None)) as live:
        yield live


@pytest.mark.parametrize("fmt", list(PROVIDERS))
def test_the_demo_relay_streams_each_format(demo_relay: LiveServer, fmt: str) -> None:
    path = PROVIDERS[fmt].demo_path
    with (
        httpx.Client() as client,
        client.stream("POST", demo_relay.url + path, headers={"x-demo-pace": "0"}) as resp,
    ):
        events = list(iter_chat(resp.iter_bytes(), fmt))  # type: ignore[arg-type]
    assert events[-1].outcome == "completed"  # type: ignore[union-attr]
    assert "".join(getattr(e, "text", "") for e in events[:-1]) == demo.RICH_ANSWER


class Stoppable:
    """An app whose responses all share one stop signal, as the demo's share the server's."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.signal: Any = None
        self.loop: Any = None

    def stop_future(self) -> Any:
        import asyncio

        if self.signal is None:
            self.loop = asyncio.get_running_loop()
            self.signal = self.loop.create_future()
        return self.signal

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await ScriptResponse(self.script, stop=self.stop_future)(scope, receive, send)


def test_a_shared_stop_signal_ends_streams_and_survives_each_response() -> None:
    app = Stoppable(SAVED.chunked("event"))
    with LiveServer(app) as live:
        for _ in range(2):  # one response ending must not spend the shared signal
            assert httpx.post(live.url).content == SAVED.sent
        app.script = SAVED.chunked("event").stall(60)
        with httpx.stream("POST", live.url, timeout=10) as resp:
            it = resp.iter_raw()
            first = next(it)
            app.loop.call_soon_threadsafe(app.signal.set_result, None)  # the server stops
            rest = b"".join(it)  # ends at once, properly (no broken body)
        assert (first + rest) == SAVED.sent[: len(first + rest)]
