"""The page's reconnect policy, pure: backoff with jitter, retry: honoured, a bounded outage,
an idle timeout that reconnects once, bytes ending an outage; and the resume URL."""

from __future__ import annotations

import random

import pytest

from pysse.page.reconnect import Reconnect, resume_url
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
