"""Math in Chromium: formulas render as MathML, money stays text, task lists show disabled
checkboxes, and hostile LaTeX runs nothing and loads nothing."""

from __future__ import annotations

from typing import Any

import pytest

from pysse.render import render
from pysse.server.demo import MATH_ANSWER
from pysse.testing import Script

pytestmark = pytest.mark.browser

HOSTILE = (
    "Look: $\\text{<img src=x onerror=window.__pwned=1>}$ and "
    "$\\href{javascript:window.__pwned=2}{click}$ and $\\style{position:fixed}{x}$\n\n"
    "$$\n\\text{<script>window.__pwned=3</script>}\\mathrm{</math><img src=https://evil.invalid/p>}\n$$\n"
)


def test_math_renders_as_mathml_and_money_stays_text(make_page: Any) -> None:
    p = make_page()
    page = p.open()
    p.send("/demo math")
    msg = p.wait_done()
    assert msg.get_attribute("data-text") == MATH_ANSWER
    assert len(msg.query_selector_all("math")) == 6
    assert (
        page.evaluate("document.querySelector('math').namespaceURI")
        == "http://www.w3.org/1998/Math/MathML"
    )
    text = msg.inner_text()
    assert "it costs $5 and $10, or $750 in total" in text
    assert "\\frac" not in text.replace(
        msg.eval_on_selector_all("annotation", "els => els.map(e => e.textContent).join('')"), ""
    )
    boxes = msg.query_selector_all("input[type=checkbox]")
    assert len(boxes) == 2 and all(b.is_disabled() for b in boxes)
    assert msg.query_selector("input[type=checkbox]").is_checked()
    # streamed answer = the one-shot render, math and all
    shown = msg.evaluate(
        "m => m.querySelector('.settled').innerHTML + m.querySelector('.tail').innerHTML"
    )
    want = page.evaluate(
        "(h) => { const d = document.createElement('div'); d.innerHTML = h; return d.innerHTML; }",
        render(MATH_ANSWER),
    )
    assert shown == want


def test_hostile_latex_runs_and_loads_nothing(make_page: Any, sse_server: Any) -> None:
    sse_server.play(Script.answer(HOSTILE).chunked(7))
    p = make_page(settings={"relay": sse_server.url, "format": "openai-chat"})
    page = p.open()
    p.send("math please")
    msg = p.wait_done()
    assert msg.get_attribute("data-state") == "completed"
    # (a handler could only run later from an element that loads or fails: there is none,
    # checked below, so the short wait is not what this relies on)
    page.wait_for_timeout(300)
    assert page.evaluate("window.__pwned") is None
    assert msg.query_selector_all("script, img, a, iframe, style") == []
    attrs = msg.eval_on_selector_all(
        "math *", "els => els.flatMap(e => [...e.attributes].map(a => a.name))"
    )
    assert not {"href", "style", "class", "src"} & set(attrs)
    foreign = [u for u in p.requests if not u.startswith((p.base, sse_server.url, "data:"))]
    assert foreign == []
