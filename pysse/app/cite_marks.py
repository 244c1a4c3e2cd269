"""Where an answer's numbered source marks go: ``[1]`` after the words a source backs.

The marks are placed in the rendered answer, after it is final, never in its markdown: a mark
written into the text would change what the renderer settles (a ``[1]`` beside a link is
link syntax) and what Copy gives. So this module says, for each cited span, which words end
it (a *needle*: plain words, free of markdown syntax, as they read on screen), and the view
(``web/view.js``, the ``cite`` op) finds them in the answer's text nodes, in order, and puts
the mark after them. A span it cannot find (its words were all syntax, or a link's URL) gets
no mark; its source is still in the list under the answer.

A span is known from the citation: its ``text`` when the answer contains it (Gemini's
segment text, the demo's), else ``start``/``end`` when they are character offsets into the
answer (OpenAI's annotations). Anthropic's ``cited_text`` is the source's words, not the
answer's: such a citation gets a mark only if the answer quotes it.

Pure: the page's Python (``turn.py``, ``restore.py``) sends what ``marks`` returns.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ..events import Citation, sources

__all__ = ["MAX_MARKS", "marks", "needles"]

MAX_MARKS = 200  # an answer's marks at most (a hostile stream's 1,000 citations: 200 marks)
NEEDLE_CHARS = 40  # a needle's length at most: enough to be found once, short to search
CANDIDATES = 3  # needles tried per span, last words first

# What markdown turns into something other than the same characters on screen.
_SYNTAX = re.compile(r"[*_`\[\]()#>|\\~<$\n]+")
_SPACES = re.compile(r"\s+")


def needles(span: str) -> list[str]:
    """Up to ``CANDIDATES`` runs of plain words that end ``span``, the last first: each
    without markdown syntax, with its spaces as single spaces, at least three characters,
    cut to its last ``NEEDLE_CHARS`` at a space when one is near."""
    out: list[str] = []
    for piece in reversed(_SYNTAX.split(span)):
        words = _SPACES.sub(" ", piece).strip()
        if len(words) < 3:
            continue
        if len(words) > NEEDLE_CHARS:
            words = words[-NEEDLE_CHARS:]
            cut = words.find(" ")
            if 0 <= cut < NEEDLE_CHARS // 2:
                words = words[cut + 1 :]
        if words not in out:
            out.append(words)
        if len(out) == CANDIDATES:
            break
    return out


def _span(text: str, c: Citation) -> tuple[int, str] | None:
    """Where ``c``'s span ends in ``text``, and the span; None if unknown."""
    if c.text:
        at = text.find(c.text, max(0, c.start or 0))
        if at < 0:
            at = text.find(c.text)
        if at >= 0:
            return at + len(c.text), c.text
    if c.start is not None and c.end is not None and 0 <= c.start < c.end <= len(text):
        return c.end, text[c.start : c.end]
    return None


def _label(n: int, c: Citation) -> str:
    title = " ".join(c.title.split())[:200] or c.host
    return f"Source {n}: {title} ({c.host})" if title != c.host else f"Source {n}: {c.host}"


def marks(text: str, citations: Iterable[Citation]) -> list[list[Any]]:
    """The ``cite`` op's marks for an answer ``text``: ``[needles, [[n, url, label], ...]]``
    in the order their spans end, sources numbered as the list under the answer numbers
    them (``sources``), one entry per span end, at most ``MAX_MARKS``."""
    citations = tuple(citations)
    listed = sources(citations)
    number = {c.url.strip(): (i + 1, c) for i, c in enumerate(listed)}
    found: dict[tuple[int, tuple[str, ...]], list[list[Any]]] = {}
    for c in citations:
        entry = number.get(c.url.strip())
        if entry is None:
            continue
        span = _span(text, c)
        if span is None:
            continue
        end, words = span
        tried = needles(words)
        if not tried:
            continue
        key = (end, tuple(tried))
        if key not in found and len(found) >= MAX_MARKS:
            continue
        n, first = entry
        refs = found.setdefault(key, [])
        if all(r[0] != n for r in refs):
            refs.append([n, first.url.strip(), _label(n, first)])
    ordered = sorted(found.items(), key=lambda item: item[0][0])
    return [[list(key[1]), sorted(refs)] for key, refs in ordered]
