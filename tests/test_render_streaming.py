"""render/streaming.py: every prefix renders cleanly, settled content never changes (checked
on a model DOM the updates are applied to), the final state equals a one-shot render, and
total work stays linear. Answer shapes in depth: test_render_blocks.py."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from dom_model import stream_into_dom

from pysse.render import StreamingMarkdown, hold_back, render
from pysse.server.demo import RICH_ANSWER, XSS_ANSWER, _long_answer

FIXTURES = Path(__file__).parent / "fixtures"
ANSWERS = {
    "rich": RICH_ANSWER,
    "nested": (FIXTURES / "answer_nested.md").read_text(),
    "code_end": (FIXTURES / "answer_code_end.md").read_text(),
    "xss": XSS_ANSWER,
}


class TextOutsideCode(HTMLParser):
    """Visible text of an HTML fragment, without the contents of <code>/<pre>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("code", "pre", "button"):
            self.depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("code", "pre", "button"):
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self.depth == 0:
            self.parts.append(data)


def visible(html: str) -> str:
    p = TextOutsideCode()
    p.feed(html)
    return "".join(p.parts)


SYNTAX = ["**", "~~", "```", "~~~", "](", "|--", "| -", "\n#", "\n- ", "\n* ", "__", "<scr", "<img"]


@pytest.mark.parametrize("name", ANSWERS)
def test_every_prefix_shows_no_raw_syntax(name: str) -> None:
    text = ANSWERS[name]
    final_visible = visible(render(text))
    # Syntax that never shows in the finished answer must never show while streaming either.
    forbidden = [s for s in SYNTAX if s not in final_visible]
    assert "**" in forbidden
    md = StreamingMarkdown()
    for end in range(1, len(text) + 1):
        md.feed(text[end - 1])  # one character at a time: every prefix is on screen once
        shown = visible(md.html)
        assert shown == visible(render(hold_back(text[:end])) if end else ""), end
        for s in forbidden:
            assert s not in shown, (end, s, text[:end][-40:], shown[-80:])
        stripped = shown.rstrip()
        assert not re.search(r"(^|\s)[*_`#|]$", stripped), (end, text[:end][-30:], stripped[-40:])


@pytest.mark.parametrize("name", ANSWERS)
@pytest.mark.parametrize("size", [1, 3, 17, 200])
def test_settled_blocks_never_change_and_final_equals_one_shot(name: str, size: int) -> None:
    text = ANSWERS[name]
    out = stream_into_dom(text, [size])  # asserts settled nodes are never touched
    assert out.html == render(text)
    assert out.md.html == render(text)
    assert out.md.text == text


def test_streaming_shows_plain_text_at_once() -> None:
    md = StreamingMarkdown()
    assert "Hello wor" in md.feed("Hello wor").tails[-1]
    assert "<strong>bold so far</strong>" in md.feed(" **bold so far").tails[-1]


def test_open_fence_is_code_marked_incomplete_and_not_highlighted() -> None:
    md = StreamingMarkdown()
    md.feed("Intro\n\n```python\ndef f():\n    return 1\n")
    assert 'class="codeblock incomplete"' in md.html
    assert "hl-" not in md.html  # no highlighting while open
    md.feed("```\n\nAfter.\n")
    html = md.html
    assert 'class="codeblock"' in html and "hl-k" in html  # highlighted once closed


def test_partial_fence_line_is_not_shown() -> None:
    md = StreamingMarkdown()
    md.feed("Text\n\n``")
    assert "``" not in visible(md.html)
    md.feed("`pyth")
    assert "pyth" not in md.html


def test_table_waits_for_delimiter_then_rows_appear_complete() -> None:
    md = StreamingMarkdown()
    md.feed("Intro\n\n| a | b |\n")
    assert "| a" not in md.html and "<table" not in md.html
    md.feed("|---|---|\n| 1 | 2")
    assert (
        '<table dir="auto">' in md.html and "<th>a</th>" in md.html and "<td>1</td>" not in md.html
    )
    md.feed(" |\n")
    assert "<td>1</td>" in md.html and "<td>2</td>" in md.html


def test_total_render_work_is_linear() -> None:
    """Rendered characters grow ~linearly with the answer, not quadratically."""

    def work(text: str) -> int:
        md = StreamingMarkdown()
        for i in range(0, len(text), 10):
            md.feed(text[i : i + 10])
        md.finish()
        return md.rendered_chars

    small, big = _long_answer(15_000), _long_answer(30_000)
    ratio = work(big) / work(small)
    assert ratio < 2.5, ratio
