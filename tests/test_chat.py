"""ChatStream: four provider formats, one event model, and "done" told apart from "died"."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from fixtures_util import load_fixtures
from pysse import (
    ChatStream,
    ChatStreamError,
    Finish,
    Outcome,
    ProviderError,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    aiter_chat,
    iter_chat,
)

FIXTURES = load_fixtures()
IDS = [f[0] for f in FIXTURES]


def run(body: bytes, size: int, fmt: str = "auto") -> tuple[ChatStream, list[Any]]:
    cs = ChatStream(fmt)
    events: list[Any] = []
    for i in range(0, len(body), size):
        events += cs.feed(body[i : i + size])
    events += cs.close()
    return cs, events


def summary(cs: ChatStream, events: list[Any]) -> dict[str, Any]:
    tools: dict[str, list[Any]] = {}
    for e in events:
        if isinstance(e, ToolCallDelta):
            t = tools.setdefault(str(e.index), [None, None, ""])
            t[0] = t[0] or e.id
            t[1] = t[1] or e.name
            t[2] += e.arguments
    return {
        "format": cs.detected_format,
        "text": cs.text,
        "outcome": str(cs.outcome),
        "finish_reason": cs.finish_reason,
        "usage": [cs.usage.input_tokens, cs.usage.output_tokens] if cs.usage else None,
        "error_kind": cs.error.kind if cs.error else None,
        "reasoning": "".join(e.text for e in events if isinstance(e, ReasoningDelta)),
        "tools": tools,
    }


@pytest.mark.parametrize(("name", "body", "expected"), FIXTURES, ids=IDS)
@pytest.mark.parametrize("fmt", ["auto", "explicit"])
def test_fixture_whole(name: str, body: bytes, expected: dict[str, Any], fmt: str) -> None:
    cs, events = run(body, len(body), "auto" if fmt == "auto" else expected["format"])
    assert summary(cs, events) == expected
    finishes = [e for e in events if isinstance(e, Finish)]
    assert len(finishes) == 1 and finishes[0].outcome == cs.outcome
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == cs.text


@pytest.mark.parametrize(("name", "body", "expected"), FIXTURES, ids=IDS)
def test_fixture_every_chunk_size(name: str, body: bytes, expected: dict[str, Any]) -> None:
    sizes = [*list(range(1, 130)), 257, 1000, 1400, 4096, len(body)]
    for size in sizes:
        cs, events = run(body, size)
        assert summary(cs, events) == expected, size


@pytest.mark.parametrize(("name", "body", "expected"), FIXTURES, ids=IDS)
def test_truncated_at_every_byte_is_never_completed(
    name: str, body: bytes, expected: dict[str, Any]
) -> None:
    for cut in range(len(body)):
        cs, events = run(body[:cut], 97)
        assert expected["text"].startswith(cs.text), cut
        if cs.outcome == Outcome.COMPLETED:
            # Only legitimate when the terminal event was already complete in the prefix.
            assert body[cut:].strip() == b"", cut
            assert expected["outcome"] == "completed"
        elif expected["outcome"] == "completed" or cs.outcome != Outcome.ERROR:
            assert cs.outcome == Outcome.TRUNCATED, cut
            assert cs.finish_detail.startswith("truncated:")
        assert isinstance(events[-1], Finish)


def test_empty_body_is_truncated() -> None:
    cs, events = run(b"", 1)
    assert cs.outcome == "truncated"
    assert events == [Finish(Outcome.TRUNCATED, None, "truncated: the response body was empty")]


def test_openai_without_done_is_truncated_even_with_finish_reason() -> None:
    body = b'data: {"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"stop"}]}\n\n'
    cs, _ = run(body, 5)
    assert cs.outcome == "truncated"
    assert cs.finish_reason == "stop"
    assert "[DONE]" in cs.finish_detail
    assert cs.text == "Hi"


def test_html_instead_of_sse_is_not_done() -> None:
    cs, _ = run(b"<!doctype html><html><body>Bad gateway</body></html>", 7)
    assert cs.outcome == "truncated"
    assert cs.detected_format is None


def test_json_error_body_as_a_stream() -> None:
    cs, _events = run(
        b'data: {"error": {"message": "bad key", "type": "invalid_request_error"}}\n\n', 3
    )
    assert cs.outcome == "error"
    assert cs.error == ProviderError(
        "invalid_request_error",
        "bad key",
        raw='{"error": {"message": "bad key", "type": "invalid_request_error"}}',
    )


def test_line_too_long_is_an_error_event_and_keeps_text() -> None:
    body = b'data: {"choices":[{"delta":{"content":"kept"}}]}\n\ndata: ' + b"x" * 5000
    cs = ChatStream(max_line_bytes=1024)
    events = cs.feed(body)
    assert cs.outcome == "error" and cs.error is not None and cs.error.kind == "protocol"
    assert cs.text == "kept"
    assert isinstance(events[-1], Finish)


def test_abort_keeps_text_and_ignores_later_bytes() -> None:
    cs = ChatStream("anthropic")
    body = FIXTURES[IDS.index("anthropic_text")][1]
    cs.feed(body[: len(body) // 2])
    text = cs.text
    assert cs.abort() == [Finish(Outcome.ABORTED, None, "stopped by the user")]
    assert cs.outcome == "aborted" and cs.text == text
    assert cs.close() == []
    assert cs.abort() == []


def test_fail_from_outside_keeps_text() -> None:
    cs = ChatStream()
    cs.feed(b'data: {"choices":[{"delta":{"content":"so far"}}]}\n\n')
    events = cs.fail("timeout", "no bytes for 30 s")
    assert cs.outcome == "error" and cs.text == "so far"
    assert isinstance(events[0], ProviderError) and events[0].kind == "timeout"


def test_unknown_format_is_a_typed_error() -> None:
    with pytest.raises(ChatStreamError):
        ChatStream("cohere")


def test_bytes_after_completion_change_nothing() -> None:
    body = FIXTURES[IDS.index("openai_chat_text")][1]
    cs = ChatStream()
    cs.feed(body)
    assert cs.outcome == "completed"
    assert cs.feed(b'data: {"choices":[{"delta":{"content":"late"}}]}\n\n') == []
    assert "late" not in cs.text


def test_observer_sees_each_sse_event() -> None:
    seen: list[tuple[str, int]] = []
    cs = ChatStream(observer=lambda ev, chat: seen.append((ev.event, len(chat))))
    cs.feed(FIXTURES[IDS.index("anthropic_text")][1])
    assert seen[0] == ("message_start", 1)
    assert ("ping", 0) in seen
    assert seen[-1] == ("message_stop", 1)


def test_iter_chat_and_aiter_chat() -> None:
    body = FIXTURES[IDS.index("gemini_text")][1]
    chunks = [body[i : i + 10] for i in range(0, len(body), 10)]
    events = list(iter_chat(chunks))
    assert (
        "".join(e.text for e in events if isinstance(e, TextDelta))
        == "Lisbon is the capital — 里斯本."
    )
    assert events[-1] == Finish(Outcome.COMPLETED, "STOP")

    async def agen() -> AsyncIterator[bytes]:
        for c in chunks[:-3]:
            yield c

    async def collect() -> list[Any]:
        return [e async for e in aiter_chat(agen())]

    # In a thread of its own: the session's Playwright keeps an event loop in the main one.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        cut = pool.submit(asyncio.run, collect()).result()
    assert isinstance(cut[-1], Finish) and cut[-1].outcome == "truncated"


class ReadError(Exception):
    """Stands in for a transport's exception (httpx.ReadError)."""


