"""app/inspector_view.py: the inspector's HTML, computed in CPython. Hostile bytes are shown
as text, long lists are paged, the outcome line says how the answer ended."""

from __future__ import annotations

from html.parser import HTMLParser

from pysse.app.inspector_view import (
    PAGE,
    chat_summary,
    more_button,
    render_compare,
    render_events,
    render_raw,
    render_timing,
)
from pysse.events import ReasoningDelta, event_to_dict
from pysse.inspector import analyze, compare_chunk_sizes

HOSTILE = (
    b'data: {"choices":[{"delta":{"content":"<img src=x onerror=alert(1)>"}}]}\r\n\r\n'
    b": <script>alert(2)</script>\n\n"
    b"event: <b>x</b>\ndata: [DONE]\n\n"
)


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attrs: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attrs.update(name for name, _ in attrs)


def tags(html: str) -> Tags:
    t = Tags()
    t.feed(html)
    return t


def test_hostile_stream_content_is_escaped_in_every_view() -> None:
    rep = analyze([(0.0, HOSTILE[:30]), (5.0, HOSTILE[30:])])
    for html in (render_raw(rep), render_events(rep)):
        t = tags(html)
        assert not t.tags & {"img", "script", "b"}, html
        assert not any(a.startswith("on") for a in t.attrs)
    assert "&lt;img src=x onerror=alert(1)&gt;" in render_events(rep)
    assert '<span class="comment">: &lt;script&gt;' in render_raw(rep)
    assert "␍␊" in render_raw(rep)


def test_long_lists_are_paged() -> None:
    body = b"".join(b'data: {"choices":[{"delta":{"content":"x"}}]}\n\n' for _ in range(450))
    rep = analyze([(float(i), body[i * 10 : i * 10 + 10]) for i in range(len(body) // 10 + 1)])
    html = render_events(rep)
    assert html.count("<tr data-event=") == PAGE
    assert f"Show {PAGE} more of {450 - PAGE}" in html
    assert render_events(rep, 10_000).count("<tr data-event=") == 450
    assert more_button(3, PAGE) == ""


def test_timing_outcome_line() -> None:
    rep = analyze([(3.0, b'data: {"choices":[{"delta":{"content":"hi"}}]}\n\n')])
    live = {"total_ms": 10.0, "renders": 2, "deltas_per_render": 1.5, "longest_render_ms": 0.4}
    html = render_timing(rep, live, "truncated", replay=False)
    assert "truncated: the connection closed before data: [DONE]" in html
    assert "1.5" in html and "3 ms" in html
    assert "aborted: stopped by the user" in render_timing(rep, live, "aborted", replay=False)


def test_compare_verdict() -> None:
    assert "Replay this answer" in render_compare(None)
    rows = compare_chunk_sizes(b'data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: [DONE]\n\n')
    assert "identical text at every chunk size" in render_compare(rows)
    rows[-1] = {**rows[-1], "same": False, "first_difference_at": 0}
    assert "the text depends on the chunk size" in render_compare(rows)


def test_chat_summary_lines() -> None:
    assert chat_summary({"type": "text", "text": "a"}) == "text: 'a'"
    assert (
        chat_summary({"type": "usage", "input_tokens": 1, "output_tokens": 2})
        == "usage: 1 in / 2 out"
    )
    assert chat_summary({"type": "error", "kind": "k", "message": "m"}) == "error k: m"
    hidden = event_to_dict(ReasoningDelta("", 1, redacted=True, data="opaque-blob"))
    assert chat_summary(hidden) == "reasoning: hidden by the provider"
    signed = event_to_dict(ReasoningDelta("", 0, signature="EqQB"))
    assert chat_summary(signed) == "reasoning: the block's signature (4 characters)"
    assert chat_summary(event_to_dict(ReasoningDelta("hm"))) == "reasoning: 'hm'"


def test_resume_points_are_marked_in_the_raw_view() -> None:
    chunks = [(1.0, b"data: {}\n\n"), (2.0, b": ping\n\n"), (9.0, b"data: {}\n\n")]
    rep = analyze(chunks, "openai-chat", {2: "reconnect 1: resumed at byte 18", 3: "after <all>"})
    html = render_raw(rep)
    first, second = html.index("resumed at byte 18"), html.index('data-chunk="2"')
    assert first < second  # the mark sits before the first chunk that came after it
    assert "after &lt;all&gt;" in html  # a resume after the last chunk, escaped
    assert html.count('data-role="insp-resume"') == 2
    assert 'data-role="insp-resume"' not in render_raw(analyze(chunks, "openai-chat"))
