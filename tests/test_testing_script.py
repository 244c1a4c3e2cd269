"""pysse.testing.script: what a Script sends, cut how, paced how, ending how. Pure: no server."""

from __future__ import annotations

import json
import math

import pytest

from fixtures_util import FIXTURES
from pysse import Outcome
from pysse.providers import PROVIDERS, error_message
from pysse.testing import Script, Write

SAVED = FIXTURES / "openai_chat_text.sse"
CHUNKINGS: list[object] = ["whole", "event", "random", 1, 7, 1000]
TEXT = "Hello — 東京 🙂, a streamed answer\nin a few words."


def test_from_file_is_the_file_byte_for_byte() -> None:
    s = Script.from_file(SAVED)
    assert s.body == SAVED.read_bytes() == s.sent
    assert s.status == 200 and dict(s.headers)["content-type"].startswith("text/event-stream")
    assert s.ending == "close" and s.writes[0].delay == 0


def test_from_bytes_takes_bytes_and_says_what_to_pass_otherwise() -> None:
    # Issue 24: a str gave Python's bare "string argument without an encoding".
    assert Script.from_bytes(bytearray(b"data: x\n\n")).body == b"data: x\n\n"
    assert Script.from_bytes(memoryview(b"data: x\n\n")).body == b"data: x\n\n"
    with pytest.raises(TypeError, match=r"takes bytes, not str: pass 'data: x\\n\\n'\.encode\(\)"):
        Script.from_bytes("data: x\n\n")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not int"):  # bytes(5) would be five zero bytes
        Script.from_bytes(5)  # type: ignore[arg-type]


@pytest.mark.parametrize("chunks", CHUNKINGS)
def test_every_chunking_sends_every_byte_in_order(chunks: object) -> None:
    for path in sorted(FIXTURES.glob("*.sse")):
        s = Script.from_file(path).chunked(chunks, seed=3)
        writes = s.writes
        assert b"".join(w.data for w in writes) == path.read_bytes(), path.name
        assert all(w.data for w in writes)
        if isinstance(chunks, int):
            assert all(len(w.data) == chunks for w in writes[:-1])
            assert 1 <= len(writes[-1].data) <= chunks


def test_event_chunking_cuts_after_each_blank_line_crlf_too() -> None:
    s = Script.from_file(FIXTURES / "gemini_text.sse")
    assert b"\r\n" in s.body
    for w in s.writes:
        assert w.data.endswith((b"\n\n", b"\r\n\r\n")), w.data
    keepalive = Script.from_bytes(b": ping\n\ndata: 1\n\n" * 2)
    assert [w.data for w in keepalive.writes] == [b": ping\n\n", b"data: 1\n\n"] * 2
    assert keepalive.event_count == 2  # comment-only blocks are not events


def test_random_chunking_is_seeded_and_bounded() -> None:
    s = Script.from_file(SAVED)
    a = s.chunked("random", seed=1, sizes=(5, 9)).writes
    assert a == s.chunked("random", seed=1, sizes=(5, 9)).writes
    assert a != s.chunked("random", seed=2, sizes=(5, 9)).writes
    assert all(5 <= len(w.data) <= 9 for w in a[:-1])


def test_pacing_first_byte_and_slow_headers() -> None:
    s = Script.from_file(SAVED).chunked(100).paced(0.25).first_byte_after(1.5).headers_after(2)
    delays = [w.delay for w in s.writes]
    assert delays[0] == 1.5 and set(delays[1:]) == {0.25}
    assert s.headers_delay == 2
    assert s.duration == pytest.approx(2 + 1.5 + 0.25 * (len(delays) - 1))
    ranged = Script.from_file(SAVED).chunked(50).paced(0.1, 0.2, seed=4)
    assert all(0.1 <= w.delay <= 0.2 for w in ranged.writes[1:])
    assert ranged.writes == Script.from_file(SAVED).chunked(50).paced(0.1, 0.2, seed=4).writes


def test_drop_after_a_byte_or_an_event() -> None:
    s = Script.from_file(SAVED)
    by_byte = s.drop(after_byte=300)
    assert by_byte.sent == s.body[:300] and by_byte.ending == "drop"
    by_event = s.drop(after_event=3)
    assert by_event.sent.endswith(b"\n\n") and by_event.sent.count(b"data:") == 3
    cs = by_event.chat()
    assert cs.outcome == Outcome.TRUNCATED and cs.text == "The capital of Portugal — "
    # at the end: every byte, then the connection closes without ending the body
    assert s.drop().sent == s.body and s.drop().ending == "drop"


def test_methods_commute() -> None:
    s = Script.from_file(SAVED)
    assert s.drop(after_event=3).chunked(1).writes == s.chunked(1).drop(after_event=3).writes
    assert (
        s.stall(2, after_byte=10).chunked(7).paced(0.1).writes
        == s.paced(0.1).chunked(7).stall(2, after_byte=10).writes
    )


