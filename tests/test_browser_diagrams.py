"""Mermaid diagrams in Chromium (issue #44): a closed ```mermaid fence is a code block while
the answer streams and an image of its SVG once it ended; a broken one keeps its source and
says why; Copy source, Download SVG and Show source by mouse; the theme switch draws it
again; a restored chat draws it when it scrolls into view; a visit without diagrams never
fetches Mermaid. In both page modes (the worker's, ``?thread=main``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pysse.server.demo import DIAGRAM_ANSWER
from pysse.testing import Script

pytestmark = pytest.mark.browser

DRAWN = "[data-diagram][data-drawn=light] figure.diagram img"
# what the page fetched for diagrams: the module, and Mermaid itself
FETCHED = "u => u.includes('diagrams.js') || u.includes('mermaid')"

# Records, on every change of the log while an answer streams, whether a diagram block was
# shown and whether any was drawn (it must not be, until the answer ended).
WATCH_STREAMING = """() => {
  window.__diagramWhileStreaming = { block: false, drawn: false, pre: true };
  new MutationObserver(() => {
    if (document.body.dataset.streaming !== "1") return;
    const w = window.__diagramWhileStreaming;
    const block = document.querySelector("[data-diagram]");
    if (block) {
      w.block = true;
      w.pre = w.pre && !!block.querySelector(":scope > pre:not([hidden])");
    }
    if (document.querySelector("figure.diagram")) w.drawn = true;
  }).observe(document.body, { subtree: true, childList: true, attributes: true });
}"""

# (the page's CSP lets no fetch read a blob: URL: the view's drawer keeps what it showed)
SVG_OF = "img => pysse.view.drawer.svgOf(img.closest('[data-diagram]'))"
# an SVG's text (Mermaid writes a label's words in separate <tspan>s)
TEXT_OF = "svg => new DOMParser().parseFromString(svg, 'image/svg+xml').documentElement.textContent"


def mermaid_fetched(p: Any) -> list[str]:
    return [u for u in p.requests if "mermaid" in u]


@pytest.mark.parametrize("thread", ["worker", "main"])
def test_a_diagram_is_code_while_streaming_then_an_image_and_a_broken_one_says_why(
    make_page: Any, thread: str
) -> None:
    p = make_page(thread=thread, settings={"headers": "X-Demo-Pace: 0.3"})
    page = p.open()
    page.evaluate(WATCH_STREAMING)
    p.send("/demo diagram")
    msg = p.wait_done()
    assert msg.get_attribute("data-text") == DIAGRAM_ANSWER
    seen = page.evaluate("window.__diagramWhileStreaming")
    assert seen == {"block": True, "drawn": False, "pre": True}  # a code block, never drawn
    img = page.wait_for_selector(DRAWN, state="attached", timeout=60_000)
    svg = img.evaluate(SVG_OF)
    assert svg.startswith("<svg") and img.evaluate("i => i.src").startswith("blob:")
    text = page.evaluate(TEXT_OF, svg)
    for label in ("Chat page", "Relay", "Model", "POST", "SSE"):
        assert label in text, label
    assert "<script" not in svg and "foreignObject" not in svg and "javascript:" not in svg
    assert img.get_attribute("alt") == (
        "Diagram: The path of a message. The browser sends to the relay, which asks the model "
        "and streams its answer back."
    )
    assert img.evaluate("i => i.naturalWidth > 100 && i.complete")  # it loaded and has a size
    first, broken = msg.query_selector_all("[data-diagram]")
    assert first.query_selector(":scope > pre").is_hidden()
    # the broken one: its source stays, and why it is not drawn
    page.wait_for_selector("[data-diagram][data-drawn=failed]", timeout=30_000)
    assert broken.query_selector("figure") is None
    assert broken.query_selector(":scope > pre").is_visible()
    assert "A[Start] --> B{Decide" in broken.query_selector("pre").inner_text()
    error = broken.query_selector(".diagram-error").inner_text()
    assert error.startswith("Not drawn: ") and len(error) > 20, error
    assert mermaid_fetched(p) and page.evaluate("pysse.view.stats.diagrams.renders.length") == 1


def test_copy_source_download_svg_show_source_and_the_theme(make_page: Any) -> None:
    p = make_page(permissions=["clipboard-read", "clipboard-write"])
    page = p.open()
    p.send("/demo diagram")
    msg = p.wait_done()
    img = page.wait_for_selector(DRAWN, state="attached", timeout=60_000)
    block = msg.query_selector("[data-diagram]")
    source = block.query_selector("pre").text_content()
    assert source.startswith("flowchart LR\n")
    block.query_selector("button.copy").click()
    page.wait_for_function("async () => (await navigator.clipboard.readText()).length > 0")
    assert page.evaluate("navigator.clipboard.readText()") == source
    with page.expect_download() as dl:
        block.query_selector("button.svg").click()
    assert dl.value.suggested_filename == "diagram.svg"
    saved = Path(dl.value.path()).read_text(encoding="utf-8")
    assert saved.startswith("<svg") and saved == img.evaluate(SVG_OF)
    assert "Chat page" in page.evaluate(TEXT_OF, saved)
    toggle = block.query_selector("button.source")
    assert toggle.get_attribute("aria-expanded") == "false"
    toggle.click()
    assert block.query_selector(":scope > pre").is_visible()
    assert toggle.get_attribute("aria-expanded") == "true" and toggle.inner_text() == "Hide source"
    toggle.click()
    assert block.query_selector(":scope > pre").is_hidden()
    # the theme: drawn again in the dark one
    light = saved
    p.click("[data-role=theme]")  # system -> light? the button cycles: click until dark
    for _ in range(3):
        if page.evaluate("document.documentElement.dataset.theme") == "dark":
            break
        p.click("[data-role=theme]")
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    dark_img = page.wait_for_selector(
        "[data-diagram][data-drawn=dark] figure.diagram img", state="attached", timeout=30_000
    )
    dark = dark_img.evaluate(SVG_OF)
    assert dark != light and "Chat page" in page.evaluate(TEXT_OF, dark)
    assert len(block.query_selector_all("figure.diagram img")) == 1


def test_a_restored_diagram_is_drawn_when_it_scrolls_into_view(make_page: Any) -> None:
    p = make_page()
    page = p.open()
    p.send("/demo diagram")
    p.wait_done()
    page.wait_for_selector(DRAWN, state="attached", timeout=60_000)
    p.send("/demo long")  # ~30 KB after it: the diagram is far above the view
    p.wait_done()
    p.requests.clear()
    page = p.reload()
    p.wait_done()
    page.wait_for_timeout(500)  # (idle time in which a visible diagram would be drawn)
    assert page.evaluate("document.querySelectorAll('[data-drawn]').length") == 0
    assert mermaid_fetched(p) == []  # not before it is seen
    page.evaluate(
        """() => { const log = document.querySelector('[data-role=log]');
                   const go = () => { log.scrollTop = 0; };
                   go(); setTimeout(go, 200); setTimeout(go, 600); }"""
    )
    img = page.wait_for_selector(DRAWN, state="attached", timeout=60_000)
    assert "Chat page" in page.evaluate(TEXT_OF, img.evaluate(SVG_OF))
    assert mermaid_fetched(p)


def test_a_visit_without_diagrams_fetches_no_diagram_code(make_page: Any) -> None:
    p = make_page()
    page = p.open()
    p.send("/demo")
    p.wait_done()
    p.send("/demo code")
    p.wait_done()
    page.wait_for_timeout(300)
    assert [u for u in p.requests if page.evaluate(FETCHED, u)] == []


HOSTILE = """A hostile diagram:

