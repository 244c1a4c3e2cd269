"""One answer's session (``pysse.call.answer``): what each fact from the bridge means, in
CPython with a fake clock. The browser glue (``ChatCall``) only forwards these calls."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pysse.call.answer import AnswerListener, AnswerSession
from pysse.events import ChatEvent, Finish, Outcome, TextDelta
from pysse.providers import PROVIDERS
from pysse.providers.encoders import encode_answer


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


class Heard(AnswerListener):
    def __init__(self) -> None:
        self.shown: list[str] = []
        self.events: list[ChatEvent] = []
        self.finishes: list[Finish] = []
        self.reconnecting: list[tuple[bool, int]] = []
        self.opened = 0
        self.resumed: list[int] = []

    def on_opened(self, session: AnswerSession) -> None:
        self.opened += 1

    def on_text(self, text: str) -> None:
        self.shown.append(text)

    def on_event(self, event: ChatEvent) -> None:
        self.events.append(event)

    def on_reconnecting(self, on: bool, attempt: int) -> None:
        self.reconnecting.append((on, attempt))

    def on_resume(self, offset: int) -> None:
        self.resumed.append(offset)

    def on_finish(self, finish: Finish) -> None:
        self.finishes.append(finish)


def session(fmt: Any = "auto", **kw: Any) -> tuple[AnswerSession, Heard, Clock]:
    clock = Clock()
    s = AnswerSession(fmt, clock=clock, url="http://relay.test/relay", **kw)
    heard = Heard()
    s.listeners.append(heard)
    return s, heard, clock


def stream(fmt: str, deltas: list[str], terminal: bool = True) -> bytes:
    return b"".join(encode_answer(PROVIDERS[fmt], deltas, terminal=terminal))


@pytest.mark.parametrize("fmt", list(PROVIDERS))
def test_whole_answer_in_every_format(fmt: str) -> None:
    s, heard, _ = session()
    s.on_open(200, "text/event-stream", fmt, "pysse", "")
    assert s.feed(stream(fmt, ["Hel", "lo ", "world"]))
    s.on_end()  # the terminal signal came first: the clean end changes nothing
    assert s.state == "completed"
    assert "".join(heard.shown) == s.text == "Hello world"
    assert len(heard.finishes) == 1 and heard.finishes[0].outcome == Outcome.COMPLETED
    assert s.note == "Done"
    assert heard.opened == 1 and s.advertised == fmt and s.from_relay


@given(data=st.data())
@settings(max_examples=40, deadline=None)
def test_any_chunking_shows_the_same_text(data: st.DataObject) -> None:
    fmt = data.draw(st.sampled_from(list(PROVIDERS)))
    deltas = data.draw(st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=8))
    raw = stream(fmt, deltas)
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(raw) - 1)), max_size=12)))
    s, heard, _ = session()
    for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True):
        s.feed(raw[a:b])
    assert s.state == "completed"
    assert "".join(heard.shown) == s.text == "".join(deltas)
    assert s.raw() == raw


def test_a_clean_end_before_the_terminal_signal_is_truncated() -> None:
    s, _, _ = session("openai-chat")
    s.feed(stream("openai-chat", ["partial ", "answer"], terminal=False))
    s.on_end()
    assert s.state == "truncated"
    assert s.text == "partial answer"
    assert "before data: [DONE]" in s.note


def test_a_drop_waits_then_resumes_and_the_parse_continues() -> None:
    raw = stream("anthropic", ["one ", "two ", "three"])
    s, heard, clock = session("anthropic")
    cut = len(raw) // 2
    s.on_open(200, "text/event-stream", "anthropic", "pysse", "ans-1")
    s.feed(raw[:cut])
    delay = s.on_drop("read-error", "TypeError", "network error")
    assert 0 < delay <= 250 * 1.2
    assert heard.reconnecting == [(True, 1)]
    clock.t += delay
    s.on_resumed(cut)
    s.feed(raw[cut:])
    assert heard.reconnecting[-1] == (False, 1)
    assert s.state == "completed" and s.text == "one two three"
    assert heard.resumed == [cut]
    assert s.resume_marks() == {1: f"reconnect 1: resumed at byte {cut:,} ({delay:,.0f} ms)"}


def test_reconnecting_gives_up_after_the_outage_limit() -> None:
    s, _, clock = session("openai-chat")
    s.feed(stream("openai-chat", ["kept"], terminal=False))
    tries = 0
    while (delay := s.on_drop("network-error", "TypeError", "Failed to fetch")) >= 0:
        tries += 1
        clock.t += max(delay, 1.0)
        assert tries < 100
    assert s.state == "truncated"
    assert s.text == "kept"
    assert "reconnecting failed for 30 s" in s.note


def test_an_idle_drop_that_brings_nothing_new_is_a_timeout() -> None:
    s, _, clock = session("openai-chat", idle_s=12)
    s.feed(stream("openai-chat", ["quiet"], terminal=False))
    assert s.on_drop("idle", "TimeoutError", "no bytes for 12 s") >= 0
    clock.t += 500
    assert s.on_drop("idle", "TimeoutError", "no bytes for 12 s") == -1
    assert s.state == "error"
    assert s.cs.error is not None
    assert s.cs.error.message.startswith("timed out: no bytes for 12 s (the answer is silent")


def test_a_refused_resume_ends_truncated_with_the_relays_reason() -> None:
    s, _, _ = session("openai-chat")
    s.feed(stream("openai-chat", ["some"], terminal=False))
    s.on_drop("read-error", "TypeError", "network error")
    body = json.dumps({"error": {"type": "answer_expired", "message": "this answer expired"}})
    s.on_resume_failed(410, body)
    assert s.state == "truncated"
    assert s.note == "Truncated: could not resume: this answer expired"


def test_an_http_error_names_the_relays_message() -> None:
    s, heard, _ = session("openai-chat")
    s.on_open(429, "application/json", "", "pysse", "")
    body = json.dumps({"error": {"message": "Rate limit reached", "type": "rate_limit"}})
    s.on_http_error(429, "7", "application/json", body)
    assert s.state == "error"
    assert "Rate limit reached" in s.note
    assert heard.finishes[0].outcome == Outcome.ERROR


def test_stop_keeps_the_text_and_later_bytes_change_nothing() -> None:
    raw = stream("gemini", ["a", "b", "c"])
    s, heard, _ = session("gemini")
    s.feed(raw[: len(raw) // 2])
    before = s.text
    s.stop()
    assert s.state == "aborted" and s.note == "Stopped"
    assert s.feed(raw[len(raw) // 2 :]) is False
    assert s.text == before
    assert len(heard.finishes) == 1


def test_a_continuation_is_joined_to_the_partial_answer() -> None:
    s, heard, _ = session("openai-chat", continues="The answer is forty")
    assert s.shown_start == "The answer is forty"
    s.feed(stream("openai-chat", ["answer is forty-two."]))
    assert s.text == "The answer is forty-two."
    assert "".join([s.shown_start, *heard.shown]) == s.text


def test_a_stream_in_another_format_says_so_first() -> None:
    s, _, _ = session("anthropic")
    s.feed(stream("openai-chat", ["hi"]))
    s.on_end()
    assert s.state in ("truncated", "error")
    assert "this is an OpenAI Chat" in s.note and "Format is Anthropic" in s.note


def test_without_keeping_chunks_nothing_is_recorded() -> None:
    s, heard, _ = session("openai-chat", keep_chunks=False)
    s.feed(stream("openai-chat", ["light"]))
    assert s.chunks == [] and s.text == "light" and s.state == "completed"
    assert [e for e in heard.events if isinstance(e, TextDelta)] == [TextDelta("light")]


def test_an_early_clean_end_of_a_kept_answer_is_a_drop_then_resumes() -> None:
    """WebKit reports a cut connection as ``done: true``: with an answer id, a drop."""
    raw = stream("openai-chat", ["cut ", "short ", "and resumed"])
    s, _, _ = session("openai-chat")
    s.on_open(200, "text/event-stream", "openai-chat", "pysse", "ans-2")
    s.feed(raw[:40])
    assert s.on_end() is True and s.streaming  # the bridge resumes
    assert s.on_drop("early-end", "", "the body ended before the answer did") >= 0
    s.on_resumed(40)
    s.feed(raw[40:])
    assert s.state == "completed" and s.text == "cut short and resumed"


def test_an_early_end_twice_at_the_same_byte_means_the_answer_ended_there() -> None:
    s, _, clock = session("openai-chat")
    s.on_open(200, "text/event-stream", "", "pysse", "ans-3")
    s.feed(stream("openai-chat", ["all there is"], terminal=False))
    assert s.on_end() is True
    assert s.on_drop("early-end", "", "") >= 0
    clock.t += 300
    s.on_resumed(s.cs.bytes_fed)
    assert s.on_end() is True
    assert s.on_drop("early-end", "", "") == -1
    assert s.state == "truncated" and s.text == "all there is"
    # the same sentence as an answer that was never resumed: how it ended, not the byte
    assert s.note == "Truncated: the connection closed before data: [DONE]"


def test_an_answer_the_relay_ended_itself_is_not_resumed() -> None:
    s, _, _ = session("openai-chat")
    s.on_open(200, "text/event-stream", "", "pysse", "ans-4")
    s.feed(stream("openai-chat", ["some"], terminal=False))
    s.feed(b": pysse relay: stream ended, the upstream sent nothing for 300 s\n\n")
    assert s.on_end() is False
    assert s.state == "truncated"
    assert "the relay ended it: the upstream sent nothing for 300 s" in s.note


def test_without_an_answer_id_an_early_end_is_the_end() -> None:
    s, _, _ = session("openai-chat")
    s.feed(stream("openai-chat", ["plain relay"], terminal=False))
    assert s.on_end() is False and s.state == "truncated"


def test_a_page_back_in_view_revives_a_silent_or_dead_connection() -> None:
    s, _, clock = session("openai-chat")
    s.feed(stream("openai-chat", ["x"], terminal=False))
    assert not s.should_revive(persisted=True)  # no answer id: nothing to resume
    s.on_open(200, "text/event-stream", "", "pysse", "ans-5")
    assert s.should_revive(persisted=True)  # back from the back-forward cache: dead
    assert not s.should_revive(persisted=False)  # bytes just now: alive
    clock.t += 2500
    assert s.should_revive(persisted=False)  # silent since it went to the background
