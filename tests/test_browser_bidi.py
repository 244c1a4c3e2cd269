"""Right to left in Chromium (issue #42): an answer in Arabic and Hebrew with English and code
in it lays each block out in its own text's direction while it streams and after a reload;
a settled block never changes direction; the composer, a sent question, its edit box and the
chat's title follow their text;
a right-to-left reader's page mirrors.

The expectation is ``dir="auto"``'s own rule, computed here independently: a block whose text
has a strong letter is right to left when its first strong letter is Arabic or Hebrew; code
is always left to right (its Arabic string included)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.browser

ANSWER = (Path(__file__).parent / "fixtures" / "rtl_answer.md").read_text()
LAST = "[...document.querySelectorAll('[data-role=assistant]')].at(-1)"
BLOCKS = "h2, p, li, blockquote, table, th, td, pre"

# In the page: each block's tag, text, :dir(rtl) and the direction its first strong letter
# asks for ("" with none yet). A block of .settled seen once with a strong letter must keep
# its direction: a change is recorded in window.__flips.
SHOW = f"""() => {{
  const strong = /[\\p{{L}}]/u, rtl = /[\\u0590-\\u08FF\\uFB1D-\\uFDFF\\uFE70-\\uFEFF]/;
  const m = {LAST}; if (!m) return null;
  return {{state: m.dataset.state, blocks: [...m.querySelectorAll('.content :is({BLOCKS})')]
    .map((el) => {{
      const text = el.textContent, first = (text.match(strong) || [""])[0];
      const want = el.closest('pre, .codeblock') ? 'ltr' : !first ? '' : rtl.test(first) ? 'rtl' : 'ltr';
      const got = el.matches(':dir(rtl)') ? 'rtl' : 'ltr';
      if (window.__seen && el.closest('.settled') && want) {{
        const seen = window.__seen.get(el);
        if (seen === undefined) window.__seen.set(el, got);
        else if (seen !== got) window.__flips.push(text.slice(0, 30));
      }}
      return {{tag: el.tagName.toLowerCase(), text: text.trim().slice(0, 30), want, got}};
    }})}};
}}"""

SAMPLE = f"""() => {{
  window.__seen = new WeakMap(); window.__flips = []; window.__samples = [];
  const show = {SHOW};
  (function tick() {{
    const s = show();
    if (s && s.state === 'streaming' && s.blocks.length) window.__samples.push(s.blocks);
    requestAnimationFrame(tick);
  }})();
}}"""


def wrong(blocks: list[dict[str, str]]) -> list[dict[str, str]]:
    return [b for b in blocks if b["want"] and b["want"] != b["got"]]


def check_final(page: Any) -> None:
    shown = page.evaluate(SHOW)
    blocks = shown["blocks"]
    assert not wrong(blocks), wrong(blocks)
    by_text = {b["text"][:12]: b["got"] for b in blocks}
    assert by_text["مقدمة عن الل"] == "rtl"  # the heading
    assert by_text["هذه فقرة عرب"] == "rtl"  # a paragraph with one English word
    assert by_text["البند الأول "] == "rtl"  # the list's items
    assert by_text["اقتباس قصير "] == "rtl"  # the quote
    assert by_text["الاسم"] == "rtl" and by_text["١٢"] == "rtl"  # the table, its cells
    assert by_text['print("مرحبا'] == "ltr"  # the code block
    assert by_text["זוהי פסקה בע"] == "rtl"  # Hebrew
    assert by_text["This closing"] == "ltr"  # English
    assert len([b for b in blocks if b["got"] == "rtl"]) >= 7


def test_a_mixed_answer_is_laid_out_in_each_blocks_direction(make_page: Any) -> None:
    p = make_page(settings={"headers": "X-Demo-Pace: 1"})
    page = p.open()
    page.evaluate(SAMPLE)
    p.send("/demo echo " + ANSWER)
    p.wait_done()
    samples = page.evaluate("() => window.__samples")
    assert len(samples) >= 5, samples  # sampled while it streamed, frame by frame
    mid = [s for s in samples if not any(b["text"].startswith("This closing") for b in s)]
    assert any(any(b["tag"] == "table" for b in s) for s in mid)  # partway through
    for blocks in samples:
        assert not wrong(blocks), wrong(blocks)
    assert page.evaluate("() => window.__flips") == []
    check_final(page)
    p.reload()
    page.wait_for_function(
        f"() => {{ const m = {LAST}; return m && !m.hasAttribute('data-pending') "
        "&& m.querySelector('.content pre'); }"
    )
    page.evaluate("() => { window.__seen = new WeakMap(); window.__flips = []; }")
    check_final(page)


def test_the_composer_and_a_sent_question_follow_their_text(make_page: Any) -> None:
    p = make_page()
    page = p.open()
    page.fill("[data-role=prompt]", "ما هي لغة Python؟")
    assert page.evaluate("() => document.querySelector('#prompt').matches(':dir(rtl)')")
    page.fill("[data-role=prompt]", "What is Python?")
    assert page.evaluate("() => document.querySelector('#prompt').matches(':dir(ltr)')")
    p.send("ما هي لغة Python؟")
    p.wait_done()
    users = "[...document.querySelectorAll('[data-role=user] .content')]"
    assert page.evaluate(f"() => {users}.at(-1).matches(':dir(rtl)')")
    title = "document.querySelector('[data-role=chat-open]')"
    assert page.evaluate(f"() => {title}.matches(':dir(rtl)')")  # the chat's title
    p.click("[data-role=user] [data-role=edit]")  # edited again: the edit box too
    assert page.evaluate(
        "() => document.querySelector('[data-role=edit-text]').matches(':dir(rtl)')"
    )


@pytest.mark.parametrize("viewport", [(390, 844), (1280, 720)])
def test_an_arabic_readers_page_mirrors(
    make_page: Any, viewport: tuple[int, int], tmp_path: Path
) -> None:
    """``<html dir="rtl">`` from the reader's language; nothing overflows the page sideways
    (docs/rtl-phone.png: ``python -m bench.screenshots rtl``)."""
    w, h = viewport
    p = make_page(viewport={"width": w, "height": h}, locale="ar")
    page = p.open()
    assert page.evaluate("() => document.documentElement.dir") == "rtl"
    p.send("/demo echo " + ANSWER)
    p.wait_done()
    check_final(page)
    layout = page.evaluate(
        """() => ({scroll: document.documentElement.scrollWidth,
                   width: document.documentElement.clientWidth,
                   composer: document.querySelector('.composer').getBoundingClientRect().width,
                   quote: (() => { const q = document.querySelector('.msg .content blockquote');
                     return getComputedStyle(q).borderRightWidth; })()})"""
    )
    assert layout["scroll"] <= layout["width"], layout
    assert layout["composer"] <= layout["width"] + 0.5, layout
    assert layout["quote"] == "3px", layout  # the quote's border on its start: the right
    page.locator(".log").evaluate("(el) => { el.scrollTop = 0; }")
    page.screenshot(path=str(tmp_path / f"rtl-{w}x{h}.png"))
