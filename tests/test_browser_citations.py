"""Sources (issue #43), in Chromium: ``/demo cite`` (OpenAI Responses, its ``url_citation``
annotations) shows a numbered list of the answer's sources under it: each an http(s) link
with the title as text and its host beside it, the ``javascript:`` source never a link (the
view would refuse the op and the test fail); the list is stored and back after a reload.
Numbered marks follow the words each source backs, in the text (never in code), also after
the reload."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import stored_answers, wait_stored
from pysse.server.demo import CITATIONS, CITE_ANSWER

pytestmark = pytest.mark.browser

SOURCES = """() => { const a = [...document.querySelectorAll('[data-role=assistant]')].at(-1);
  const s = a.querySelector('[data-role=sources]');
  return {hidden: s.hidden, title: s.querySelector('h3').textContent,
          answer: a.dataset.text, bold: s.querySelectorAll('b').length,
          model: a.querySelector('[data-role=model]').hidden ? null : a.querySelector('[data-role=model]').textContent,
          js: document.querySelectorAll('a[href^="javascript"], [href*="alert("]').length,
          items: [...s.querySelectorAll('ol > li')].map(li => {
            const link = li.querySelector('a');
            return {href: link.getAttribute('href'), text: link.textContent, rel: link.rel,
                    target: link.target, host: li.querySelector('.source-host').textContent};
          })}; }"""

# Each mark: the words before it (the paragraph's text up to it), its links' text, href, label.
MARKS = """() => { const a = [...document.querySelectorAll('[data-role=assistant]')].at(-1);
  return [...a.querySelectorAll('.settled .cite-mark')].map(m => {
    const r = document.createRange();
    r.setStart(m.closest('p'), 0); r.setEndBefore(m);
    return {before: r.toString().slice(-12), in_code: !!m.closest('code, pre'),
            links: [...m.querySelectorAll('a')].map(l => [l.textContent, l.getAttribute('href'),
                    l.getAttribute('aria-label'), l.rel])}; }); }"""

WANT_MARKS = [
    {
        "before": "r plain HTTP",
        "in_code": False,
        "links": [
            [
                "1",
                "https://example.org/sse",
                "Source 1: Server-sent events (example.org)",
                "noopener noreferrer nofollow",
            ]
        ],
    },
    {
        "before": "s each delta",
        "in_code": False,
        "links": [
            [
                "2",
                "https://docs.example.com/chat?lang=en",
                "Source 2: Streaming <b>chat</b> (docs.example.com)",
                "noopener noreferrer nofollow",
            ]
        ],
    },
    {
        "before": "nt-ID header",
        "in_code": False,
        "links": [
            [
                "3",
                "http://example.net/reconnect",
                "Source 3: Reconnecting (example.net)",
                "noopener noreferrer nofollow",
            ]
        ],
    },
]


def test_demo_cite_lists_its_http_sources_and_keeps_them_through_a_reload(
    make_page: Any,
) -> None:
    p = make_page(settings={"format": "openai-responses"})
    page = p.open()
    page.fill("[data-role=prompt]", "/demo cite")
    box = page.locator("[data-role=send]").bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    p.wait_done()
    want = [
        {
            "href": c.url,
            "text": c.title,
            "rel": "noopener noreferrer nofollow",
            "target": "_blank",
            "host": host,
        }
        for c, host in zip(
            CITATIONS[:3], ["example.org", "docs.example.com", "example.net"], strict=True
        )
    ]
    live = page.evaluate(SOURCES)
    assert live["answer"] == CITE_ANSWER
    assert live["hidden"] is False and live["title"] == "Sources"
    assert live["items"] == want  # the title "Streaming <b>chat</b>" as text, never HTML
    assert live["bold"] == 0 and live["js"] == 0
    assert live["model"] == "demo"  # the model the stream says wrote it (response.model)
    assert page.evaluate(MARKS) == WANT_MARKS  # (the javascript: one: no mark)
    stored = wait_stored(
        page,
        lambda s: (
            len(stored_answers(s)) == 1
            and stored_answers(s)[0].get("state") == "completed"
            and len(stored_answers(s)[0].get("citations") or []) == 3
        ),
    )
    assert stored_answers(stored)[0]["model"] == "demo"
    assert [c["url"] for c in stored_answers(stored)[0]["citations"]] == [w["href"] for w in want]

    page = p.reload()
    page.wait_for_function("() => document.querySelectorAll('[data-role=assistant]').length == 1")
    page.wait_for_function(
        "() => document.querySelectorAll('[data-role=sources] ol > li').length == 3"
    )
    page.wait_for_function("() => document.querySelectorAll('.cite-mark').length == 3")
    assert page.evaluate(MARKS) == WANT_MARKS
    again = page.evaluate(SOURCES)
    assert again["items"] == want and again["hidden"] is False
    assert again["bold"] == 0 and again["js"] == 0
    assert again["model"] == "demo"
