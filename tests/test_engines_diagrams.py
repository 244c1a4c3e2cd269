"""A Mermaid diagram drawn in Chromium, Firefox and WebKit (issue #44): once the answer ended,
its closed fence is an image of its SVG with the diagram's labels, and the broken one keeps
its source and says why. (Everything else about diagrams: ``tests/test_browser_diagrams.py``.)
"""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.browser

# The drawn diagram's image (loaded, with a size), its SVG's text and its alt; the broken
# one's note; or null until both are there.
DRAWN = """() => {
  const [first, broken] = document.querySelectorAll('[data-role=assistant] [data-diagram]');
  const img = first && first.querySelector('figure.diagram img');
  const note = broken && broken.querySelector('.diagram-error');
  if (!img || !img.complete || !img.naturalWidth || !note) return null;
  const svg = pysse.view.drawer.svgOf(first);
  return { text: new DOMParser().parseFromString(svg, 'image/svg+xml').documentElement.textContent,
    alt: img.alt, src: img.src.slice(0, 5), note: note.textContent,
    source: broken.querySelector(":scope > pre").getClientRects().length > 0,
    hidden: first.querySelector(':scope > pre').hidden };
}"""


def test_a_diagram_is_drawn_and_a_broken_one_shows_its_source(open_chat: Any) -> None:
    chat = open_chat()
    chat.send("/demo diagram")
    chat.wait_done()
    got = chat.page.wait_for(DRAWN, timeout=90)
    for label in ("Chat page", "Relay", "Model", "POST", "SSE"):
        assert label in got["text"], (chat.engine, label)
    assert got["alt"].startswith("Diagram: The path of a message.")
    assert got["src"] == "blob:" and got["hidden"] is True
    assert got["note"].startswith("Not drawn: ") and got["source"] is True
