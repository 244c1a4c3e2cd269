"""What differs among the engines, and that the page handles each (issue #27; the list is in
docs/engines.md). Each test runs in every engine; where an engine lacks an API, the others are
made to lack it too (the probe removes it before the page starts), so the fallback is proven
everywhere and not only where it happens to be needed."""

from __future__ import annotations

from typing import Any

import pytest

from pysse.server.demo import RICH_ANSWER

pytestmark = pytest.mark.browser

# What each engine has, as measured here (Chromium 156, Firefox ESR 153, WebKitGTK 2.50).
FEATURES = """() => ({
  anchoring: CSS.supports('overflow-anchor', 'auto'),
  schedulerYield: typeof globalThis.scheduler?.yield === 'function',
  idleCallback: typeof requestIdleCallback === 'function',
  longtask: PerformanceObserver.supportedEntryTypes.includes('longtask'),
  eventTiming: PerformanceObserver.supportedEntryTypes.includes('event'),
  abortTimeout: typeof AbortSignal.timeout === 'function',
  abortAny: typeof AbortSignal.any === 'function',
  clipboard: !!(navigator.clipboard && navigator.clipboard.writeText),
})"""
EXPECTED = {
    "chromium": dict(
        anchoring=True, schedulerYield=True, idleCallback=True, longtask=True, eventTiming=True
    ),
    "firefox": dict(
        anchoring=True, schedulerYield=True, idleCallback=True, longtask=False, eventTiming=True
    ),
    "webkit": dict(
        anchoring=False, schedulerYield=False, idleCallback=False, longtask=False, eventTiming=False
    ),
}


def test_what_each_engine_has_and_that_aborts_keep_their_reason(open_chat: Any) -> None:
    chat = open_chat({"headers": "X-Demo-Pace: 40", "first_byte_s": 1})
    found = chat.page.evaluate(FEATURES)
    assert {k: found[k] for k in EXPECTED[chat.engine]} == EXPECTED[chat.engine], found
    # The bridge aborts with a DOMException reason (never a string: Pyodide hangs on one);
    # every engine must report the first-byte timeout as such, not as a network error.
    chat.send("hello")  # the demo's first byte comes after 2 s here
    msg = chat.wait_done()
    assert (msg["state"], msg["status"]) == ("error", "Error: timed out: no first byte for 1 s")
    # ... and Stop's abort is Stop, not a failure.
    chat.page.evaluate(
        "() => { const f = document.querySelector('[data-setting=first_byte_s]'); f.value = 60;"
        " f.dispatchEvent(new Event('change', { bubbles: true })); }"
    )
    chat.send("/demo echo stop me")
    chat.page.click("[data-role=stop]")
    assert chat.wait_done()["state"] == "aborted"


def test_without_scheduler_idle_callbacks_or_indexeddb_the_page_works(open_chat: Any) -> None:
    # Safari has neither scheduler.yield nor requestIdleCallback; private modes may refuse
    # IndexedDB. Boot, answer, copy and the notice about storage, in every engine.
    # (taken from the page's window: where its Python runs there, the main-thread mode)
    chat = open_chat(
        without=("scheduler", "requestIdleCallback", "indexedDB"),
        path="/?thread=main&boot=snapshot",
    )
    assert chat.page.evaluate("() => [typeof scheduler, typeof requestIdleCallback]") == [
        "undefined",
        "undefined",
    ]
    assert chat.page.evaluate("() => window.pysseBoot.path") == "snapshot"
    notice = chat.page.evaluate(
        "() => [...document.querySelectorAll('[data-role=notice]')].map((n) => n.textContent)"
    )
    assert any("storage is not available (private browsing" in n for n in notice), notice
    chat.send("hello")
    assert chat.wait_done()["text"] == RICH_ANSWER
    # Copy: the clipboard may be refused (no permission, no user gesture the engine trusts);
    # the button says which, and nothing throws.
    chat.page.click("[data-role=assistant] [data-role=copy-answer]")
    said = chat.page.wait_for(
        "() => { const t = document.querySelector('[data-role=assistant] [data-role=copy-answer]')"
        ".textContent; return /Copied|Copy failed/.test(t) && t; }"
    )
    assert said in ("Copied", "Copy failed")


# Color emoji and CJK text drawn by the engine's own font stack: a color emoji font gives
# saturated pixels (a missing one gives none, or gray boxes); CJK glyphs have ink.
INK = """() => {
  const c = document.createElement('canvas'); c.width = 160; c.height = 64;
  const g = c.getContext('2d'); g.textBaseline = 'top';
  g.font = '48px system-ui, sans-serif'; g.fillText('🙂', 4, 4);
  g.fillStyle = '#000'; g.fillText('東京', 60, 4);
  const px = g.getImageData(0, 0, 160, 64).data;
  let color = 0, ink = 0;
  for (let i = 0; i < px.length; i += 4) {
    const [r, gg, b, a] = [px[i], px[i + 1], px[i + 2], px[i + 3]];
    const x = (i / 4) % 160;
    if (x < 58 && a > 128 && Math.max(r, gg, b) - Math.min(r, gg, b) > 80) color++;
    if (x >= 60 && a > 128) ink++;
  }
  return { color, ink };
}"""


def test_emoji_draw_in_color_and_cjk_has_glyphs(open_chat: Any) -> None:
    chat = open_chat()
    got = chat.page.evaluate(INK)
    assert got["color"] > 200 and got["ink"] > 200, got
