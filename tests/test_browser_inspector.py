"""The stream inspector in Chromium: raw chunks, events, timing, Save (exact bytes) and
Replay at 1 and 1000-byte chunks; and no inspector work while it is closed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import READY_MS
from pysse.server import demo

pytestmark = pytest.mark.browser


def relay_bytes(prompt: str, fmt: str = "openai-chat") -> bytes:
    return b"".join(c for _, c in demo.plan(fmt, prompt, seed=0).writes)


def test_closed_inspector_does_no_work(make_page: Any) -> None:
    p = make_page()
    page = p.open()
    p.send("hello")
    p.wait_done()
    assert json.loads(page.evaluate("pysse.stats()"))["inspector_renders"] == 0


def test_inspector_shows_chunks_events_and_timing(make_page: Any) -> None:
    p = make_page(settings={"headers": "X-Demo-Pace: 1"})
    page = p.open()
    p.send("/demo echo Hello, inspector — 東京 🙂")
    msg = p.wait_done()
    stats = json.loads(page.evaluate("pysse.stats()"))["turns"][0]
    msg.query_selector("[data-role=inspect]").click()
    page.wait_for_selector("[data-role=inspector]:not([hidden])")
    rows = page.query_selector_all("[data-role=insp-chunks] tbody tr")
    assert len(rows) == stats["chunks"] >= 2  # one row per read, as they arrived
    sent = relay_bytes("/demo echo Hello, inspector — 東京 🙂")
    assert f"{len(sent):,} bytes" in page.inner_text("[data-role=insp-body]")
    # line ends made visible: each event's blank line shows as ␊ in the chunk it arrived in
    shown = "".join(row.inner_text() for row in rows)
    assert shown.count("␊") >= 2 * stats["sse_events"], shown
    page.click("[data-tab=events]")
    events = page.query_selector_all("[data-role=insp-events] tbody tr")
    assert len(events) == stats["sse_events"]
    assert "[DONE]" in events[-1].inner_text()
    assert "text: 'Hello" in page.inner_text("[data-role=insp-events]")
    page.click("[data-tab=timing]")
    timing = {
        el.get_attribute("data-key"): el.inner_text()
        for el in page.query_selector_all("[data-role=insp-timing] dd")
    }
    ttfb = float(timing["time to first byte"].split()[0].replace(",", ""))
    total = float(timing["total time"].split()[0].replace(",", ""))
    assert 0 < ttfb <= total  # (no upper bound: how long it took is the machine's speed)
    assert timing["outcome"] == "completed"
    assert timing["bytes"] == f"{len(sent):,}"


def test_truncated_stream_explains_itself(make_page: Any) -> None:
    p = make_page()
    page = p.open()
    p.send("/demo drop")
    msg = p.wait_done()
    msg.query_selector("[data-role=inspect]").click()
    page.click("[data-tab=timing]")
    outcome = page.inner_text("[data-role=insp-timing] dd[data-key=outcome]")
    assert outcome == "truncated: the connection closed before data: [DONE]"


def test_save_gives_the_exact_bytes_and_replay_matches_at_1_and_1000(
    make_page: Any, tmp_path: Path
) -> None:
    p = make_page()
    page = p.open()
    p.send("hello")
    msg = p.wait_done()
    original = msg.get_attribute("data-text")
    msg.query_selector("[data-role=inspect]").click()
    with page.expect_download() as dl:
        page.click("[data-role=insp-save]")
    saved = tmp_path / "answer.sse"
    dl.value.save_as(saved)
    assert saved.read_bytes() == relay_bytes("hello")
    page.click("[data-tab=replay]")
    for size in ("1", "1000"):
        before = page.locator("[data-role=assistant]").count()
        page.select_option("[data-role=replay-chunk]", size)
        page.set_input_files("[data-role=replay-file]", str(saved))
        page.wait_for_function(
            f"() => document.querySelectorAll('[data-role=assistant]').length == {before + 1}"
        )
        replayed = p.wait_done()
        assert replayed.get_attribute("data-replay") == "1"
        assert replayed.get_attribute("data-state") == "completed"
        assert replayed.get_attribute("data-text") == original
        page.wait_for_selector("[data-role=insp-verdict]")  # the check runs after the replay
        assert "identical text at every chunk size" in page.inner_text("[data-role=insp-body]")
        page.set_input_files("[data-role=replay-file]", [])


def test_inspect_query_opens_the_panel(make_page: Any) -> None:
    p = make_page()
    page = p.page
    page.goto(p.base + "/?inspect=1")
    page.wait_for_selector("body[data-ready='1']", timeout=READY_MS)
    assert page.is_visible("[data-role=inspector]")


def test_replays_too_big_for_a_page_are_refused_and_big_ones_do_not_block(
    make_page: Any,
) -> None:
    p = make_page()
    page = p.page
    page.goto(p.base + "/?inspect=1")  # no answer yet: a saved file can still be replayed
    page.wait_for_selector("body[data-ready='1']", timeout=READY_MS)
    page.click("[data-tab=replay]")
    huge = {"name": "huge.sse", "mimeType": "text/event-stream", "buffer": b": x\n" * (5 << 20)}
    page.select_option("[data-role=replay-chunk]", "1000")
    page.set_input_files("[data-role=replay-file]", [huge])
    refused = page.wait_for_selector("[data-role=insp-refused]")
    assert "20.0 MiB" in refused.inner_text() and "python -m pysse replay" in refused.inner_text()
    page.set_input_files("[data-role=replay-file]", [])
    many = {"name": "many.sse", "mimeType": "text/event-stream", "buffer": b": x\n" * 100_000}
    page.select_option("[data-role=replay-chunk]", "1")
    page.set_input_files("[data-role=replay-file]", [many])
    refused = page.wait_for_selector("[data-role=insp-refused]")
    assert "400,000 chunks" in refused.inner_text()
    assert page.locator("[data-role=assistant]").count() == 0  # nothing was replayed
    page.set_input_files("[data-role=replay-file]", [])
    # A big replay runs in slices: the page gets a turn (input, painting) between them.
    page.select_option("[data-role=replay-chunk]", "60")
    big = relay_bytes("/demo long")
    page.set_input_files(
        "[data-role=replay-file]",
        [{"name": "big.sse", "mimeType": "text/event-stream", "buffer": big}],
    )
    replayed = p.wait_done(timeout=120_000)
    assert replayed.get_attribute("data-state") == "completed"
    page.wait_for_selector("[data-role=insp-verdict]", timeout=120_000)
    assert json.loads(page.evaluate("pysse.stats()"))["sliced_pauses"] > 5
