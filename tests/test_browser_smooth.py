"""What keeps painting cheap while an answer streams (issue #28), as structure, in Chromium:
every change a frame makes to the page is inside the streaming answer (never a class or an
attribute toggled on the root, the log or every message: each of those restyles or repaints
the whole conversation), and every settled block of an answer is its own layout and paint boundary
(``contain``), so a change to the answer's tail repaints the tail, and every message off screen
costs nothing (``content-visibility: auto``)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

pytestmark = pytest.mark.browser

# Where each DOM change happened: inside an answer's content, on the answer itself (which
# attribute), or elsewhere (the element and attribute).
RECORD_JS = """() => { window.__muts = [];
  window.__renders0 = Number(document.querySelector('[data-role=assistant]').dataset.renders || 0);
  const where = (n) => { const el = n.nodeType === 1 ? n : n.parentElement;
    if (!el.isConnected) return 'detached';  // gone by now: nothing on screen changed
    if (el.closest('[data-role=assistant] .settled')) return 'content';
    if (el.closest('[data-role=assistant] .meta')) return 'footer';
    return (el.dataset.role || el.tagName.toLowerCase()); };
  new MutationObserver((list) => { for (const m of list)
    window.__muts.push([where(m.target), m.attributeName || m.type]); })
  .observe(document.documentElement,
    { subtree: true, childList: true, attributes: true, characterData: true }); }"""


def test_a_streaming_answer_changes_only_itself_each_frame(make_page: Any) -> None:
    p = make_page(settings={"headers": "X-Demo-Pace: 2"})  # ~2 s: dozens of frames
    page = p.open()
    page.wait_for_selector("body[data-warm='1']")
    p.send("/demo long")
    page.wait_for_selector("[data-role=assistant] .settled > *")
    page.evaluate(RECORD_JS)
    el = p.wait_done(timeout=120_000)
    # the renders made while the recorder ran (a busy page may have made many before it)
    renders = int(el.get_attribute("data-renders") or 0) - page.evaluate("window.__renders0")
    muts = Counter(tuple(m) for m in page.evaluate("window.__muts"))
    assert muts["content", "childList"] > renders // 2  # the stream was recorded
    # (a node changed and then removed before the observer ran is off screen: "detached")
    outside = {k: v for k, v in muts.items() if k[0] not in ("content", "footer", "detached")}
    # per frame: at most the answer's own render counter and the Jump button's state; the
    # rest happens once, when the answer ends (its state, the Stop button, the chat list...)
    per_frame = {k: v for k, v in outside.items() if v > 8}
    assert set(per_frame) <= {("assistant", "data-renders"), ("jump", "hidden")}, per_frame


def test_messages_and_settled_blocks_are_paint_boundaries(make_page: Any) -> None:
    p = make_page()
    page = p.open()
    p.send("/demo echo # A title\n\nA paragraph.\n\n- a list\n\n| a |\n|---|\n| 1 |\n")
    p.wait_done()
    styles = page.evaluate(
        """() => [[...document.querySelectorAll('[data-role=log] > .msg')],
                  [...document.querySelectorAll('.msg .settled > *')]].map((els) => els.map(
          (e) => [getComputedStyle(e).contentVisibility, getComputedStyle(e).contain,
                  getComputedStyle(e).containIntrinsicBlockSize]))"""
    )
    messages, blocks = styles
    assert len(messages) == 2 and len(blocks) >= 4
    assert all(m[0] == "auto" and m[2].startswith("auto ") for m in messages), messages
    assert all("paint" in b[1] and "layout" in b[1] for b in blocks), blocks