def test_a_transport_exception_ends_the_answer_truncated_with_its_text() -> None:
    body = FIXTURES[IDS.index("anthropic_text")][1]

    def chunks() -> Any:
        yield body[:200]
        raise ReadError("peer closed connection")

    events = list(iter_chat(chunks()))
    fin = events[-1]
    assert isinstance(fin, Finish) and fin.outcome == Outcome.TRUNCATED
    assert fin.detail == "truncated: the connection broke (ReadError: peer closed connection)"
    assert sum(isinstance(e, Finish) for e in events) == 1
    ref = ChatStream()
    ref.feed(body[:200])
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == ref.text

    async def agen() -> AsyncIterator[bytes]:
        yield body[:200]
        raise ReadError("reset")

    async def collect() -> list[Any]:
        return [e async for e in aiter_chat(agen())]

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        got = pool.submit(asyncio.run, collect()).result()
    assert got[-1] == Finish(
        Outcome.TRUNCATED, None, "truncated: the connection broke (ReadError: reset)"
    )


@pytest.mark.parametrize("end", ["abort", "fail", "close", "completed"])
def test_one_rule_for_bytes_after_the_end(end: str) -> None:
    cs = ChatStream("openai-chat")
    cs.feed(b'data: {"choices":[{"delta":{"content":"a"}}]}\n\n')
    if end == "abort":
        cs.abort()
    elif end == "fail":
        cs.fail("timeout", "late")
    elif end == "close":
        cs.close()
    else:
        cs.feed(b"data: [DONE]\n\n")
    assert cs.closed and cs.outcome is not None
    assert cs.feed(b'data: {"choices":[{"delta":{"content":"b"}}]}\n\n') == []
    assert cs.close() == [] and cs.abort() == [] and cs.fail("x", "y") == []
    assert cs.text == "a"


