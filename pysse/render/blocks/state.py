"""What the block settler of one answer holds, and the partial parse every job uses.

``Settler`` is to the jobs of this package what markdown-it's ``StateBlock`` is to its block
rules: the state (the answer's complete lines, the stack of open :class:`~.boxes.Box` es, the
ops not yet taken, what was learned about lists and paragraphs), plus the mechanics every job
shares: the source of a partial parse (opener lines, then the real lines from the innermost
open child on), the parse, finding the open boxes in it, rendering a child where it goes,
and throwing a container away to parse it again (``rewind``).
"""

from __future__ import annotations

from typing import Any, Protocol

from markdown_it import MarkdownIt
from markdown_it.rules_block.state_block import StateBlock
from markdown_it.rules_core.state_core import StateCore
from markdown_it.token import Token

from .. import lazy
from ..budget import Budget
from ..paragraph import render_inline
from ..update import Op
from .boxes import NEEDS_OPENER, Box, Parse, pad

__all__ = ["Job", "Settler"]


class Job(Protocol):
    """Work on one block spread over updates (``highlight.HighlightJob``, ``paragraphs.
    WholeParagraph``): ``key`` says which block and content it is for; ``step(budget)`` works
    until the budget is spent and returns True when done."""

    key: Any

    def step(self, budget: Budget | None = None) -> bool: ...


_BLOCK_CORE = ("normalize", "block")


