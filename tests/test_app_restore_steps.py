"""Restoring long chats (issue #28), the pure part: which answer renders next, an answer
rendered in bounded steps ending equal to a one-shot render, and the HTML cache's key."""

from __future__ import annotations

import pytest
from dom_model import new_root
from hypothesis import given, settings
from hypothesis import strategies as st

from pysse.app.restore_steps import (
    STEP_CHARS,
    RestoreOrder,
    cache_key,
    placeholder_px,
    render_steps,
    renderer_id,
)
from pysse.render.dom import DomWriter
from pysse.render.markdown import render
from pysse.render.streaming import StreamingMarkdown
from pysse.server.demo import MATH_ANSWER, RICH_ANSWER
from pysse.server.shapes import SHAPES


def test_in_view_first_newest_first_then_the_rest_newest_first() -> None:
    order = RestoreOrder()
    for mid in ["a3", "a4", "a5", "a2", "a1"]:  # the newest put on screen first
        order.add(mid, float(mid[1]))
    assert order.next() == "a5"  # nothing said to be in view yet: the newest
    order.seen("a2", True)
    order.seen("a3", True)
    assert order.peek(5) == ["a3", "a2", "a5", "a4", "a1"]
    assert order.urgent
    order.done("a3")
    order.seen("a2", False)  # scrolled away
    assert not order.urgent
    assert order.peek(5) == ["a5", "a4", "a2", "a1"]
    order.add("a4", 4.0)  # added again (shown again): not twice
    assert len(order) == 4 and "a4" in order and "a3" not in order
    order.clear()
    assert order.next() is None and not order.urgent


def _apply_steps(text: str, step_chars: int = STEP_CHARS) -> tuple[str, int, list[int]]:
    md = StreamingMarkdown()
    root = new_root()
    writer = DomWriter(root)
    steps, taken, before = 0, [], 0
    for update in render_steps(text, md, step_chars):
        writer.apply(update)
        steps += 1
        now = len(md.text)
        taken.append(now - before)
        before = now
    return root.inner(), steps, taken


ANSWERS = {
    "rich": RICH_ANSWER,
    "math": MATH_ANSWER,
    **{name: make(60) for name, make in SHAPES.items()},
}


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_steps_end_as_a_one_shot_render_taking_at_most_a_step_of_text(name: str) -> None:
    text = ANSWERS[name]
    html, steps, taken = _apply_steps(text, 700)
    assert html == render(text)
    assert max(taken) <= 700  # no step parses more than its share of new text
    assert steps >= len(text) // 700  # a long answer takes several steps


def test_a_short_answer_is_one_step_and_the_final_update() -> None:
    md = StreamingMarkdown()
    updates = list(render_steps("Hello **world**\n", md))
    assert updates[-1].final and len(updates) == 2


@settings(max_examples=60, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("ab *_`#>-|1.[]()$\n\n\n ")), max_size=400),
    st.integers(min_value=1, max_value=120),
)
def test_any_text_in_any_step_size_ends_as_a_one_shot_render(text: str, step: int) -> None:
    html, _, taken = _apply_steps(text, step)
    assert html == render(text)
    assert all(n <= step for n in taken)


def test_the_cache_key_changes_with_the_renderer_the_hosts_and_the_text() -> None:
    base = cache_key("wheels/abc/pysse.whl", {"img.example"}, "text")
    assert base == cache_key("wheels/abc/pysse.whl", ["img.example"], "text")
    assert len(base) == 32
    assert base != cache_key("wheels/abd/pysse.whl", {"img.example"}, "text")
    assert base != cache_key("wheels/abc/pysse.whl", set(), "text")
    assert base != cache_key("wheels/abc/pysse.whl", {"img.example"}, "text!")
    assert cache_key("r", {"a", "b"}, "t") == cache_key("r", ["b", "a"], "t")


def test_the_renderer_is_the_wheels_the_page_loads() -> None:
    site = {"wheels": ["wheels/111/markdown_it.whl", "wheels/222/pysse.whl"]}
    assert renderer_id(site) == "wheels/111/markdown_it.whl\nwheels/222/pysse.whl"
    assert renderer_id({}).startswith("pysse ")


def test_a_placeholder_grows_with_the_answer() -> None:
    short, long = placeholder_px("one line"), placeholder_px("a line\n" * 200)
    assert 48 < short < long
    assert placeholder_px("x" * 900) > placeholder_px("x" * 90)


def test_the_cache_key_carries_the_html_format(monkeypatch: pytest.MonkeyPatch) -> None:
    """HTML cached before blocks carried ``dir`` (issue #42) is not shown again: a page built
    without a wheel list keys by version only, and the version did not change."""
    import pysse.app.restore_steps as restore

    base = cache_key("pysse 0.1.0", set(), "text")
    monkeypatch.setattr(restore, "HTML_FORMAT", "1")
    assert cache_key("pysse 0.1.0", set(), "text") != base


def test_cached_html_is_accepted_only_as_the_renderer_makes_it() -> None:
    """``renderer_made``: what the renderer emits passes (every demo answer, tables, task
    lists, math, code); a tag or attribute it never emits, or an unsafe URL, does not."""
    from pysse.app.restore_steps import renderer_made
    from pysse.render.markdown import MarkdownPolicy, make_markdown, render
    from pysse.server.demo import MATH_ANSWER, RICH_ANSWER

    md = make_markdown(MarkdownPolicy())
    extra = "| a | b |\n|:-|-:|\n| 1 | 2 |\n\n- [x] done\n\n$$x^2$$ and $y$\n\n~~s~~ <https://a.b>"
    long_fence = "```python\n" + "x = 1\n" * 70 + "```"  # (in blocks of lines)
    rtl = "# عنوان\n\nمرحبا **بالعالم**\n\n> שלום\n\n- بند"
    for text in (RICH_ANSWER, MATH_ANSWER, extra, "```python\nprint(1)\n```", long_fence, rtl):
        assert renderer_made(render(text, md)), text[:40]
    for bad in (
        '<form action="https://evil.test/"><input name="pw"></form>',
        "<style>body{display:none}</style>",
        '<meta http-equiv="refresh" content="0;url=https://evil.test/">',
        '<a href="javascript:alert(1)">x</a>',
        '<a href="https://ok.test/" onclick="x()">x</a>',
        '<img src="https://ok.test/a.png" onerror="x()">',
        '<p style="position:fixed;inset:0">x</p>',
        # the renderer writes no style at all now (a column's alignment is a class):
        # markdown-it's own would keep an answer cached before that unmirrored
        '<td style="text-align:left">x</td>',
        "<iframe src=https://evil.test/></iframe>",
        "<!-- hidden --><p>x</p>",
    ):
        assert not renderer_made(bad), bad