def test_a_stall_is_silence_at_that_point_then_the_rest() -> None:
    s = Script.from_file(SAVED).chunked("whole").stall(3, after_event=2)
    first, second = s.writes
    assert first == Write(0.0, s.body[: len(first.data)]) and first.data.count(b"data:") == 2
    assert second.delay == 3 and first.data + second.data == s.body
    forever = Script.from_file(SAVED).stall()  # by default: after the last byte, for ever
    assert forever.writes[-1] == Write(math.inf, b"") and forever.duration == math.inf
    dropped = Script.from_file(SAVED).drop(after_byte=100).stall(1)
    assert dropped.writes[-1] == Write(1, b"")  # the stall comes before the drop


def test_truncate_ends_the_body_cleanly_before_the_terminal_signal() -> None:
    s = Script.from_file(SAVED).truncate(after_event=3)
    assert s.ending == "close" and s.chat().outcome == Outcome.TRUNCATED


@pytest.mark.parametrize("fmt", list(PROVIDERS))
def test_generated_answers_in_every_format(fmt: str) -> None:
    s = Script.answer(TEXT, fmt)
    assert s.chat(fmt).text == TEXT and s.chat().outcome == Outcome.COMPLETED
    assert s.chat().detected_format == fmt
    err = Script.answer(TEXT, fmt, error_after=3, error_message="boom")
    assert err.chat().outcome == Outcome.ERROR and err.chat().error.message == "boom"
    bad = Script.answer(TEXT, fmt, malformed_after=2)
    assert bad.chat().error.kind == "malformed"
    cut = Script.answer(TEXT, fmt, terminal=False)
    assert cut.chat().outcome == Outcome.TRUNCATED and cut.chat().text == TEXT
    assert Script.answer(["a", "b"], fmt).chat().text == "ab"


@pytest.mark.parametrize("fmt", list(PROVIDERS))
def test_http_errors_have_the_providers_body(fmt: str) -> None:
    s = Script.http_error(429, "Slow down", format=fmt, retry_after=7)
    assert s.status == 429 and dict(s.headers)["retry-after"] == "7"
    assert error_message(s.body.decode()) == "Slow down"
    assert dict(s.response_headers())["content-length"] == str(len(s.body))
    shape = json.loads(s.body)
    assert {"openai-chat": "code", "openai-responses": "code", "anthropic": "type"}.get(
        fmt, "status"
    ) in (shape["error"] if fmt != "anthropic" else shape)


def test_content_length_only_for_a_body_in_one_piece_that_ends_cleanly() -> None:
    s = Script.from_file(SAVED)
    assert "content-length" not in dict(s.response_headers())  # many writes: chunked
    assert "content-length" in dict(s.chunked("whole").response_headers())
    assert "content-length" not in dict(s.chunked("whole").drop().response_headers())
    assert "content-length" not in dict(
        s.chunked("whole").stall(1, after_byte=5).response_headers()
    )


def test_headers_content_type_and_status() -> None:
    s = Script.answer("hi").content_type("text/html").with_status(203).with_header("X-A", "1")
    assert dict(s.headers)["content-type"] == "text/html" and dict(s.headers)["x-a"] == "1"
    assert [n for n, _ in s.headers].count("content-type") == 1 and s.status == 203
    assert "x-a" not in dict(s.with_header("x-A", None).headers)


def test_keepalives_only() -> None:
    s = Script.keepalives(5, every=0.5)
    assert len(s.writes) == 5 and all(w.data == b": keep-alive\n\n" for w in s.writes)
    assert [w.delay for w in s.writes] == [0, 0.5, 0.5, 0.5, 0.5]
    assert s.event_count == 0
    assert s.chat().outcome == Outcome.TRUNCATED and s.chat().text == ""


def test_scripts_are_immutable_values() -> None:
    s = Script.from_file(SAVED)
    assert s.chunked(1) == s.chunked(1) and s.chunked(1) is not s and s.chunks == "event"
    with pytest.raises(AttributeError):
        s.status = 500
    assert repr(s.drop(after_byte=9)).startswith("Script(200, ")
    assert len(repr(Script.from_bytes(b"x" * 100_000))) < 200


@pytest.mark.parametrize(
    "make",
    [
        lambda s: s.drop(after_byte=10**6),
        lambda s: s.drop(after_event=99),
        lambda s: s.stall(1, after_byte=1, after_event=1),
        lambda s: s.truncate(),
        lambda s: s.chunked(0),
        lambda s: s.chunked("lines"),
        lambda s: s.chunked("random", sizes=(5, 2)),
        lambda s: s.paced(-1),
        lambda s: s.paced(0.2, 0.1),
        lambda s: s.stall(float("nan")),
        lambda s: s.with_status(99),
        lambda s: Script.http_error(200),
        lambda s: Script.keepalives(-1),
    ],
)
def test_impossible_scripts_are_value_errors(make: object) -> None:
    with pytest.raises(ValueError):
        make(Script.from_file(SAVED))