```mermaid
%%{init: {"securityLevel": "loose", "flowchart": {"htmlLabels": true}}}%%
flowchart LR
  A["<img src=x onerror=window.__pwned=1>"] --> B["<script>window.__pwned=2</script>"]
  click A href "javascript:window.__pwned=3"
  click B "https://evil.invalid/click"
```
"""


def test_a_hostile_diagram_runs_and_loads_nothing(make_page: Any, sse_server: Any) -> None:
    sse_server.play(Script.answer(HOSTILE).chunked(9))
    p = make_page(settings={"relay": sse_server.url, "format": "openai-chat"})
    page = p.open()
    p.send("draw")
    p.wait_done()
    img = page.wait_for_selector(DRAWN, state="attached", timeout=60_000)
    page.wait_for_function("() => document.querySelector('figure.diagram img').complete")
    svg = img.evaluate(SVG_OF)
    assert "javascript:" not in svg and "<script" not in svg and "onerror=" not in svg
    assert "evil.invalid/click" not in svg  # (a link: only "#..." survive)
    assert "foreignObject" not in svg  # (the directive's htmlLabels and loose mode: ignored)
    page.wait_for_timeout(300)
    assert page.evaluate("window.__pwned") is None
    foreign = [
        u for u in p.requests if not u.startswith((p.base, sse_server.url, "data:", "blob:"))
    ]
    assert foreign == []
