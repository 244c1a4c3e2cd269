"""A long paragraph, settled a piece at a time, so one endless line costs the same per frame
as a short one.

A paragraph's inline content can be cut at a position ``p`` when rendering ``text[:p]`` alone
gives exactly what it gives inside the whole paragraph, however the paragraph continues:

* ``p`` follows a space or line feed and starts a non-space (and splits no grapheme cluster:
  ``graphemes.py``, so a mark after a space stays with it): emphasis flanking sees
  whitespace on both sides of the cut, as it would at the start or end of a paragraph; no
  line feed's leading-space skipping or hard break is split;
* or ``p`` is between two CJK characters (``cjk.py``; Chinese and Japanese put no space
  between words, and a long answer in them would otherwise only ever be cut provisionally):
  neither is markup, so no delimiter run touches the cut and each run sees the same two
  neighbours in the piece as in the whole;
* no construct spans the cut: a code span, link or image, an emphasis or strikethrough pair
  (markdown-it's own parse of the text says where they are, ``observe.InlineFacts``);
* nothing before the cut may still be closed later: a backtick run without its closing run,
  a ``[`` without its ``]`` (or whose ``](`` might still complete), an emphasis opener that
  found no closer. Text after such a point waits (still rendered, as the tail).

If such a point holds back more than ``PROVISIONAL`` characters' worth of parsing (a stray
``[`` in a huge paragraph; :func:`weight`), the paragraph is cut *provisionally* from then
on, as if the open construct stays open (at a space, or in text without one anywhere outside
a construct); when the paragraph ends it is rendered whole once, and replaced if that
differs.

Everything before the cut is rendered once and appended into the paragraph's ``<p>``. The
block around it (is this still one paragraph? did a ``===`` line make it a heading?) is
``blocks/paragraphs.py``'s business: it parses from the line of the cut with a stand-in for the part
already settled (:meth:`Paragraph.stand_in`).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_core.state_core import StateCore
from markdown_it.rules_inline.state_inline import StateInline
from markdown_it.token import Token

from .budget import prefix_within
from .cjk import is_cjk
from .graphemes import boundary
from .observe import INLINE_KEY, InlineFacts

__all__ = [
    "CHUNK_COST",
    "MIN_CHUNK",
    "MIN_PARAGRAPH",
    "PROVISIONAL",
    "Paragraph",
    "can_cut",
    "chunk",
    "find_cut",
    "find_cuts",
    "weight",
]

MIN_PARAGRAPH = 1024  # a paragraph is opened (and cut) once its content weighs this much
MIN_CHUNK = 256  # never settle a piece shorter than this ...
CHUNK_COST = 4000  # ... unless it costs this much already (budget.cost: a run of brackets)
PROVISIONAL = 2048  # unsettled text this heavy that cannot be cut: cut it provisionally

# markdown-it's inline parser stops at each of these and tries every rule there: one costs
# 50-300 plain characters (1.5-9 µs against 0.03 µs in CPython; "[" the most).
_RULE_CHARS = "!#$%&*+-:<=>@[\\]^_`{}~"
RULE_CHAR_WEIGHT = 64


def weight(text: str) -> int:
    """What parsing ``text`` costs, in plain characters: a paragraph made of brackets or
    emphasis markers is opened and cut as soon as one of words costing as much would be."""
    return len(text) + RULE_CHAR_WEIGHT * sum(map(text.count, _RULE_CHARS))


class Paragraph:
    """Where the unsettled part of an open paragraph starts: line ``cut_line`` (absolute)
    from column ``col``. ``prefix`` is the paragraph's first line up to its content (its
    container markers); ``cont`` the same with list markers blanked, for later lines."""

    def __init__(self, first_line: int, prefix: str) -> None:
        self.first_line = first_line
        self.prefix = prefix
        self.cont = "".join(c if c == ">" or c.isspace() else " " for c in prefix)
        self.cut_line = first_line
        self.col = len(prefix)
        self.settled = 0  # content characters settled so far
        # Cut without waiting for an open construct to close (it may never): the pieces may
        # then differ from a one-shot render, so the paragraph is rendered whole once more
        # when it ends, and replaced if it does differ.
        self.provisional = False

    def stand_in(self, line: str) -> str:
        """The cut line as a partial parse sees it: the paragraph's container prefix, a
        stand-in ``x`` for everything settled, and the line's unsettled rest."""
        prefix = self.prefix if self.cut_line == self.first_line else self.cont
        return prefix + "x " + line[self.col :]

    def advance(self, content: str, p: int, raw: list[str], complete: int) -> bool:
        """Record a cut at content position ``p`` (``content`` is the unsettled text as the
        stand-in parse gave it, ``raw`` the real lines from the cut line on, the first
        ``complete`` of them complete). False if the cut cannot be made: it would be on a later
        line that is not complete (what hold-back shows of it may still start a block once
        it is complete: ``* <b`` is shown as ``* ``, a paragraph's text, until the list item
        it is becomes clear), or it cannot be mapped back onto the real lines."""
        head = content[:p]
        j = head.count("\n")
        if j == 0:
            self.col += p
        else:
            if j >= min(len(raw), complete):
                return False
            shown = content.split("\n", j + 1)[j]
            if shown.strip(" \t") != raw[j].lstrip(" \t>").rstrip(" \t"):
                # The parse saw this line otherwise than it is (hold-back showed ``* \`` as
                # ``*``): its block is not known from it, and a cut on it would make it the
                # paragraph's for good (found by the markdown fuzzer: a list after a
                # paragraph was lost).
                return False
            col = _column(raw[j], head.rsplit("\n", 1)[1], content[p:])
            if col < 0:
                return False
            self.cut_line += j
            self.col = col
        self.settled += p
        return True


