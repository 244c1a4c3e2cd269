"""markdown-it's link-label scan, with each label's outcome remembered for the rest of its
inline parse, so a paragraph of brackets costs a constant per bracket instead of
``maxNesting``.

markdown-it-py's ``parseLinkLabel`` walks from a ``[`` token by token (``skipToken``, whose
result it caches per position) until the bracket level returns to zero. A ``[`` that never
closes is walked again from every ``[`` before it, each walk running until the position
where nesting reached ``maxNesting`` (100 in the ``js-default`` preset): about 50 µs per
``[`` in CPython, so a 5,000-``[`` paragraph takes 0.25 s per render and one of ``![`` 0.9 s,
and a streaming paragraph re-renders its unsettled tail on every update.

:func:`scan_label` returns what markdown-it's own walk returns, for every input: a walk
from ``p`` that reaches a ``[`` at ``q`` as plain text (its link failed) then visits exactly
the positions the walk from ``q`` visited, all of them already in ``state.cache``, so it
reaches the same end with its level one higher, or stops at the same nested link. Knowing
``q``'s outcome, the walk from ``p`` jumps over it. ``tests/test_render_labels.py`` checks
the HTML against markdown-it's unchanged helper on random bracket-heavy text.

It also tells markdown-it's two failures apart (:data:`OPEN` and :data:`NESTED`), which
``observe.py`` needs to know whether a ``[`` may still become a link.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Final

from markdown_it import MarkdownIt
from markdown_it.helpers import parseLinkDestination, parseLinkTitle
from markdown_it.rules_inline.state_inline import StateInline

__all__ = ["NESTED", "OPEN", "install_label_scan", "scan_label"]

NESTED: Final = -1  # a link inside a link's label (links do not nest)
OPEN: Final = -2  # the text ended before the label closed

_UNKNOWN: Final = -3  # only a link's walk ran, and it stopped at a nested link
_MEMO = "_pysse_labels"

# (start, posMax) -> (outcome when nested links are allowed, whether the walk met a link)
_Memo = dict[tuple[int, int], tuple[int, bool]]


def scan_label(state: StateInline, start: int, links_allowed: bool) -> int:
    """The position of the ``]`` closing the label opened by the ``[`` at ``start``, or
    :data:`OPEN`, or (``links_allowed`` false, as for a link's own label) :data:`NESTED`.
    ``state.pos`` is left as it was."""
    return _scan(state, start, not links_allowed)


def _parse_link_label(state: StateInline, start: int, disableNested: bool = False) -> int:
    """``md.helpers.parseLinkLabel``'s signature and result (-1 for either failure)."""
    end = _scan(state, start, disableNested)
    return end if end >= 0 else -1


def _scan(state: StateInline, start: int, no_links: bool) -> int:
    """markdown-it's loop (``helpers/parse_link_label.py``), jumping over labels whose
    outcome is known. One function: it recurses through ``skipToken`` once per nesting
    level (up to ``maxNesting``), so it adds no stack frames to markdown-it's own."""
    src, pos_max = state.src, state.posMax
    memo: _Memo | None = getattr(state, _MEMO, None)
    if memo is None:
        memo = {}
        setattr(state, _MEMO, memo)
    entry = memo.get((start, pos_max))
    if entry is not None:
        outcome, met_link = entry
        if met_link and no_links:
            return NESTED
        if outcome != _UNKNOWN:
            return outcome
    skip = state.md.inline.skipToken
    old = state.pos
    outcome, met_link, level = OPEN, False, 1
    state.pos = start + 1
    while state.pos < pos_max:
        pos = state.pos
        marker = src[pos]
        if marker == "]":
            level -= 1
            if level == 0:
                outcome = pos
                break
        skip(state)
        if marker != "[":
            continue
        if state.pos != pos + 1:  # a link (or the nesting limit's jump to the end)
            met_link = True
            if no_links:
                outcome = NESTED
                break
            continue
        level += 1
        entry = memo.get((pos, pos_max))
        if entry is None:
            continue
        inner, inner_link = entry
        met_link = met_link or inner_link
        if inner_link and no_links:
            outcome = NESTED
            break
        if inner == _UNKNOWN:  # a link's walk that stopped at a link: walk on
            continue
        if inner == OPEN:
            break
        state.pos = inner  # its closing ``]``, which the next step counts
    state.pos = old
    # A walk stopped at a link says nothing of what follows it.
    memo[(start, pos_max)] = (_UNKNOWN if outcome == NESTED else outcome, met_link)
    return outcome


def install_label_scan(md: MarkdownIt) -> MarkdownIt:
    """Give ``md`` (only this instance) the remembering label scan."""
    md.helpers = SimpleNamespace(  # type: ignore[assignment]
        parseLinkLabel=_parse_link_label,
        parseLinkDestination=parseLinkDestination,
        parseLinkTitle=parseLinkTitle,
    )
    return md
