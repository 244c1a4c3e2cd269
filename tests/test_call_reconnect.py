"""The page's reconnect policy, pure: backoff with jitter, retry: honoured, a bounded outage,
an idle timeout that reconnects once, bytes ending an outage; and the resume URL. An early
clean end (WebKit's cut) resumes until the relay has nothing more; a page coming back revives
a dead or silent connection (issue #27)."""

from __future__ import annotations

import random

import pytest

from pysse import ChatStream
from pysse.call.reconnect import (
    REVIVE_SILENCE_MS,
    Reconnect,
    early_end_is_drop,
    relay_reason,
    resume_url,
    revive_on_return,
)
from pysse.server.resume import relay_note
from pysse.sse import RETRY_SATURATED


def policy(**kw: object) -> Reconnect:
    return Reconnect(jitter=0.0, rnd=random.Random(1), **kw)  # type: ignore[arg-type]


def test_backoff_doubles_to_a_cap_and_gives_up_after_the_outage_bound() -> None:
    r = policy(give_up_s=30)
    delays = [r.on_drop(t * 1000.0, "read-error", 100) for t in range(8)]
    assert delays[:7] == [250, 500, 1000, 2000, 4000, 8000, 8000]
    assert r.reconnecting and r.total == 8
    assert r.on_drop(30_000, "network-error", 100) is None
    assert "reconnecting failed for 30 s" in r.why


def test_a_delay_never_runs_past_the_give_up_time() -> None:
    r = policy(give_up_s=1)
    assert r.on_drop(0, "read-error", 0) == 250
    assert r.on_drop(900, "read-error", 0) == 100  # 100 ms left of the second


def test_retry_field_sets_the_first_delay() -> None:
    r = policy()
    assert r.on_drop(0, "read-error", 10, retry_ms=3000) == 3000
    assert r.on_drop(1, "read-error", 10, retry_ms=3000) == 6000
    assert policy().on_drop(0, "read-error", 10, retry_ms=20_000) == 20_000  # above the cap


@pytest.mark.parametrize(
    "retry_ms", [10**20, 10**400, RETRY_SATURATED], ids=["20-digits", "401-digits", "saturated"]
)
def test_a_retry_of_any_size_waits_at_most_the_outage(retry_ms: int) -> None:
    # The parser keeps retry: exact at any length (issue 24); float() of it overflowed.
    r = policy()
    assert r.on_drop(0, "read-error", 10, retry_ms=retry_ms) == 30_000  # the whole outage
    assert r.on_drop(30_000, "read-error", 10, retry_ms=retry_ms) is None  # then it gives up


def test_bytes_end_an_outage() -> None:
    r = policy()
    r.on_drop(0, "read-error", 10)
    r.on_drop(100, "network-error", 10)
    r.on_bytes()
    assert not r.reconnecting and r.on_drop(60_000, "read-error", 50) == 250
    assert r.total == 3


def test_an_idle_timeout_reconnects_once_per_byte_count() -> None:
    r = policy()
    assert r.on_drop(0, "idle", 500) == 250
    r.on_bytes()
    assert r.on_drop(5000, "idle", 500) is None  # the resume brought nothing new: silent
    assert "silent" in r.why
    r2 = policy()
    r2.on_drop(0, "idle", 500)
    r2.on_bytes()
    assert r2.on_drop(5000, "idle", 900) == 250  # new bytes came: a new silence may be a cut


def test_jitter_stays_within_its_share() -> None:
    r = Reconnect(jitter=0.2, rnd=random.Random(7))
    for _ in range(50):
        d = r.on_drop(0, "read-error", 1)
        r.attempts = 0
        assert d is not None and 200 <= d <= 300


def test_resume_url_keeps_an_existing_query() -> None:
    assert resume_url("http://r/relay", "ab_C-1", 42) == "http://r/relay?answer=ab_C-1&from=42"
    assert (
        resume_url("http://r/v1beta/models/m:streamGenerateContent?alt=sse", "id", None)
        == "http://r/v1beta/models/m:streamGenerateContent?alt=sse&answer=id"
    )


def test_an_early_clean_end_resumes_until_the_relay_has_nothing_more() -> None:
    r = policy()
    assert r.on_drop(0, "early-end", 400) == 250  # WebKit's cut: resume
    r.on_bytes()
    assert r.on_drop(1000, "early-end", 900) == 250  # the resume brought more, then cut again
    # The next resume brought nothing and ended cleanly: the answer ended at byte 900.
    assert r.on_drop(1500, "early-end", 900) is None
    assert r.why == "the relay has nothing after byte 900: the answer ended there"


def test_early_ends_and_idle_timeouts_are_counted_apart() -> None:
    r = policy()
    assert r.on_drop(0, "idle", 500) == 250
    assert r.on_drop(10, "early-end", 500) is not None  # not "the same again": another kind
    assert r.on_drop(20, "early-end", 500) is None


def test_a_revive_resumes_at_once_and_stays_bounded() -> None:
    r = policy(give_up_s=1)
    assert r.on_drop(0, "revived", 10) == 0.0
    assert r.on_drop(10, "revived", 10) == 0.0  # never "nothing new": the page came back
    assert r.total == 2 and r.attempts == 0  # no backoff built up for the next real drop
    assert r.on_drop(20, "read-error", 10) == 250
    assert r.on_drop(1000, "revived", 10) is None and "failed for 1 s" in r.why


def test_an_early_end_is_a_drop_only_for_an_answer_the_relay_keeps_and_did_not_end() -> None:
    assert early_end_is_drop(resumable=True, relay_ended=False)
    assert not early_end_is_drop(resumable=False, relay_ended=False)  # no answer id: as before
    assert not early_end_is_drop(resumable=True, relay_ended=True)  # the relay said it ended


@pytest.mark.parametrize(
    "why", ["nobody watched it for 120 s", "no bytes for 60 s", "stopped by the user"]
)
def test_the_relays_closing_note_is_read_back_through_the_parser(why: str) -> None:
    # The relay writes it (pysse.server.resume); the page reads it from the SSE comment.
    seen: list[str] = []
    cs = ChatStream("openai-chat", on_comment=seen.append)
    cs.feed(b'data: {"choices":[{"delta":{"content":"hi"}}]}\n\n' + relay_note(why))
    reasons = [r for r in map(relay_reason, seen) if r is not None]
    assert reasons == [why]
    assert cs.text == "hi"  # a comment: no text changed


@pytest.mark.parametrize("comment", ["", "ping", "keep-alive", "pysse relay: started"])
def test_other_comments_are_no_relay_note(comment: str) -> None:
    assert relay_reason(comment) is None


def test_a_page_coming_back_revives_a_dead_or_silent_connection() -> None:
    quiet = REVIVE_SILENCE_MS
    assert revive_on_return(resumable=True, persisted=True, silent_ms=0)  # bfcache: dead
    assert revive_on_return(resumable=True, persisted=False, silent_ms=quiet)
    assert not revive_on_return(resumable=True, persisted=False, silent_ms=quiet - 1)  # alive
    assert not revive_on_return(resumable=False, persisted=True, silent_ms=1e9)  # no answer id