def _column(line: str, before: str, after: str) -> int:
    """Where a cut falls in the raw ``line``, given the content line's text ``before`` the
    cut and the content from the cut on (``after``). The content line is the raw line less
    its container prefix (``>`` markers, indentation), and what precedes the cut is as it
    came, while what follows may have been changed by hold-back (a ``[`` it hid would make
    a match from the end land one character late): so the one prefix of spaces and ``>``
    after which the line starts with ``before``. -1 if there is not exactly one."""
    lead = len(line) - len(line.lstrip(" \t>"))
    if not before.strip(" \t"):  # where the content line's text starts: its first character
        # (only spaces before it: a continuation line's extra indentation, which matches at
        # every column of the prefix and made the cut impossible, so never cut at all)
        first = after[:1]
        return lead if first and first not in " \t>" and line.startswith(first, lead) else -1
    starts = [k for k in range(lead + 1) if line.startswith(before, k)]
    return starts[0] + len(before) if len(starts) == 1 else -1


def chunk(text: str, start: int = 0, backwards: bool = False) -> int:
    """How many characters from ``start`` (or, ``backwards``, before the end) make the
    smallest piece worth settling on its own: ``MIN_CHUNK``, or fewer if they already cost
    ``CHUNK_COST`` (``budget.cost``): a piece of brackets is as slow to parse as a hundred
    times as much prose, and a piece's size is what each update re-parses of the tail."""
    if backwards:
        window = text[max(0, len(text) - MIN_CHUNK) :][::-1]
        return min(MIN_CHUNK, prefix_within(window, CHUNK_COST) + 1)
    return min(MIN_CHUNK, prefix_within(text, CHUNK_COST, start) + 1 - start)


def can_cut(md: MarkdownIt) -> bool:
    """Cutting paragraphs is exact only without the options that rewrite text across the
    whole paragraph (typographer's quote pairing, linkify)."""
    return not md.options.get("typographer") and not md.options.get("linkify")


def find_cut(
    md: MarkdownIt, env: dict[str, Any], text: str, limit: int, provisional: bool = False
) -> int:
    """The largest position ``p`` in ``[chunk(text), limit]`` where ``text`` can be cut (see
    the module docstring), or 0. ``provisional``: ignore what may still be closed later."""
    return find_cuts(md, env, text, limit, provisional)[1 if provisional else 0]


