"""render/markdown.py: the safe configuration. Hostile markdown stays inert (no script, no
event handler, no unsafe link scheme, no remote image unless its host is allowed)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from pysse.render import MarkdownPolicy, StreamingMarkdown, render
from pysse.server.demo import XSS_ANSWER

XSS = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "[x](javascript:alert(1))",
    "[x](JaVaScRiPt:alert(1))",
    "[x]( javascript:alert(1))",
    "[x](vbscript:msgbox)",
    "[x](data:text/html;base64,PHNjcmlwdD4=)",
    "[x](file:///etc/passwd)",
    "![x](data:image/png;base64,iVBORw0KGgo=)",
    "![beacon](https://tracker.invalid/p.gif?leak=1)",
    "<a href='javascript:alert(1)'>a</a>",
    "[<img src=x onerror=alert(1)>](https://ok.example)",
    "<javascript:alert(1)>",
    "[x]()",  # CommonMark's empty destination: href="" would open this page again
    "[**x** y]( )",
    "<iframe src=https://evil.invalid></iframe>",
    '[x](https://ok.example "title\\" onmouseover=\\"alert(1)")',
    "```\n<script>alert(1)</script>\n```",
    XSS_ANSWER,
]


class Inspect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


@pytest.mark.parametrize("src", XSS)
def test_xss_corpus_yields_no_unsafe_output(src: str) -> None:
    for html in (render(src), StreamingMarkdown().feed(src).tails[-1], _streamed(src)):
        p = Inspect()
        p.feed(html)
        for tag, attrs in p.tags:
            assert tag not in ("script", "iframe", "object", "embed", "style", "img"), html
            for name, value in attrs.items():
                assert not name.startswith("on"), html
                if name in ("href", "src"):
                    assert value is not None
                    assert re.match(r"^(https?:|mailto:)", value), html
            if tag == "a":
                assert attrs.get("rel") == "noopener noreferrer nofollow"


def test_a_link_with_an_empty_destination_keeps_its_text_and_links_nowhere() -> None:
    for html in (render("see [**the** docs]() now"), _streamed("see [**the** docs]() now")):
        assert "<a" not in html and "href" not in html
        assert "see <span><strong>the</strong> docs</span> now" in html


def _streamed(src: str) -> str:
    md = StreamingMarkdown()
    for i in range(0, len(src), 3):
        md.feed(src[i : i + 3])
    return md.html


def test_images_load_only_from_allowed_hosts() -> None:
    src = "![pic](https://images.example/a.png) ![t](https://tracker.invalid/x.gif)"
    html = render(
        src, StreamingMarkdown(MarkdownPolicy(image_hosts=frozenset({"images.example"}))).md
    )
    assert '<img src="https://images.example/a.png"' in html
    assert 'src="https://tracker.invalid' not in html
    assert 'href="https://tracker.invalid/x.gif"' in html
