"""Live speed under an answer, in Chromium: time to first token and tokens/s while it streams
and after (also after a reload), and a stall notice that appears when no bytes come, shows
keep-alives differently (alive, not progress) and clears when text flows again."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import shown_text, stored_answers, wait_stored
from pysse.testing import Script

pytestmark = pytest.mark.browser


def stalling_script() -> Script:
    """Three events, silence until released, keep-alives only (0.8 s apart), silence until
    released, then the rest. Held rather than timed: a notice is a state of a few seconds,
    and a busy page could look for it after a 4.5 s silence had already ended."""
    body = Script.answer("One two three four five six seven eight nine ten.", "openai-chat").sent
    events = [e + b"\n\n" for e in body.split(b"\n\n") if e]
    keepalives = [b": keep-alive\n\n"] * 6
    parts = [*events[:3], *keepalives, *events[3:]]
    script = Script.from_events(parts).chunked("event")
    at = sum(len(e) for e in events[:3])
    script = script.stall(after_byte=at)  # until released
    for ka in keepalives:
        at += len(ka)
        script = script.stall(0.8, after_byte=at)
    return script.stall(after_byte=at)  # after the last keep-alive: until released


def test_stall_notice_appears_shows_keepalives_differently_and_clears(
    make_page: Any, sse_server: Any
) -> None:
    sse_server.play(stalling_script())
    p = make_page(settings={"relay": sse_server.url, "format": "openai-chat"})
    page = p.open()
    p.send("count")
    stall = "[data-role=assistant] [data-role=stall]"
    page.wait_for_selector(f"{stall}[data-kind=silent]:not([hidden])", timeout=30_000)
    assert "no bytes for" in page.inner_text(stall)
    sse_server.last_request.release()  # keep-alives now, no content
    # (the notice shows from the first keep-alive until 3 s after the last: about 7 s)
    page.wait_for_selector(f"{stall}[data-kind=keepalive]:not([hidden])", timeout=30_000)
    assert "only keep-alives" in page.inner_text(stall)
    assert "to first token" in page.inner_text("[data-role=assistant] [data-role=speed]")
    sse_server.last_request.release()  # and the rest
    msg = p.wait_done(timeout=30_000)
    assert msg.get_attribute("data-state") == "completed"
    assert page.is_hidden(stall)


def test_speed_shows_while_streaming_and_after_a_reload(make_page: Any) -> None:
    p = make_page(settings={"headers": "X-Demo-Pace: 1"})
    page = p.open()
    p.send("/demo slow")
    speed = "[data-role=assistant] [data-role=speed]"
    page.wait_for_function(
        f"() => document.querySelector('{speed}').textContent.includes('≈')", timeout=20_000
    )
    assert "s to first token" in page.inner_text(speed)  # an estimate while streaming
    page.click("[data-role=stop]")
    msg = p.wait_done()
    line = page.inner_text(speed)
    assert "to first token" in line and "tok/s" in line
    # stored as it ended, speed and all (was: 300 ms for the write)
    wait_stored(
        page,
        lambda db: (
            [(m["state"], bool(m["speed"])) for m in stored_answers(db)] == [("aborted", True)]
        ),
    )
    p.reload()
    page.wait_for_selector("[data-role=assistant]")
    # (the restored answer went in with the boot's last task: maybe not rendered yet)
    assert shown_text(page.locator(speed)) == line
    assert msg is not None