def find_cuts(
    md: MarkdownIt, env: dict[str, Any], text: str, limit: int, provisional: bool = True
) -> tuple[int, int]:
    """``find_cut``'s exact and (if ``provisional``) provisional cut, from one inline parse."""
    lo = chunk(text)
    if limit < lo:
        return 0, 0
    facts = InlineFacts()
    state = StateInline(text, md, {**env, INLINE_KEY: facts}, [])
    md.inline.tokenize(state)
    for rule in md.inline.ruler2.getRules(""):
        rule(state)
    bound = min([limit, *facts.open_runs])
    spans = list(facts.spans)
    for i, d in enumerate(state.delimiters):
        at = facts.delims.get(i)
        if at is None:
            continue
        if d.open and d.end < 0:
            bound = min(bound, at)
        elif d.end >= 0 and d.end in facts.delims:
            spans.append((at, facts.delims[d.end] + 1))
    covered = _merge(spans)
    exact = _at_space(text, covered, bound, lo)
    if not provisional:
        return exact, 0
    return exact, _at_space(text, covered, limit, lo) or _anywhere(text, covered, limit, lo)


def _last_break(text: str, hi: int) -> int:
    """The last ``k < hi`` after which ``_at_space`` may cut: a space or line feed, or a CJK
    character followed by another (-1 if none). Searched back from ``hi`` a window at a time,
    at C speed where there is no CJK: as far as ``rfind`` would go, no further."""
    best = max(text.rfind(" ", 0, hi), text.rfind("\n", 0, hi))
    end = min(hi + 1, len(text))
    while end - 1 > best + 1:
        start = max(best + 1, end - _WINDOW)
        found = -1
        for m in _HIGH_PAIR.finditer(text, start, end):
            for k in range(m.end() - 2, m.start() - 1, -1):
                if is_cjk(text[k]) and is_cjk(text[k + 1]):
                    found = k
                    break
        if found >= 0:
            return found
        end = start + 1  # (a pair across the window's edge is in the next one)
    return best


def _at_space(text: str, covered: list[tuple[int, int]], bound: int, lo: int) -> int:
    """The last cut in ``[lo, bound]`` after a space or line feed or between two CJK
    characters, outside every span, or 0."""
    hi = bound
    while hi >= lo:
        ws = _last_break(text, hi)
        cut = ws + 1
        if cut < lo:
            break
        if cut < len(text) and text[cut] not in _SPACE and boundary(text, cut):
            span = _inside(covered, cut)
            if span is None:
                return cut
            hi = span + 1  # a cut at or before that span's start
        else:
            hi = ws
    return 0


def _anywhere(text: str, covered: list[tuple[int, int]], bound: int, lo: int) -> int:
    """A provisional cut in text without a usable space (a run of brackets, a base64 blob):
    the last position up to ``bound`` outside every span, preferring, within ``MIN_CHUNK``
    of it, one between two characters that start nothing (not markdown punctuation, an
    entity or an escape), where the pieces render as the whole does. Otherwise the paragraph
    is re-rendered whole when it ends, like any provisional cut."""
    cut = min(bound, len(text) - 1)
    fallback = 0
    while cut >= lo:
        span = _inside(covered, cut)
        if span is not None:
            cut = span  # a cut at a span's start is outside it
            continue
        if text[cut - 1] not in _ACTIVE and text[cut] not in _ACTIVE and boundary(text, cut):
            return cut
        fallback = fallback or cut
        if cut <= fallback - MIN_CHUNK:
            break
        cut -= 1
    return fallback


_SPACE = " \t\n"
_HIGH_PAIR = re.compile("[^\x00-\u10ff]{2,}")  # two or more characters that may be CJK
_WINDOW = 256
_ACTIVE = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ \t\n")  # ASCII punctuation, spaces


def render_inline(
    md: MarkdownIt, env: dict[str, Any], text: str, core: list[Callable[[StateCore], None]]
) -> str:
    """``text`` as a paragraph's inline HTML (the core rules after block parsing applied)."""
    tok = Token("inline", "", 0)
    tok.content = text
    tok.children = []
    state = StateCore("", md, env)
    state.tokens = [tok]
    for rule in core:
        rule(state)
    renderer: Any = md.renderer
    return str(renderer.renderInline(tok.children, md.options, env))


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if out and s < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _inside(covered: list[tuple[int, int]], p: int) -> int | None:
    """The start of the span that strictly contains ``p``, if any (``covered`` is sorted and
    its spans do not overlap)."""
    i = bisect_left(covered, (p,)) - 1  # the last span starting before p
    if i >= 0 and covered[i][1] > p:
        return covered[i][0]
    return None
