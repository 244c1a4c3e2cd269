"""Chat text -> markdown blocks: render a growing answer incrementally, safely, and without
flashing half-typed syntax.

Why it is built this way:

* **Settled blocks are rendered once.** The text is split into top-level blocks by
  markdown-it's own block parser, run over *complete lines only*. Every block that is followed
  by another block starting on a complete line can no longer change (CommonMark decides block
  structure line by line; link reference definitions, the one construct that reaches
  backwards, are disabled), so it is rendered once and handed out as settled HTML, to be
  appended to the DOM and never touched again. Only the last block, the *tail*, is re-rendered
  on each update, so total work is linear in the answer, not quadratic.
* **Hold-back** (``holdback.py``): syntax that is not yet meaningful is not shown yet.
* **Safe by default** (``markdown.py``): no raw HTML, safe link schemes, remote images as links.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from markdown_it import MarkdownIt
from markdown_it.rules_core import block as _core_block
from markdown_it.rules_core import normalize as _core_normalize
from markdown_it.rules_core.state_core import StateCore

from .holdback import hold_back
from .markdown import MarkdownPolicy, make_markdown, render

__all__ = ["StreamingMarkdown", "Update"]


@dataclass
class Update:
    """What changed: ``settled`` blocks to append (HTML, in order, never to change again) and
    the new ``tail`` HTML that replaces the previous tail. ``final`` after ``finish()``."""

    settled: list[str] = field(default_factory=list)
    tail: str = ""
    final: bool = False


class StreamingMarkdown:
    """Incremental, safe markdown for a growing answer.

    ``append(delta)`` is O(len(delta)) and renders nothing; ``update()`` renders what changed
    since the last update (call it at most once per frame); ``feed(delta)`` does both.
    """

    def __init__(self, policy: MarkdownPolicy | None = None, md: MarkdownIt | None = None) -> None:
        self.policy = policy or MarkdownPolicy()
        self.md = md or make_markdown(self.policy)
        self._settled: list[str] = []
        self._settled_src: list[str] = []
        self._tail_src = ""  # unsettled source, starts at a block boundary
        self._new: list[str] = []
        self._tail_html = ""
        self._checked_upto = -1  # length of tail_src's complete lines at the last settle check
        self.renders = 0  # markdown-it render calls (for benchmarks and tests)
        self.rendered_chars = 0
        self.finished = False

    @property
    def text(self) -> str:
        return "".join(self._settled_src) + self._tail_src + "".join(self._new)

    @property
    def html(self) -> str:
        """Everything that should be on screen now."""
        return "".join(self._settled) + self._tail_html

    @property
    def settled_blocks(self) -> list[str]:
        return list(self._settled)

    def append(self, delta: str) -> None:
        if delta:
            self._new.append(delta)

    def feed(self, delta: str) -> Update:
        self.append(delta)
        return self.update()

    def update(self) -> Update:
        if self.finished:
            return Update(final=True, tail=self._tail_html)
        if self._new:
            self._take_new()
        elif self._checked_upto >= 0 and self.renders:
            return Update(tail=self._tail_html)
        settled = self._settle()
        shown = hold_back(self._tail_src)
        self._tail_html = self._render(shown)
        return Update(settled=settled, tail=self._tail_html)

    def finish(self) -> Update:
        """End of stream: render the tail as CommonMark would (an open fence stays code)."""
        if self._new:
            self._take_new()
        self.finished = True
        settled = self._settle()
        self._tail_html = self._render(self._tail_src)
        return Update(settled=settled, tail=self._tail_html, final=True)

    # -- internals -----------------------------------------------------------------------------

    def _take_new(self) -> None:
        """Move appended deltas into the tail, with line ends normalized as markdown-it does
        (CRLF and CR become LF), so line numbers here and in markdown-it agree. A CR at the
        very end waits: the next delta may start with its LF."""
        src = self._tail_src + "".join(self._new)
        self._new.clear()
        if "\r" in src:
            keep_cr = src.endswith("\r")
            src = src.replace("\r\n", "\n")
            src = (src[:-1].replace("\r", "\n") + "\r") if keep_cr else src.replace("\r", "\n")
        self._tail_src = src

    def _render(self, src: str) -> str:
        if not src:
            return ""
        self.renders += 1
        self.rendered_chars += len(src)
        return render(src, self.md)

    def _settle(self) -> list[str]:
        """Move every block that can no longer change out of the tail, rendering it once."""
        src = self._tail_src
        complete = src[: src.rfind("\n") + 1]
        if len(complete) == self._checked_upto:
            return []
        self._checked_upto = len(complete)
        if not complete:
            return []
        state = StateCore(complete, self.md, {})
        _core_normalize(state)
        _core_block(state)
        starts = [t.map[0] for t in state.tokens if t.level == 0 and t.nesting in (0, 1) and t.map]
        if len(starts) < 2:
            return []
        last_start = starts[-1]
        # Char offset of line `last_start` in src.
        offset = 0
        for _ in range(last_start):
            offset = src.index("\n", offset) + 1
        segment = src[:offset]
        html = self._render(segment)
        self._settled.append(html)
        self._settled_src.append(segment)
        self._tail_src = src[offset:]
        self._checked_upto = -1
        return [html]
