"""A tiny pure-Python DOM, enough to apply ``StreamingMarkdown`` updates the way the page does
(``pysse.render.dom.DomWriter``) and to check what happened to every node.

Nodes keep their raw start tags and raw text (entities untouched), so serializing gives back
exactly the HTML that was inserted. Every node has a serial number and records whether it was
ever removed, so a test can assert that settled nodes are never rewritten.
"""

from __future__ import annotations

from collections.abc import Callable
from html.parser import HTMLParser
from itertools import count
from typing import Any

VOID = {"br", "hr", "img", "input", "wbr", "col", "area", "base", "link", "meta", "source"}
_ids = count()


class NodeList(list["Node"]):
    @property
    def length(self) -> int:
        return len(self)


class Node:
    nodeType = 0

    def __init__(self) -> None:
        self.id = next(_ids)
        self.parent: Element | None = None
        self.removed = False

    def remove(self) -> None:
        assert self.parent is not None
        self.parent.children.remove(self)
        self.parent = None
        self.removed = True

    def html(self) -> str:
        raise NotImplementedError


class Text(Node):
    nodeType = 3

    def __init__(self, data: str) -> None:
        super().__init__()
        self.data = data

    def html(self) -> str:
        return self.data


class Element(Node):
    nodeType = 1

    def __init__(self, tag: str, start: str) -> None:
        super().__init__()
        self.tag = tag
        self.start = start
        self.children: list[Node] = []

    # -- the DOM API DomWriter uses ------------------------------------------------------------

    @property
    def childNodes(self) -> NodeList:
        return NodeList(self.children)

    @property
    def lastChild(self) -> Node | None:
        return self.children[-1] if self.children else None

    @property
    def lastElementChild(self) -> Element | None:
        for c in reversed(self.children):
            if isinstance(c, Element):
                return c
        return None

    def insertAdjacentHTML(self, where: str, html: str) -> None:
        assert where == "beforeend"
        for node in parse_fragment(html):
            node.parent = self
            self.children.append(node)

    # -- for tests -----------------------------------------------------------------------------

    def inner(self) -> str:
        return "".join(c.html() for c in self.children)

    def html(self) -> str:
        if self.tag in VOID:
            return self.start
        return f"{self.start}{self.inner()}</{self.tag}>"

    def walk(self) -> list[Node]:
        out: list[Node] = []
        for c in self.children:
            out.append(c)
            if isinstance(c, Element):
                out.extend(c.walk())
        return out


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.root = Element("#fragment", "")
        self.stack: list[Element] = [self.root]

    def _add(self, node: Node) -> None:
        top = self.stack[-1]
        node.parent = top
        top.children.append(node)

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        el = Element(tag, self.get_starttag_text() or f"<{tag}>")
        self._add(el)
        if tag not in VOID:
            self.stack.append(el)

    def handle_startendtag(self, tag: str, attrs: Any) -> None:
        self._add(Element(tag, self.get_starttag_text() or f"<{tag}>"))

    def handle_endtag(self, tag: str) -> None:
        assert self.stack[-1].tag == tag, (tag, self.stack[-1].tag)
        self.stack.pop()

    def _text(self, data: str) -> None:
        top = self.stack[-1]
        if (
            top.children
            and isinstance(top.children[-1], Text)
            and top.children[-1].id == self._last
        ):
            top.children[-1].data += data  # one text node per run, as a browser parses it
        else:
            t = Text(data)
            self._add(t)
            self._last = t.id

    _last = -1

    def handle_data(self, data: str) -> None:
        self._text(data)

    def handle_entityref(self, name: str) -> None:
        self._text(f"&{name};")

    def handle_charref(self, name: str) -> None:
        self._text(f"&#{name};")


def parse_fragment(html: str) -> list[Node]:
    b = _Builder()
    b.feed(html)
    b.close()
    assert len(b.stack) == 1, f"unbalanced fragment: {html!r}"
    nodes = b.root.children
    for n in nodes:
        n.parent = None
    return nodes


def new_root() -> Element:
    return Element("div", "<div>")


class Streamed:
    """The outcome of streaming one text through StreamingMarkdown into a model DOM."""

    def __init__(self) -> None:
        self.updates = 0
        self.ops = 0
        self.opens = 0
        self.replaces = 0
        self.replaced_nodes: set[int] = set()
        self.max_tail = 0
        self.html = ""
        self.md: Any = None
        self.taken: list[int] = []  # cost units of text each update took
        self.work: list[int] = []  # characters parsed (block and inline) by each update
        self.inline_work: list[int] = []  # of those, the inline parser's
        self.waits = 0  # turns spent only waiting for a lazy resource (frames mode)