def test_state_is_read_only() -> None:
    cs = ChatStream()
    for name in ("outcome", "usage", "error", "finish_reason", "finish_detail", "sse_events"):
        with pytest.raises(AttributeError):
            setattr(cs, name, None)
    assert isinstance(ChatStreamError("x"), ValueError)


DEEP = b'data: {"choices":[{"delta":{"content":"x"},"pad":' + b"[" * 6000 + b"]" * 6000 + b"}]}\n\n"


@pytest.mark.parametrize("depth_events", ["one", "many"])
def test_deeply_nested_json_is_malformed_at_every_chunking(depth_events: str) -> None:
    head = b'data: {"choices":[{"delta":{"content":"before "}}]}\n\n'
    tail = b'data: {"choices":[{"delta":{"content":"after"}}]}\n\ndata: [DONE]\n\n'
    body = head + DEEP + tail if depth_events == "one" else head + DEEP * 3 + tail
    for size in (1, 13, 100, len(head), len(head) + len(DEEP), len(body)):
        cs, _ = run(body, size)
        assert cs.outcome == Outcome.ERROR, size
        assert cs.error is not None and cs.error.kind == "malformed"
        assert "nested more than 128 levels deep" in cs.error.message
        assert cs.text == "before "


# -- iter_chat / aiter_chat told the response's status and content type ---------------------


def test_iter_chat_reports_an_http_error_with_the_providers_message() -> None:
    from pysse import ProviderError

    body = [b'{"error": {"message": "Invalid API key", "type": "auth"}}']
    events = list(iter_chat(body, status=401, content_type="application/json"))
    assert isinstance(events[0], ProviderError) and events[0].status == 401
    assert events[0].message == "HTTP 401 Unauthorized: Invalid API key"
    assert isinstance(events[-1], Finish) and events[-1].outcome == "error"


def test_iter_chat_summarises_an_html_page_instead_of_truncated() -> None:
    page = [b"<!doctype html><html><head><title>Portal</title></head>", b"<body>x</body></html>"]
    events = list(iter_chat(page, status=200, content_type="text/html"))
    fin = events[-1]
    assert isinstance(fin, Finish) and fin.outcome == "error"
    assert fin.detail == "the response is text/html, not text/event-stream: Portal — x"


def test_iter_chat_reads_at_most_64_kib_of_an_endless_error_body() -> None:
    def endless() -> Iterator[bytes]:
        while True:
            yield b"x" * 1000

    events = list(iter_chat(endless(), status=500, content_type="text/plain"))
    assert events[-1].outcome == "error"  # type: ignore[union-attr]


def test_aiter_chat_with_status() -> None:
    async def agen() -> AsyncIterator[bytes]:
        yield b"Service Unavailable"

    async def run() -> list[Any]:
        return [e async for e in aiter_chat(agen(), status=503, content_type="text/plain")]

    events = asyncio.run(run())
    assert events[-1].outcome == "error" and "HTTP 503 Service Unavailable" in events[-1].detail


def test_the_docs_iter_chat_example_runs_against_the_demo_server(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """docs/relay.md's copy-paste example, run as written (only the port differs)."""
    import re
    from pathlib import Path

    from pysse.server.app import create_app
    from pysse.server.demo import RICH_ANSWER
    from support import LiveServer

    readme = (Path(__file__).resolve().parents[1] / "docs" / "relay.md").read_text()
    code = re.search(
        r"<!-- example: iter_chat against build.py serve -->\n```python\n(.*?)```", readme, re.S
    )
    assert code is not None
    with LiveServer(create_app(None, demo_pace=0.01)) as live:
        source = code.group(1).replace("http://127.0.0.1:8000", live.url)
        exec(compile(source, "relay.md", "exec"), {})
        assert capsys.readouterr().out == RICH_ANSWER + "\n[completed] \n"
        exec(compile(source.replace("Hello!", "/demo 401"), "relay.md", "exec"), {})
        assert capsys.readouterr().out == (
            "\n[error] HTTP 401 Unauthorized: Invalid API key (demo).\n"
        )


def test_close_with_a_reason_and_the_retry_field() -> None:
    cs = ChatStream("openai-chat")
    cs.feed(b'retry: 3000\ndata: {"choices":[{"delta":{"content":"Hi"}}]}\n\n')
    assert cs.retry == 3000
    (fin,) = cs.close(reason="could not resume: this answer expired on the relay")
    assert fin.outcome == "truncated" and cs.text == "Hi"
    assert cs.finish_detail == "truncated: could not resume: this answer expired on the relay"
