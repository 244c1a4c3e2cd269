"""A model of the page's DOM that the page's Python reads and writes as it would the real one;
every write is recorded as an op (``ops.py``) for the JavaScript view to apply.

Why a model: the page's Python runs in a Web Worker, where there is no DOM, and even on the
main thread a round trip into the browser per attribute was the bulk of its script time. So
Python keeps the part of the DOM it owns, structure, attributes and form values, in this
model, reads it for free, and sends what changed once a frame. What only the browser knows
(layout, scroll positions, focus, selection) Python never reads: the view owns it (scroll
following, keyboard shortcuts, Copy), and Python asks for the rest with ops.

Every element has a *handle*, a positive integer both sides agree on: the page's own HTML is
numbered in document order when the model is built from it (``Document(body_html)``), and each
element Python creates, clones or parses later is numbered as it is made. The view keeps the
same numbering (``web/view.js``); an element Python no longer holds is dropped on both sides.

An element marked ``opaque`` (an answer's rendered markdown) has content the model does not
keep: its HTML goes to the view as it is, and streaming updates apply there (``update``).

The API is the DOM's where the page uses it (``textContent``, ``dataset``, ``querySelector``,
``closest``, ``append``...), with Python lists for collections. Form values the reader changes
(``value``, ``open``) arrive with the events that changed them (``Document.dispatch``).
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from .element import Element, TextNode
from .fragment import Element as Parsed
from .fragment import Text as ParsedText
from .fragment import parse
from .ops import Ops

__all__ = ["Document", "Element", "Event", "TextNode"]


class Event:
    """One forwarded event, as a listener sees it. ``preventDefault`` is decided by the view
    when the event happens (it cannot wait for Python); here it only marks the event."""

    def __init__(self, doc: Document, record: dict[str, Any], target: Element | None) -> None:
        self._doc = doc
        self.type = str(record.get("type", ""))
        self.target = target
        self.currentTarget: Element | None = None
        self.eid = record.get("e", 0)
        self.key = str(record.get("key", ""))
        self.shiftKey = bool(record.get("shift", False))
        self.isComposing = bool(record.get("composing", False))
        self.deltaY = float(record.get("dy", 0) or 0)
        self.defaultPrevented = bool(record.get("prevented", False))
        self.files = record.get("files")
        self.detail = record.get("detail")

    def preventDefault(self) -> None:
        self.defaultPrevented = True

    def stopPropagation(self) -> None:
        self._doc._stopped.add(self.eid)


class Document:
    """The model of one page (see the module docstring); its writes go to ``ops``."""

    def __init__(
        self,
        body_html: str = "<body></body>",
        html_attrs: dict[str, str] | None = None,
        ops: Ops | None = None,
    ) -> None:
        """The model of a page whose ``<body>`` serializes to ``body_html``: the view numbers
        the real one the same way (``<html>`` is 1, then the body's elements in document
        order, a template's content as its children). Building it records no ops."""
        self.ops = ops if ops is not None else Ops()
        self._next = 1
        self._elements: weakref.WeakValueDictionary[int, Element] = weakref.WeakValueDictionary()
        self._stopped: set[Any] = set()
        self._calls: dict[int, asyncio.Future[Any]] = {}
        self._call_ids = 0
        self._closed = False
        self.documentElement = Element(self, "html", dict(html_attrs or {}), self._take())
        nodes = [n for n in parse(body_html) if isinstance(n, Parsed)]
        if len(nodes) != 1 or not isinstance(nodes[0], Parsed) or nodes[0].tag != "body":
            raise ValueError("Document: expected the HTML of one <body> element")
        self.body = self._build(nodes[0])
        self.body.parent = self.documentElement
        self.documentElement.childNodes.append(self.body)

    def _take(self) -> int:
        n = self._next
        self._next += 1
        return n

    def _register(self, el: Element) -> None:
        self._elements[el.handle] = el

    def _build(self, node: Parsed) -> Element:
        el = Element(self, node.tag, dict(node.attrs), self._take())
        kids = node.children
        target = el
        if node.tag == "template":
            el.content = Element(self, "#fragment", {}, 0)
            target = el.content
        for kid in kids:
            if isinstance(kid, ParsedText):
                text = TextNode(kid.data)
                text.parent = target
                target.childNodes.append(text)
            elif isinstance(kid, Parsed):
                built = self._build(kid)
                built.parent = target
                target.childNodes.append(built)
        return el

    def _copy(self, src: Element, deep: bool) -> Element:
        el = Element(self, src.tag, dict(src.attrs), self._take())
        el.opaque = src.opaque
        if not deep:
            return el
        source = src.content if src.content is not None else src
        target = el
        if src.content is not None:
            el.content = Element(self, "#fragment", {}, 0)
            target = el.content
        for kid in source.childNodes:
            if isinstance(kid, TextNode):
                text = TextNode(kid.data)
                text.parent = target
                target.childNodes.append(text)
            else:
                built = self._copy(kid, True)
                built.parent = target
                target.childNodes.append(built)
        return el

    # -- the DOM API the page uses -------------------------------------------------------------

    def createElement(self, tag: str) -> Element:
        el = Element(self, tag.lower(), {}, self._take())
        self.ops.add(["new", el.handle, el.tag])
        return el

    def querySelector(self, selector: str) -> Element | None:
        return self.documentElement.querySelector(selector)

    def querySelectorAll(self, selector: str) -> list[Element]:
        return self.documentElement.querySelectorAll(selector)

    def getElementById(self, ident: str) -> Element | None:
        return next((e for e in self.documentElement.iter_elements() if e.id == ident), None)

    def contains(self, el: Element | None) -> bool:
        return el is not None and el.isConnected

    def element(self, handle: int) -> Element | None:
        return self._elements.get(handle)

    def close(self) -> None:
        """No more ops (the page is being replaced): elements dying now drop nothing."""
        self._closed = True

    # -- from the view -------------------------------------------------------------------------

    def dispatch(self, record: dict[str, Any]) -> None:
        """One event record from the view: the reader's change to the target's form value
        first (the model mirrors it), then the listeners at ``h``. A listener that called
        ``stopPropagation`` ends the event: records of it for other elements are skipped."""
        kind = record.get("type")
        if kind == "reply":
            self._reply(record)
            return
        target = self._elements.get(int(record.get("t") or 0))
        if target is not None:
            if "value" in record:
                target._value = str(record["value"])
            if "open" in record:
                target.attrs.pop("open", None)
                if record["open"]:
                    target.attrs["open"] = ""
        el = self._elements.get(int(record.get("h") or 0))
        eid = record.get("e")
        if el is None or (eid and eid in self._stopped):
            return
        if len(self._stopped) > 64:
            self._stopped.clear()
        event = Event(self, record, target)
        event.currentTarget = el
        for fn in list(el._listeners.get((str(kind), bool(record.get("cap"))), ())):
            fn(event)
            if eid and eid in self._stopped:
                break

    def call(self, name: str, *args: Any) -> asyncio.Future[Any]:
        """Ask the view for something only it can do (a ``confirm`` dialog, an element's text
        nodes); resolved when its ``reply`` event arrives."""
        self._call_ids += 1
        future: asyncio.Future[Any] = asyncio.get_event_loop().create_future()
        self._calls[self._call_ids] = future
        self.ops.add(["call", self._call_ids, name, list(args)])
        return future

    def _reply(self, record: dict[str, Any]) -> None:
        future = self._calls.pop(int(record.get("id") or 0), None)
        if future is not None and not future.done():
            future.set_result(record.get("value"))
