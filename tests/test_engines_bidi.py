"""Right to left in every engine (issue #42): the mixed Arabic, Hebrew and English answer of
``test_browser_bidi.py`` lays each block out in its own text's direction while it streams
and after a reload, in Chromium, Firefox and WebKit.

Read with ``getComputedStyle(el).direction`` (the direction the engine lays the block out
in), in every engine alike; ``:dir()`` is recorded too where the engine has it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pysse.testing import Script, ScriptServer

pytestmark = pytest.mark.browser

ANSWER = (Path(__file__).parent / "fixtures" / "rtl_answer.md").read_text()
LAST = "[...document.querySelectorAll('[data-role=assistant]')].at(-1)"

# Each block: its text, the direction dir="auto" asks for ("" without a strong letter yet;
# code: ltr), the computed direction, and :dir(rtl) (null where the engine lacks :dir()).
SHOW = f"""() => {{
  const strong = /[\\p{{L}}]/u, rtl = /[\\u0590-\\u08FF\\uFB1D-\\uFDFF\\uFE70-\\uFEFF]/;
  const m = {LAST}; if (!m) return null;
  const pseudo = (el) => {{ try {{ return el.matches(':dir(rtl)'); }} catch (e) {{ return null; }} }};
  return {{state: m.dataset.state, blocks: [...m.querySelectorAll(
      '.content :is(h2, p, li, blockquote, table, th, td, pre)')].map((el) => {{
    const text = el.textContent, first = (text.match(strong) || [''])[0];
    const want = el.closest('pre, .codeblock') ? 'ltr' : !first ? '' : rtl.test(first) ? 'rtl' : 'ltr';
    return {{text: text.trim().slice(0, 12), want, got: getComputedStyle(el).direction,
             pseudo: pseudo(el)}};
  }})}};
}}"""

SAMPLE = f"""() => {{
  window.__samples = []; const show = {SHOW};
  (function tick() {{
    const s = show();
    if (s && s.state === 'streaming' && s.blocks.length) window.__samples.push(s.blocks);
    requestAnimationFrame(tick);
  }})();
}}"""

EXPECTED = {
    "مقدمة عن الل": "rtl",
    "هذه فقرة عرب": "rtl",
    "البند الأول ": "rtl",
    "اقتباس قصير ": "rtl",
    "الاسم": "rtl",
    "١٢": "rtl",
    'print("مرحبا': "ltr",
    "זוהי פסקה בע": "rtl",
    "This closing": "ltr",
}


def wrong(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Blocks laid out against dir="auto"'s rule, by computed style or by ``:dir()``."""
    return [
        b
        for b in blocks
        if b["want"]
        and (
            b["got"] != b["want"]
            or (b["pseudo"] is not None and b["pseudo"] != (b["want"] == "rtl"))
        )
    ]


def check_final(chat: Any) -> None:
    blocks = chat.page.evaluate(SHOW)["blocks"]
    assert not wrong(blocks), (chat.engine, wrong(blocks))
    got = {b["text"]: b["got"] for b in blocks}
    assert {k: got.get(k) for k in EXPECTED} == EXPECTED, (chat.engine, blocks)


def test_each_block_of_a_mixed_answer_takes_its_own_direction(
    open_chat: Any, sse_server: ScriptServer
) -> None:
    # A few characters a write, a write every 20 ms: sampled in many frames mid-answer.
    sse_server.play(Script.answer(ANSWER).chunked("random", sizes=(4, 40), seed=7).paced(0.02))
    # Tall enough for the whole answer: in a shorter window Firefox reports "ResizeObserver
    # loop completed with undelivered notifications" when the answer is restored after the
    # reload (the page's scroll follower, web/view.js; the same before issue #42's change).
    chat = open_chat({"relay": sse_server.url, "format": "openai-chat", "headers": ""}, height=1000)
    chat.page.evaluate(SAMPLE)
    chat.send("Explain Python, in Arabic")
    chat.wait_done()
    samples = chat.page.evaluate("() => window.__samples")
    assert len(samples) >= 3, (chat.engine, samples)
    for blocks in samples:
        assert not wrong(blocks), (chat.engine, json.dumps(wrong(blocks), ensure_ascii=False))
    check_final(chat)
    chat.reload()
    chat.page.wait_for(
        f"() => {{ const m = {LAST}; return !!(m && !m.hasAttribute('data-pending') "
        "&& m.querySelector('.content pre')); }"
    )
    check_final(chat)
