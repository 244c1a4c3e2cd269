"""render/markdown.py: the safe configuration. Hostile markdown stays inert (no script, no
event handler, no unsafe link scheme, no remote image unless its host is allowed)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from pysse.render import MarkdownPolicy, StreamingMarkdown, render
from pysse.render.markdown import TABLE_TOOLS
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
    '<p dir="rtl;x" onclick="alert(1)">',
    "# t {dir=x onclick=alert(1)}",
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
                if name == "dir":  # only the values pysse writes (docs/security.md)
                    assert value in ("auto", "ltr", "rtl"), html
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


RTL_ANSWER = (Path(__file__).parent / "fixtures" / "rtl_answer.md").read_text()
ROOTS = ("p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "table")  # at the top level
VOID = ("input", "img", "br", "hr")


class Directions(HTMLParser):
    """Each start tag with its depth (top-level blocks: 0), its ``dir`` and whether an
    enclosing element sets ``dir``."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str | None] = []
        self.seen: list[tuple[str, int, str | None, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        own = dict(attrs).get("dir")
        inherited = next((d for d in reversed(self.stack) if d), None)
        self.seen.append((tag, len(self.stack), own, inherited))
        if tag not in VOID:
            self.stack.append(own)

    def handle_endtag(self, tag: str) -> None:
        if tag not in VOID and self.stack:
            self.stack.pop()


def _directions(html: str) -> list[tuple[str, int, str | None, str | None]]:
    p = Directions()
    # A table's box and tools are not a block of the text: the table is (as a root).
    p.feed(html.replace(TABLE_TOOLS, "").replace("</table></div>", "</table>"))
    return p.seen


def _check_directions(html: str) -> None:
    """Every block resolves its direction from its own text (issue #42): a list item always,
    a paragraph, heading, quote or table at the top level; one nested in those inherits it
    (``dir="auto"`` would skip a descendant's text that carries ``dir``); code, math: ltr."""
    for tag, depth, own, inherited in _directions(html):
        if tag == "li" or (tag in ROOTS and depth == 0):
            assert own == "auto", (tag, html)
        elif tag in ("pre", "math"):
            assert "ltr" in (own, inherited), (tag, html)
        elif tag in (*ROOTS, "th", "td"):
            assert own is None and inherited == "auto", (tag, html)


BLOCKS = """# heading

para *x* $a+b$

Setext
===

- item
- [ ] task

3. loose

   two

> quote
>
> - nested **item**
>
> | a | b |
> |---|---|
> | 1 | 2 |

| h | i |
|---|--:|
| c | d |

```js
x
```

    indented

$$
y
$$
"""


def test_every_block_type_carries_its_direction() -> None:
    html = render(BLOCKS)
    _check_directions(html)
    tags = {t for t, *_ in _directions(html)}
    assert {"h1", "p", "li", "ul", "ol", "blockquote", "table", "pre", "math", "td"} <= tags
    assert '<div class="codeblock" dir="ltr">' in html and '<pre dir="ltr">' in html
    assert '<div class="math block" dir="ltr"' in html and '<span class="math" dir="ltr">' in html


@pytest.mark.parametrize("src", [BLOCKS, RTL_ANSWER])
def test_blocks_carry_their_direction_at_every_point_of_the_stream(src: str) -> None:
    """The settled blocks and the open tail go through the same rules: every frame's HTML
    (settled and tails) carries the attributes, and the end equals a one-shot render."""
    md = StreamingMarkdown()
    for i in range(0, len(src), 2):
        md.feed(src[i : i + 2])
        _check_directions(md.html)
    md.finish()
    assert md.html == render(src)


def test_a_columns_alignment_is_a_class_that_mirrors_in_a_right_to_left_table() -> None:
    """``:---`` is the start of the cell as it was typed: a class the page's CSS aligns with
    ``text-align: start`` (right in an Arabic table), never markdown-it's ``text-align:left``
    style, which stays left there; streamed or not, and no ``style`` attribute at all."""
    src = "| الاسم | القيمة | الوصف | عمود |\n|:---|---:|:-:|---|\n| أ | ١ | ب | ج |\n"
    for html in (render(src), _streamed(src)):
        assert "style=" not in html
        cells = re.findall(r"<(?:th|td)( class=\"[^\"]*\")?>", html)
        assert (
            cells == [' class="align-start"', ' class="align-end"', ' class="align-center"', ""] * 2
        )
    css = (Path(__file__).parent.parent / "web" / "style.css").read_text()
    for cls, align in (("start", "start"), ("end", "end"), ("center", "center")):
        assert re.search(rf":is\(th, td\)\.align-{cls} \{{ text-align: {align}; \}}", css), cls
