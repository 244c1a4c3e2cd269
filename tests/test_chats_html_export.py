"""A chat exported as a web page (``pysse.chats.html_export``): self-contained, inert (no
script, a CSP that allows only its inline styles), the answers rendered and sanitized as the
page renders them, without the page's buttons."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from pysse.chats.conversation import Conversation
from pysse.chats.html_export import CSP, export_html
from pysse.render import render
from pysse.server.demo import RICH_ANSWER, XSS_ANSWER


def chat(*answers: str) -> Conversation:
    c = Conversation("c1", title="Tables <and> code")
    for i, text in enumerate(answers):
        u = c.add_user(f"question {i} <b>not bold</b>")
        a = c.start_answer(u.id)
        c.finish(a.id, text, "completed" if i == 0 else "truncated")
    return c


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [(k, v or "") for k, v in attrs]


def parsed(page: str) -> Tags:
    t = Tags()
    t.feed(page)
    return t


def test_a_chat_as_a_self_contained_inert_page() -> None:
    page = export_html(chat(RICH_ANSWER, XSS_ANSWER), ".msg { color: red }", render)
    tags = parsed(page)
    assert page.startswith("<!doctype html>")
    assert f'content="{CSP}"' in page and "default-src 'none'" in CSP
    assert "script" not in tags.tags and "iframe" not in tags.tags and "link" not in tags.tags
    assert not [a for a in tags.attrs if a[0].startswith("on")]
    assert not [v for k, v in tags.attrs if k in ("href", "src") and not v.startswith("http")]
    assert ".msg { color: red }" in page and "@media print" in page
    assert "<title>Tables &lt;and&gt; code</title>" in page
    assert "question 0 &lt;b&gt;not bold&lt;/b&gt;" in page  # the user's text, as written
    assert "Assistant (truncated)" in page
    assert "<table" in page and "<th>Provider</th>" in page and 'class="codeblock"' in page
    assert "<button" not in page  # (a table's and a code block's tools: nothing runs them)
    assert page.count('<article class="msg') == 4


def test_the_styles_cannot_end_their_element() -> None:
    page = export_html(chat("hi"), "a{}</style><script>alert(1)</script>", render)
    assert re.findall(r"(?i)</style", page) == ["</style"]
    assert "script" not in parsed(page).tags
