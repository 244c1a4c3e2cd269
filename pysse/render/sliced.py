"""markdown-it's inline parse of one token, spread over updates.

Most inline work is small: an open paragraph is settled in pieces (``paragraph.py``), so no
update parses much of it. One case cannot be cut: a paragraph cut *provisionally* (a
stray ``[`` that may never close) is rendered whole once when it ends, to check its pieces
against what a one-shot render gives. A paragraph of 40,000 ``[`` takes 0.5 s of CPython to
parse, far more than a frame. markdown-it's inline tokenizer is a loop over source
positions whose state lives in ``StateInline`` (pending text, delimiters, the caches of the
look-ahead rules), so :class:`SlicedInline` runs that same loop up to a position a
budget's worth of source ahead, returns, and goes on from there on the next update; the
post-processing rules (``ruler2``: emphasis, strikethrough, link pairs) run once at the end,
as ``ParserInline.parse`` does. The tokens are the ones ``md.inline.parse`` gives.
"""

from __future__ import annotations

from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_inline.state_inline import StateInline
from markdown_it.token import Token

from .budget import Budget, cost, prefix_within

__all__ = ["SlicedInline"]


class SlicedInline:
    """Parse ``tok.content`` into ``tok.children``, a slice per ``step(budget)``."""

    def __init__(self, md: MarkdownIt, env: dict[str, Any], tok: Token) -> None:
        self.md = md
        tok.children = []
        self.state = StateInline(tok.content, md, env, tok.children)
        self.done = False

    def step(self, budget: Budget | None = None) -> bool:
        """Parse on until the budget is spent; True when the token is parsed."""
        if self.done:
            return True
        state = self.state
        src, start, end = state.src, state.pos, state.posMax
        room = None if budget is None else budget.room()
        if room == 0:
            return False
        stop = end if room is None else max(start + 1, prefix_within(src, room, start))
        self._tokenize(min(stop, end))
        if budget is not None:
            budget.spend(cost(src[start : state.pos]))
        if state.pos < end:
            return False
        if state.pending:
            state.pushPending()
        for rule in self.md.inline.ruler2.getRules(""):
            rule(state)
        self.done = True
        return True

    def _tokenize(self, stop: int) -> None:
        """``ParserInline.tokenize`` (markdown-it-py 4.3), stopping at ``stop``."""
        state = self.state
        rules = self.md.inline.ruler.getRules("")
        end = state.posMax
        max_nesting = self.md.options["maxNesting"]
        while state.pos < stop:
            pos = state.pos
            ok = False
            if state.level < max_nesting:
                for rule in rules:
                    ok = rule(state, False)
                    if ok:
                        if state.pos <= pos:
                            raise RuntimeError("inline rule didn't increment state.pos")
                        break
            if ok:
                if state.pos >= end:
                    break
                continue
            state.append_pending(state.src[state.pos])
            state.pos += 1