class Settler:
    """The open containers of one answer, and the ops that built them (see the package doc)."""

    LOOP_LIMIT = 8

    def __init__(self, md: MarkdownIt) -> None:
        self.md = md
        self.env: dict[str, Any] = {}
        self.lines: list[str] = []  # complete lines, without their line feed
        self.boxes: list[Box] = [Box("root", 0)]
        self.ops: list[Op] = []
        self.plain = -1  # a top-level block starting here is never opened (safety net)
        self.plain_para = -1  # a paragraph starting here turned out not to be one: never opened
        self.last = ""  # the text's last line, during the final pass
        self.loose: set[int] = set()  # first lines of lists the partial line made loose
        self.task_lists: set[int] = set()  # first lines of task lists (opened as such)
        self.task_items: set[int] = set()  # first lines of items found to be tasks
        self.reached = 0  # lines settled through (a rewind moves it back to the container)
        self.end = 0  # the end of the lines the current pass sees
        self.parsed_chars = 0  # characters given to the block parser
        self.inlined_chars = 0  # characters given to the inline parser
        self.parses = 0
        self.rescues = 0
        self.replaced = 0
        self.job: Job | None = None  # a closed fence being highlighted, a paragraph checked
        self.job_steps = 0  # how often a job was worked on
        # The parse a pass stopped on while its job went on: the job's next pass sees the same
        # lines, and reuses it rather than block-parse the open end once more (structure.py).
        self.held: tuple[tuple[str, int, int], Parse] | None = None
        self.tail_cost = 0  # cost units of what the last tails left unsettled (tails.py)
        # Lazy resources (waits.py): whether to wait for them (not in ``finish()``), what the
        # last structure pass held for, and what the last tails did not cut a paragraph for.
        self.wait = True
        self.holding = False
        self.waiting: set[lazy.Resource] = set()
        self.tail_waiting: set[lazy.Resource] = set()
        self._marks: list[tuple[Box, int]] = []
        core: Any = md.core.ruler
        self.core = [r.fn for r in core.__rules__ if r.enabled and r.name not in _BLOCK_CORE]
        # The same without the inline rule, for tokens whose inline content a job parsed.
        self.core_after_inline = [
            r.fn for r in core.__rules__ if r.enabled and r.name not in (*_BLOCK_CORE, "inline")
        ]

    # -- waiting ---------------------------------------------------------------------------

    def wait_over(self) -> bool:
        """Something this settler waits for has arrived or failed: settle and render again."""
        waited = self.waiting if self.holding else set()
        return any(not lazy.REGISTRY.pending(r) for r in waited | self.tail_waiting)

    # -- output ------------------------------------------------------------------------------

    def take_ops(self) -> list[Op]:
        ops, self.ops = self.ops, []
        return ops

    def html(self, tails: list[str]) -> str:
        """The string model: what the ops and tails build."""
        out: list[str] = []
        for box in self.boxes:
            out.append(box.before)
            out.extend(box.parts)
        for box, tail in zip(
            reversed(self.boxes), reversed(pad(tails, len(self.boxes))), strict=True
        ):
            out.append(tail)
            out.append(box.after)
        return "".join(out)

    def mark(self) -> None:
        """Remember what is on screen (each open box and how many children it has), for
        ``marked_html`` while a replacement is prepared over several updates."""
        self._marks = [(box, len(box.parts)) for box in self.boxes]

    def marked_html(self, tails: list[str]) -> str:
        """The string model as it was at ``mark()``, with those ``tails``."""
        out: list[str] = []
        for box, n in self._marks:
            out.append(box.before)
            out.extend(box.parts[:n])
        boxes = [box for box, _ in self._marks]
        for box, tail in zip(reversed(boxes), reversed(pad(tails, len(boxes))), strict=True):
            out.append(tail)
            out.append(box.after)
        return "".join(out)

    def append(self, html: str) -> None:
        """Settled HTML at the end of the innermost box."""
        box = self.boxes[-1]
        box.parts.append(html)
        self.ops.append(Op(len(self.boxes) - 1, html))

    def rewind(self, k: int) -> None:
        """Throw container ``k`` (and what it contains) away; it is parsed again from its first
        line, as the open child of its parent. Its element is removed from the page."""
        line = self.boxes[k].line
        del self.boxes[k:]
        self.boxes[-1].next = line
        self.reached = min(self.reached, line)
        self.ops.append(Op(k - 1, "", replaces=True))
        self.replaced += 1

    def rescue(self) -> None:
        """The safety net (package docstring): re-render the top-level block as a plain tail."""
        self.rescues += 1
        if len(self.boxes) > 1:
            self.plain = self.boxes[1].line
            self.rewind(1)

    # -- parsing -----------------------------------------------------------------------------

    def source(self, start: int, end: int, partial: str | None) -> tuple[str, int, list[int]]:
        """Opener lines for the open containers, then the real lines ``start:end`` (and the
        partial line): the source of one partial parse; also where each box opens in it."""
        keyed: dict[int, int] = {}  # line -> the deepest box whose opener stands for it
        for k, box in enumerate(self.boxes):
            if box.kind in NEEDS_OPENER and box.key() < start:
                keyed[box.key()] = k
        lines: list[str] = []
        at: dict[int, int] = {}
        for key in sorted(keyed):
            at[key] = len(lines)
            lines.extend(self.boxes[keyed[key]].opener)
        first = len(lines)
        fresh = [0] * len(self.boxes)
        nxt = first
        for k in range(len(self.boxes) - 1, 0, -1):
            box = self.boxes[k]
            key = box.key()
            if key < start and keyed.get(key, -1) >= k:  # recreated by that opener line
                fresh[k] = at[key]
            elif box.line >= start:
                fresh[k] = first + box.line - start
            else:  # recreated by the line that recreates its open child
                fresh[k] = nxt
            nxt = fresh[k]
        lines.extend(self.lines[start:end])
        if partial is None:
            src = "\n".join(lines) + "\n" if lines else ""
        elif start > len(self.lines):  # an open paragraph's stand-in is the partial line
            src = "\n".join(lines)
        else:
            lines.append(partial)
            src = "\n".join(lines)
        return src, first, fresh

    def inline_html(self, text: str) -> str:
        """``text`` as a paragraph's inline HTML (``paragraph.render_inline``)."""
        self.inlined_chars += len(text)
        return render_inline(self.md, self.env, text, self.core)

    def parse(self, src: str, first: int, start: int) -> Parse:
        if "\0" in src:
            src = src.replace("\0", "\ufffd")  # as markdown-it's normalize rule
        self.parses += 1
        self.parsed_chars += len(src)
        state = StateBlock(src, self.md, self.env, [])
        self.md.block.tokenize(state, state.line, state.lineMax)
        return Parse(state.tokens, first, start, src)

    def walk(self, p: Parse, fresh: list[int]) -> list[int]:
        """The token of each open box in this parse (``nodes[0] = -1``: the document). Stops
        at the first box it cannot find (the caller decides whether that is an error)."""
        nodes = [-1]
        for k in range(1, len(self.boxes)):
            box = self.boxes[k]
            found = next(
                (
                    c
                    for c in p.children(nodes[-1])
                    if p.line(c) == fresh[k] and box.matches(p.toks[c])
                ),
                None,
            )
            if found is None:
                break
            nodes.append(found)
        return nodes

    # -- rendering ---------------------------------------------------------------------------

    def inline(self, toks: list[Token], parsed: bool = False) -> None:
        """The core rules after block parsing (inline parsing, task lists ...) on ``toks``
        (``parsed``: a job already parsed their inline content)."""
        state = StateCore("", self.md, self.env)
        state.tokens = toks
        if not parsed:
            self.inlined_chars += sum(len(t.content) for t in toks if t.type == "inline")
        for rule in self.core_after_inline if parsed else self.core:
            rule(state)
        # The tasklists plugin marks an item's list (its parent token); in a slice that starts
        # at the item there is none, and it marks the slice's last token instead, which the
        # renderer would print as ``</li class=...>``. A closing tag has no attributes.
        for tok in toks:
            if tok.nesting == -1 and tok.attrs:
                tok.attrs = {}

    def render(
        self, box: Box, toks: list[Token], after: Token | None = None, parsed: bool = False
    ) -> str:
        """Render ``toks`` as the next child of ``box`` (``after`` its previous sibling's last
        token, if not ``box.prev``): with the line feed the renderer would put before it
        there (after a hidden tight paragraph, or as a container's first child)."""
        self.inline(toks, parsed)
        r = self.md.renderer
        opts = self.md.options
        prev = after or box.prev
        if prev is not None:
            if not prev.hidden:
                return str(r.render(toks, opts, self.env))
            return str(r.render([prev, *toks], opts, self.env))
        if box.open_tok is None:
            return str(r.render(toks, opts, self.env))
        head = r.render([box.open_tok], opts, self.env)
        return str(r.render([box.open_tok, *toks], opts, self.env))[len(head) - 1 :]
