"""The demo relay keeps its answers like the real one: ``/demo cut`` cuts the connection a
third of the way in while the answer goes on, and a resume from the bytes received gives the
rest exactly; Stop (DELETE) ends it; error scenarios are not kept."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from pysse import ChatStream
from pysse.server.app import create_app
from pysse.server.demo import RICH_ANSWER, cut_after, plan
from support import LiveServer

URL = "/v1/chat/completions"


def body(text: str) -> dict[str, object]:
    return {"model": "demo", "stream": True, "messages": [{"role": "user", "content": text}]}


@pytest.fixture(scope="module")
def demo() -> Iterator[LiveServer]:
    with LiveServer(create_app(None, demo_pace=0.05)) as live:
        yield live


def test_demo_cut_drops_the_connection_and_the_answer_resumes(demo: LiveServer) -> None:
    got = b""
    with httpx.Client(timeout=30) as c:
        with c.stream("POST", demo.url + URL, json=body("/demo cut")) as resp:
            answer_id = resp.headers["x-pysse-answer-id"]
            with pytest.raises(httpx.RemoteProtocolError):  # cut: no terminating chunk
                for chunk in resp.iter_raw():
                    got += chunk
        expected = cut_after(plan("openai-chat", "/demo cut", pace=0.05), "/demo cut")
        assert expected is not None and len(got) == expected
        rest = c.get(demo.url + URL, params={"answer": answer_id, "from": len(got)})
        assert rest.status_code == 200
    cs = ChatStream("openai-chat")
    cs.feed(got + rest.content)
    assert cs.outcome == "completed" and cs.text == RICH_ANSWER


def test_demo_stop_and_unkept_errors(demo: LiveServer) -> None:
    with httpx.Client(timeout=30) as c:
        with c.stream("POST", demo.url + URL, json=body("/demo slow")) as resp:
            answer_id = resp.headers["x-pysse-answer-id"]
            next(resp.iter_raw())
        stop = c.delete(demo.url + URL, params={"answer": answer_id})
        assert stop.json()["result"] == "stopped"
        rest = c.get(demo.url + URL, params={"answer": answer_id, "from": 0}).content
        assert rest.endswith(b"stopped by the user\n\n")
        err = c.post(demo.url + URL, json=body("/demo 429"))
        assert err.status_code == 429 and "x-pysse-answer-id" not in err.headers
    assert cut_after(plan("openai-chat", "hello"), "hello") is None


@pytest.mark.parametrize("fmt", ["openai-chat", "openai-responses", "anthropic", "gemini"])
def test_demo_bytes_stays_small_and_short_whatever_the_format(fmt: str) -> None:
    """Counted from the script: the complete Chat and Responses events are larger, and with
    small deltas /demo bytes became 41 KB of 1-byte writes over 83 s (the page, which parses
    every one, then took over a minute)."""
    from pysse.server import demo

    script = demo.plan(fmt, "/demo bytes", pace=1.0)
    assert all(len(w.data) == 1 for w in script.writes[:-1])
    assert 1000 < len(script.body) <= 25_000 and script.duration <= 41.0
