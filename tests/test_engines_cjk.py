"""Chinese and Japanese answers, and tables' alignment in both directions, in every engine
(issue #42 parts 3 and 4), while the answer streams and after a reload.

* Emphasis next to full-width punctuation (``**“强调”**后``) is ``<strong>``/``<em>`` in the
  page, bold or italic as the engine draws it: the page's elements hold exactly the emphasised
  texts a one-shot CPython render has (``pysse/render/cjk.py``), and no frame shows an
  asterisk in the answer's prose (the hold-back closes an opener between CJK characters).
* A column typed ``:---`` sits on its table's start side: the left of an English table, the
  right of an Arabic one; ``---:`` on the end side; ``:-:`` in the middle. Measured where the
  engine drew each cell's text inside its cell, not read back from a class or a style."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from pysse.render import render
from pysse.testing import Script, ScriptServer

pytestmark = pytest.mark.browser

FIXTURES = Path(__file__).parent / "fixtures"
TABLES = """
| الاسم الكامل للشخص | القيمة الرقمية الطويلة | الوصف المختصر هنا | عمود بلا محاذاة |
|:---|---:|:-:|---|
| أ | ١ | ب | ج |

| A rather long heading | Another long heading | A centred heading | Not aligned at all |
|:---|---:|:-:|---|
| a | 1 | b | c |
"""
ANSWER = (FIXTURES / "cjk_answer.md").read_text() + TABLES
LAST = "[...document.querySelectorAll('[data-role=assistant]')].at(-1)"

# The answer's emphasis (tag, text, how it is drawn) and, outside code, whether any "*" shows.
EMPHASIS = f"""() => {{
  const m = {LAST}; if (!m) return null;
  const content = m.querySelector('.content'); if (!content) return null;
  const walk = document.createTreeWalker(content, NodeFilter.SHOW_TEXT); let prose = '';
  while (walk.nextNode()) if (!walk.currentNode.parentElement.closest('pre, .codeblock')) prose += walk.currentNode.data;
  return {{state: m.dataset.state, star: prose.includes('*') ? prose.slice(prose.indexOf('*') - 20, prose.indexOf('*') + 20) : '',
    marks: [...m.querySelectorAll('.content :is(strong, em, s)')].map((el) => {{
      const cs = getComputedStyle(el);
      return [el.tagName.toLowerCase(), el.textContent,
              el.tagName === 'STRONG' ? Number(cs.fontWeight) >= 600
              : el.tagName === 'EM' ? cs.fontStyle === 'italic'
              : cs.textDecorationLine.includes('line-through')];
    }})}};
}}"""

SAMPLE = f"""() => {{
  window.__stars = []; window.__frames_seen = 0; const show = {EMPHASIS};
  (function tick() {{
    const s = show();
    if (s && s.state === 'streaming') {{ window.__frames_seen++; if (s.star) window.__stars.push(s.star); }}
    requestAnimationFrame(tick);
  }})();
}}"""

# Each body cell of each table: its table's direction, its class, and on which side of the
# cell (inside its padding) the engine drew its text.
CELLS = f"""() => [...{LAST}.querySelectorAll('.content table')].map((t) => ({{
  dir: getComputedStyle(t).direction,
  cells: [...t.querySelectorAll('tbody td')].map((td) => {{
    const r = document.createRange(); r.selectNodeContents(td);
    const text = r.getBoundingClientRect(), cell = td.getBoundingClientRect();
    const cs = getComputedStyle(td);
    const left = text.left - cell.left - parseFloat(cs.paddingLeft) - parseFloat(cs.borderLeftWidth);
    const right = cell.right - text.right - parseFloat(cs.paddingRight) - parseFloat(cs.borderRightWidth);
    return {{cls: td.className, left, right,
             side: Math.abs(left - right) <= 3 ? 'center' : left < right ? 'left' : 'right'}};
  }})
}}))"""


class _Marks(HTMLParser):
    """The emphasised texts of a one-shot render, in order: what the page must show."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.marks: list[list[str]] = []
        self.open: list[int] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("strong", "em", "s"):
            self.open.append(len(self.marks))
            self.marks.append([tag, ""])

    def handle_endtag(self, tag: str) -> None:
        if tag in ("strong", "em", "s"):
            self.open.pop()

    def handle_data(self, data: str) -> None:
        for i in self.open:
            self.marks[i][1] += data


def expected_marks() -> list[list[str]]:
    p = _Marks()
    p.feed(render(ANSWER))
    return p.marks


def expected_side(direction: str, cls: str) -> str:
    start, end = ("right", "left") if direction == "rtl" else ("left", "right")
    return {"align-start": start, "align-end": end, "align-center": "center", "": start}[cls]


def check_final(chat: Any) -> None:
    shown = chat.page.evaluate(EMPHASIS)
    assert not shown["star"], (chat.engine, shown["star"])
    want = expected_marks()
    assert ["strong", "“强调”"] in want and ["strong", "「重要」"] in want  # the cases
    assert [m[:2] for m in shown["marks"]] == want, chat.engine
    assert all(m[2] for m in shown["marks"]), (chat.engine, [m for m in shown["marks"] if not m[2]])
    tables = chat.page.evaluate(CELLS)
    dirs = [t["dir"] for t in tables]
    assert dirs[-2:] == ["rtl", "ltr"], (chat.engine, dirs)
    for t in tables[-2:]:
        assert [c["cls"] for c in t["cells"]] == ["align-start", "align-end", "align-center", ""]
        got = [c["side"] for c in t["cells"]]
        want_sides = [expected_side(t["dir"], c["cls"]) for c in t["cells"]]
        assert got == want_sides, (chat.engine, t["dir"], json.dumps(t["cells"]))


def test_cjk_emphasis_and_mirrored_table_alignment(
    open_chat: Any, sse_server: ScriptServer
) -> None:
    # 3,850 writes of 2-12 bytes (UTF-8 sequences cut): 15 s at 4 ms apart, hundreds of frames
    # sampled (at 20 ms it took 77 s an engine)
    sse_server.play(Script.answer(ANSWER).chunked("random", sizes=(2, 12), seed=3).paced(0.004))
    chat = open_chat({"relay": sse_server.url, "format": "openai-chat", "headers": ""}, height=1000)
    chat.page.evaluate(SAMPLE)
    chat.send("用中文解释强调")
    chat.wait_done()
    seen = chat.page.evaluate("() => [window.__frames_seen, window.__stars]")
    assert seen[0] >= 3, (chat.engine, seen)
    assert not seen[1], (chat.engine, seen[1][:5])
    check_final(chat)
    chat.reload()  # the answer comes back from the cache (page/restore.py)
    chat.page.wait_for(
        f"() => {{ const m = {LAST}; return !!(m && !m.hasAttribute('data-pending') "
        "&& m.querySelectorAll('.content table').length >= 2); }"
    )
    check_final(chat)