def stream_into_dom(
    text: str,
    cuts: list[int],
    md: Any = None,
    check_each: bool = True,
    frames: bool = False,
    max_updates: int = 1_000_000,
    between: Callable[[int, Any], object] | None = None,
    waits: int = 3,
) -> Streamed:
    """Feed ``text`` cut at ``cuts`` (delta sizes, cycled), apply each update to a model DOM
    with ``DomWriter``, and check as it goes: the DOM always equals ``md.html``; a settled node
    is never removed or changed unless a ``replaces`` op removed the element around it.
    ``between(updates, md)`` runs before each update (a test's lazy resources arrive there).

    ``frames``: as the page does, one ``update()`` per frame, a delta appended before each,
    and after the last delta ``update()`` while ``md.busy``, then ``end()`` and ``update()``
    until the final update (instead of ``finish()``); at most ``max_updates`` in all."""
    from pysse.render import StreamingMarkdown
    from pysse.render.dom import DomWriter

    md = md or StreamingMarkdown()
    root = new_root()
    writer = DomWriter(root)
    out = Streamed()
    out.md = md
    settled: dict[int, str] = {}  # node id -> its html when it was settled
    nodes: dict[int, Node] = {}

    def tail_ids() -> set[int]:
        ids: set[int] = set()
        for box, n in zip(writer.boxes, writer.settled, strict=True):
            for c in box.children[n:]:
                ids.add(c.id)
                if isinstance(c, Element):
                    ids.update(d.id for d in c.walk())
        return ids

    removed_by_replace = out.replaced_nodes
    plain_replace = writer.replace

    def replace(depth: int) -> None:  # record what a replaces op removes
        box = writer.boxes[depth]
        for node in box.children[writer.marks[depth + 1] :]:
            removed_by_replace.add(node.id)
            if isinstance(node, Element):
                removed_by_replace.update(d.id for d in node.walk())
        plain_replace(depth)

    writer.replace = replace  # type: ignore[method-assign]

    def apply(update: Any) -> None:
        out.taken.append(md.taken)
        work = md.rendered_chars + md.inlined_chars
        out.work.append(work - sum(out.work))
        out.inline_work.append(md.inlined_chars - sum(out.inline_work))
        for op in update.ops:
            out.ops += 1
            out.opens += op.opens
            out.replaces += op.replaces
        writer.apply(update)
        out.updates += 1
        out.max_tail = max(out.max_tail, sum(len(t) for t in update.tails))
        if check_each:
            assert root.inner() == md.html, "the DOM differs from md.html"
        tails = tail_ids()
        for node in root.walk():
            if node.id not in tails and node.id not in settled:
                settled[node.id] = _flat(node)
                nodes[node.id] = node
        for nid, was in settled.items():
            node = nodes[nid]
            if nid in out.replaced_nodes:
                continue
            assert not node.removed, f"settled node removed: {was!r}"
            assert _flat(node) == was, f"settled node changed: {was!r} -> {_flat(node)!r}"

    def tick() -> None:
        if between is not None:
            between(out.updates, md)

    i, k = 0, 0
    while i < len(text):
        n = cuts[k % len(cuts)]
        k += 1
        tick()
        apply(md.feed(text[i : i + n]))
        i += n
    if not frames:
        tick()
        apply(md.finish())
    else:
        while md.busy:
            assert out.updates < max_updates, "still busy after max_updates"
            tick()
            apply(md.update())
        md.end()
        while True:
            assert out.updates < max_updates, "not final after max_updates"
            tick()
            update = md.update()
            apply(update)
            if update.final:
                break
            # Only waiting for a lazy resource: the page waits (a few turns here), then
            # renders what it has.
            for _ in range(waits):
                if md.busy or not md.waiting:
                    break
                out.waits += 1
                tick()
            if not md.busy and md.waiting:
                apply(md.finish())
                break
        assert not md.busy and md.finished
    out.html = root.inner()
    return out


def _flat(node: Node) -> str:
    """A node's own identity: its start tag or text (children may still be appended)."""
    return node.start if isinstance(node, Element) else node.html()
