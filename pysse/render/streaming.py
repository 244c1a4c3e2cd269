"""Chat text -> markdown HTML: render a growing answer incrementally, safely, and without
flashing half-typed syntax, with work per frame that does not grow with the answer.

Why it is built this way:

* **Settled content is rendered once** and only appended, at any depth (``blocks/``):
  top-level blocks, list items, table rows, a quote's blocks, code lines, pieces of a long
  paragraph (``paragraph.py``). What is not settled yet, the *tail* of each open container,
  is re-rendered on each update; it is small, so the total work is linear in the answer.
* **The contract** (``update.py``): each update is a few ``Op`` s (append HTML into an open
  container, open one, or replace one that turned out different) and the new tails.
  ``DomWriter`` (``dom.py``) applies it to a page.
* **Hold-back** (``holdback.py``): syntax that is not yet meaningful is not shown yet.
* **Safe by default** (``markdown.py``): no raw HTML, safe link schemes, remote images as links.

The final HTML equals a one-shot ``render()`` of the whole text.
"""

from __future__ import annotations

from markdown_it import MarkdownIt

from .blocks import BlockSettler
from .markdown import MarkdownPolicy, make_markdown
from .observe import install
from .update import Op, Update

__all__ = ["Op", "StreamingMarkdown", "Update"]


class StreamingMarkdown:
    """Incremental, safe markdown for a growing answer.

    ``append(delta)`` is O(len(delta)) and renders nothing; ``update()`` renders what changed
    since the last update (call it at most once per frame); ``feed(delta)`` does both;
    ``finish()`` at the end of the stream.
    """

    def __init__(self, policy: MarkdownPolicy | None = None, md: MarkdownIt | None = None) -> None:
        self.policy = policy or MarkdownPolicy()
        self.md = install(md or make_markdown(self.policy))
        self._blocks = BlockSettler(self.md)
        self._new: list[str] = []
        self._partial: list[str] = []  # the last, incomplete line, in pieces
        self._cr = False  # the text so far ends with a CR: the next delta may start with LF
        self._tails: list[str] = [""]
        self._settled_lines = 0
        self.finished = False

    # -- input -----------------------------------------------------------------------------------

    def append(self, delta: str) -> None:
        if delta:
            self._new.append(delta)

    def feed(self, delta: str) -> Update:
        self.append(delta)
        return self.update()

    @property
    def text(self) -> str:
        """The text so far, line ends normalized (CRLF and CR become LF, as markdown-it does)."""
        lines = self._blocks.lines
        done = "".join(line + "\n" for line in lines)
        return done + "".join(self._partial) + ("\r" if self._cr else "") + "".join(self._new)

    # -- output ----------------------------------------------------------------------------------

    @property
    def html(self) -> str:
        """Everything that should be on screen now (the ops and tails applied to a string)."""
        return self._blocks.html(self._tails)

    @property
    def renders(self) -> int:
        """Partial parses so far (for benchmarks and tests)."""
        return self._blocks.parses

    @property
    def rendered_chars(self) -> int:
        """Characters parsed so far: linear in the answer, never quadratic."""
        return self._blocks.parsed_chars

    @property
    def busy(self) -> bool:
        """A closed code fence is being highlighted in slices: call ``update()`` again on the
        next frame even if no text arrives (each call does one slice)."""
        return self._blocks.job is not None

    def update(self) -> Update:
        if self.finished:
            return Update(tails=[""], final=True)
        changed = self._take_new()
        blocks = self._blocks
        if not changed and self._settled_lines and blocks.job is None:
            return Update(tails=list(self._tails))
        if len(blocks.lines) > self._settled_lines or blocks.job is not None:
            blocks.settle(len(blocks.lines))
            self._settled_lines = len(blocks.lines)
        self._tails = blocks.tails(self._partial_text())
        return Update(ops=blocks.take_ops(), tails=list(self._tails))

    def finish(self) -> Update:
        """End of stream: everything is settled as a one-shot render would have it."""
        if self.finished:
            return Update(tails=[""], final=True)
        self._take_new()
        if self._cr:
            self._cr = False
            self._split("\n")
        self.finished = True
        blocks = self._blocks
        blocks.settle(len(blocks.lines), final=self._partial_text())
        self._tails = [""]
        return Update(ops=blocks.take_ops(), tails=[""], final=True)

    # -- internals -------------------------------------------------------------------------------

    def _partial_text(self) -> str:
        if len(self._partial) > 1:
            self._partial = ["".join(self._partial)]
        return self._partial[0] if self._partial else ""

    def _take_new(self) -> bool:
        """Move appended deltas into complete lines and the partial line, with line ends
        normalized as markdown-it does (CRLF and CR become LF). A CR at the very end waits:
        the next delta may start with its LF."""
        if not self._new:
            return False
        new = "".join(self._new)
        self._new.clear()
        if self._cr:
            new = "\r" + new
            self._cr = False
        if "\r" in new:
            if new.endswith("\r"):
                new = new[:-1]
                self._cr = True
            new = new.replace("\r\n", "\n").replace("\r", "\n")
        self._split(new)
        return True

    def _split(self, new: str) -> None:
        if "\n" not in new:
            self._partial.append(new)
            return
        lines = new.split("\n")
        self._partial.append(lines[0])
        self._blocks.lines.append("".join(self._partial))
        self._blocks.lines.extend(lines[1:-1])
        self._partial = [lines[-1]] if lines[-1] else []
