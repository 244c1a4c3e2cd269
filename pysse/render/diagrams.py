"""Which code fences are diagrams, and which are too big to draw (issue #44).

A closed fence whose language is ``mermaid`` is marked for the page's view to draw
(``data-diagram="mermaid"`` on its code block: ``markdown.py``); the view draws it with the
vendored Mermaid library (``web/diagrams.js``), after the answer finished streaming, as an
``<img>`` of the SVG. Until then, and if drawing fails, it is an ordinary code block.

Drawing is bounded here, in Python, before any of it reaches the main thread: a source over
``MAX_CHARS`` characters, over ``MAX_LINES`` lines or with more than ``MAX_EDGES`` arrows
(Mermaid's layout grows faster than its input) stays a code block with a note saying why
(``refusal``). Mermaid applies its own limits too (``maxTextSize``, ``maxEdges``: the same
numbers, set by ``web/diagrams.js``).
"""

from __future__ import annotations

import re

__all__ = ["DIAGRAM_LANGS", "MAX_CHARS", "MAX_EDGES", "MAX_LINES", "diagram_kind", "refusal"]

DIAGRAM_LANGS = frozenset({"mermaid"})
MAX_CHARS = 50_000  # Mermaid's own default maxTextSize
MAX_LINES = 2_000
MAX_EDGES = 500  # Mermaid's own default maxEdges

# A link between two nodes, in the shapes Mermaid's grammars write them: flowchart arrows and
# lines (-->, ---, -.->, ==>, ~~~, --x, --o), sequence messages (->>, -->>, -x, -)), class
# and state relations (<|--, *--, o--, ..>).
_EDGE = re.compile(r"<?[-=.~]{2,}[>xo|)*]?|<\|--|[*o]--|\.\.>|->>?|--\)")


def diagram_kind(info: str) -> str | None:
    """The diagram language of a fence's info string (its first word, any case), or None."""
    words = info.strip().split(maxsplit=1)
    word = words[0].lower() if words else ""
    return word if word in DIAGRAM_LANGS else None


def refusal(source: str) -> str | None:
    """Why ``source`` is not drawn (a sentence for the reader), or None to draw it."""
    if len(source) > MAX_CHARS:
        return f"its source has {len(source):,} characters (at most {MAX_CHARS:,} are drawn)."
    lines = source.count("\n") + 1
    if lines > MAX_LINES:
        return f"its source has {lines:,} lines (at most {MAX_LINES:,} are drawn)."
    edges = len(_EDGE.findall(source))
    if edges > MAX_EDGES:
        return f"it has about {edges:,} links (at most {MAX_EDGES:,} are drawn)."
    return None
