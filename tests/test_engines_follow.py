"""Following the answer in every engine (issue #41): a message sent with a click on Send
(the engine's own click: a real pointer at the button's centre), and the next one sent with
Enter, are both followed to the end. A press with the mouse over the page used to stop the
view following for the rest of the visit in Chromium."""

from __future__ import annotations

import time
from typing import Any

import pytest

pytestmark = pytest.mark.browser

# The view's follow state (its read-only hook) and whether the last answer's end is in the
# log's box, after a frame (the view pins the bottom after a layout).
STATE = """() => new Promise((ok) => requestAnimationFrame(() => setTimeout(() => {
  const log = document.querySelector('[data-role=log]');
  const a = [...log.querySelectorAll('[data-role=assistant]')].at(-1);
  const box = log.getBoundingClientRect(), end = a ? a.getBoundingClientRect().bottom : 0;
  ok({ ...pysse.view.followState, endInView: !!a && end <= box.bottom + 2 && end >= box.top,
    gap: Math.round(log.scrollHeight - log.scrollTop - log.clientHeight) }); }, 0)))"""


def assert_following(chat: Any, timeout: float = 3.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        got = chat.page.evaluate(STATE)
        if got["following"] and not got["jump"] and got["endInView"]:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{chat.engine}: not following the answer: {got}")
        time.sleep(0.05)


def test_a_click_on_send_and_then_enter_are_followed(open_chat: Any) -> None:
    chat = open_chat(width=1280, height=720)
    chat.send("/demo long")  # the log overflows
    chat.wait_done()
    assert_following(chat)
    chat.page.type("[data-role=prompt]", "/demo long")
    chat.page.click("[data-role=send]")
    chat.wait_done()
    assert_following(chat)
    chat.send("/demo long")  # the next one, by Enter
    chat.wait_done()
    assert_following(chat)
