"""What an answer carries beside its text, shown as it streams: the model's reasoning (markdown,
with the answer's hold-back and frames), its tool calls (name and pretty JSON arguments,
held back until they parse: ``pysse.call.tool_args``) and the sources it cites (a numbered
list of http(s) links, each with its host: ``events.sources``). All are model output: the
reasoning goes through the same safe markdown as the answer, a tool call's name and
arguments and a source's title are set as text, never as HTML, and a source's URL is linked
only when it is http(s).

``ChatCall`` feeds them its events and renders them in its frame; what they mean for the
page's disclosure ("Thinking…", "Thought for 12 s") is the bundled page's (``app.turn``; a
restored answer's: ``app.message_view``). Pure and
duck-typed: the elements are the page's model DOM (``pysse.view``) or, for an embedder's
page, real ones; new elements come from the element's own ``ownerDocument``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..events import Citation, ReasoningDelta, ToolCall, sources
from ..render.dom import DomWriter
from ..render.update import Update
from .tool_args import pretty_arguments

__all__ = ["ReasoningView", "SourcesView", "ToolCallsView", "attr", "writer_for"]


def attr(el: Any, name: str) -> str:
    """An attribute's value, "" when absent (a real element's missing ``dataset`` key raises
    AttributeError in Pyodide; the model's is None)."""
    return str(el.getAttribute(name) or "")


class _ModelWriter:
    """Streaming-markdown updates for an element of the page's model DOM: one op each,
    applied by the view (``web/dom_writer.js``); the content stays opaque to the model."""

    def __init__(self, el: Any) -> None:
        self.el = el
        el.opaque = True

    def apply(self, update: Update) -> None:
        ops = [[op.depth, op.html, op.opens, op.replaces] for op in update.ops]
        self.el.apply_update(ops, list(update.tails), update.final)


# How updates reach a real element: Python's ``DomWriter``, unless the browser package put its
# JavaScript twin here (``pysse.browser.js_writer``: filled from above, this layer has no js).
REAL_WRITER: list[Callable[[Any], Any]] = [DomWriter]


def writer_for(el: Any) -> Any:
    """How updates reach ``el``: as ops for a model element, or a writer of the real one."""
    return _ModelWriter(el) if hasattr(el, "apply_update") else REAL_WRITER[0](el)


class ReasoningView:
    """Reasoning text rendered as markdown into ``el``, settled blocks once, like an answer."""

    def __init__(self, el: Any, markdown: Any) -> None:
        from ..render.streaming import StreamingMarkdown  # markdown-it: imported late

        self.el = el
        self.md = StreamingMarkdown(md=markdown)
        self.writer = writer_for(el)
        self.dirty = False
        self.hidden = False  # the provider hid (some of) it: redacted or encrypted
        self.chars = 0

    def add(self, ev: ReasoningDelta) -> bool:
        """Take a delta; True if there is something new to show."""
        if ev.redacted:
            self.hidden = True
        if ev.text:
            self.md.append(ev.text)
            self.chars += len(ev.text)
            self.dirty = True
        return bool(ev.text or ev.redacted)

    @property
    def busy(self) -> bool:
        return self.dirty or self.md.busy

    def render(self, streaming: bool, at_once: bool = False) -> bool:
        """Show what changed. While the answer streams: an update when something is new.
        After it: the last slices, an update a frame as the answer's (a long reasoning
        finished in one call took one long task); ``at_once``: all of it now (a hidden tab,
        a flush). True once the final state is shown."""
        if streaming:
            if self.busy:
                self.writer.apply(self.md.update())
                self.dirty = False
            return False
        self.dirty = False
        if not self.chars or self.md.finished:
            return True
        if at_once:
            self.writer.apply(self.md.finish())
            return True
        self.md.end()
        update = self.md.update()
        self.writer.apply(update)
        return bool(update.final)


class ToolCallsView:
    """One ``[data-role=tool-call]`` block per call in ``el``: the tool's name, then its
    arguments; collapsed once they are complete."""

    def __init__(self, el: Any) -> None:
        self.el = el
        self.blocks: dict[int, Any] = {}
        self.dirty: set[int] = set()
        self.done: set[int] = set()

    def mark(self, index: int) -> None:
        self.dirty.add(index)

    @property
    def busy(self) -> bool:
        return bool(self.dirty)

    def render(self, calls: tuple[ToolCall, ...], final: bool) -> None:
        for call in calls:
            if call.index in self.dirty or (final and call.index not in self.done):
                self._show(call, final)
        self.dirty.clear()

    def _show(self, call: ToolCall, final: bool) -> None:
        block = self.blocks.get(call.index)
        if block is None:
            block = self._block()
            self.blocks[call.index] = block
            self.el.appendChild(block)
            self.el.hidden = False
        name = call.name or "tool"
        block.dataset.name = name
        block.querySelector(".tool-name").textContent = name
        shown, complete = pretty_arguments(call.arguments)
        if final and not complete:
            shown = call.arguments  # the stream ended: what arrived, as it is (text only)
        block.querySelector("code").textContent = shown
        if complete or final:
            block.dataset.arguments = call.arguments
            block.dataset.complete = "1" if complete else "0"
            block.open = False
            self.done.add(call.index)

    def _block(self) -> Any:
        doc = self.el.ownerDocument
        block = doc.createElement("details")
        block.className = "tool-call"
        block.dataset.role = "tool-call"
        block.open = True
        summary = doc.createElement("summary")
        label = doc.createElement("span")
        label.className = "tool-label"
        label.textContent = "Tool call: "
        name = doc.createElement("span")
        name.className = "tool-name"
        name.setAttribute("dir", "auto")  # a tool's name may be in any script (issue #42)
        summary.append(label, name)
        pre = doc.createElement("pre")
        pre.setAttribute("dir", "ltr")  # its arguments are JSON: code
        pre.appendChild(doc.createElement("code"))
        block.append(summary, pre)
        return block


class SourcesView:
    """The answer's sources in ``el`` (its ``ol``): one ``li`` per http(s) URL, in the order
    first cited, a link (``rel="noopener noreferrer nofollow"``, a new tab) whose text is the
    title, never HTML, and the host beside it, so the reader sees where it leads. Only new
    sources are added (a render per frame while they stream costs nothing otherwise), after
    those ``el`` shows already (``data-count``: a continued answer's earlier ones)."""

    def __init__(self, el: Any) -> None:
        self.el = el
        self.count = int(attr(el, "data-count") or 0)
        self.seen = -1  # how many citations the last render read (a frame with none new: no work)

    def render(self, citations: tuple[Citation, ...]) -> None:
        if len(citations) == self.seen:
            return
        self.seen = len(citations)
        found = sources(citations)
        if len(found) <= self.count:
            return
        doc, ol = self.el.ownerDocument, self.el.querySelector("ol")
        for c in found[self.count :]:
            li, a, host = (doc.createElement(t) for t in ("li", "a", "span"))
            a.setAttribute("href", c.url)
            a.setAttribute("rel", "noopener noreferrer nofollow")
            a.setAttribute("target", "_blank")
            a.setAttribute("dir", "auto")  # a title in any script (issue #42)
            a.textContent = " ".join(c.title.split()) or c.host
            host.className = "source-host"
            host.setAttribute("dir", "ltr")
            host.textContent = c.host
            li.append(a, host)  # (the model DOM has no text nodes: CSS spaces them)
            ol.appendChild(li)
        self.count = len(found)
        self.el.hidden = False
        self.el.dataset.count = str(self.count)
