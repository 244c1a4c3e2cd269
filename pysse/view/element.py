"""An element of the page's model DOM: the part of the DOM API the page's Python uses, its
writes recorded as ops (``ops.py``) for the view. See ``dom.py`` for why a model, handles and
opaque content."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from .attrs import ClassList, DataSet, Style
from .fragment import Element as Parsed
from .fragment import Node as ParsedNode
from .fragment import Text as ParsedText
from .fragment import parse
from .ops import Ops
from .select import compile_selector

__all__ = ["Element", "Listener", "Owner", "TextNode"]

Listener = Callable[[Any], object]


class Owner(Protocol):
    """What an element needs of its document (``dom.Document``)."""

    ops: Ops
    _next: int
    _closed: bool

    @property
    def documentElement(self) -> Element: ...
    def _register(self, el: Element) -> None: ...
    def _take(self) -> int: ...
    def _build(self, node: Parsed) -> Element: ...
    def _copy(self, src: Element, deep: bool) -> Element: ...
    def createElement(self, tag: str) -> Element: ...
    def call(self, name: str, *args: Any) -> asyncio.Future[Any]: ...


class TextNode:
    nodeType = 3
    __slots__ = ("data", "parent")

    def __init__(self, data: str) -> None:
        self.data = data
        self.parent: Element | None = None


def _text_of(node: ParsedNode) -> str:
    return node.data if isinstance(node, ParsedText) else ""


class Element:
    """An element of the model (see the module docstring)."""

    nodeType = 1

    def __init__(self, doc: Owner, tag: str, attrs: dict[str, str], handle: int) -> None:
        self.ownerDocument = doc
        self.tag = tag
        self.attrs = attrs
        self.handle = handle
        self.parent: Element | None = None
        self.childNodes: list[Element | TextNode] = []
        self.opaque = False
        self.content: Element | None = None  # a <template>'s content
        self._value: str | None = None
        self._style: Style | None = None
        self._listeners: dict[tuple[str, bool], list[Listener]] = {}
        self._keys: dict[tuple[str, bool], frozenset[str] | None] = {}
        if handle:
            doc._register(self)

    def __repr__(self) -> str:
        return f"<{self.tag} #{self.handle} {self.attrs}>"

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # (at interpreter exit, anything may be gone)
            if self.handle and not self.ownerDocument._closed:
                self.ownerDocument.ops.drop(self.handle)

    def _op(self, name: str, *args: Any) -> None:
        self.ownerDocument.ops.add([name, self.handle, *args])

    # -- tree ----------------------------------------------------------------------------------

    @property
    def tagName(self) -> str:
        return self.tag.upper()

    @property
    def parent_element(self) -> Element | None:
        p = self.parent
        return p if p is not None and p.handle else None

    @property
    def parentElement(self) -> Element | None:
        return self.parent_element

    @property
    def children(self) -> list[Element]:
        return [c for c in self.childNodes if isinstance(c, Element)]

    @property
    def firstElementChild(self) -> Element | None:
        return next((c for c in self.childNodes if isinstance(c, Element)), None)

    @property
    def lastElementChild(self) -> Element | None:
        return next((c for c in reversed(self.childNodes) if isinstance(c, Element)), None)

    @property
    def isConnected(self) -> bool:
        node: Element | None = self
        root = self.ownerDocument.documentElement
        while node is not None:
            if node is root:
                return True
            node = node.parent
        return False

    def contains(self, other: Element | None) -> bool:
        node = other
        while node is not None:
            if node is self:
                return True
            node = node.parent
        return False

    def iter_elements(self) -> Iterator[Element]:
        """Descendants in document order (not the element itself; no template content)."""
        for child in self.childNodes:
            if isinstance(child, Element):
                yield child
                if not child.opaque:
                    yield from child.iter_elements()

    def querySelector(self, selector: str) -> Element | None:
        sel = compile_selector(selector)
        return next((el for el in self.iter_elements() if sel.matches(el)), None)

    def querySelectorAll(self, selector: str) -> list[Element]:
        sel = compile_selector(selector)
        return [el for el in self.iter_elements() if sel.matches(el)]

    def matches(self, selector: str) -> bool:
        return compile_selector(selector).matches(self)

    def closest(self, selector: str) -> Element | None:
        sel = compile_selector(selector)
        node: Element | None = self
        while node is not None and node.handle:
            if sel.matches(node):
                return node
            node = node.parent
        return None

    def _detach(self) -> None:
        if self.parent is not None:
            self.parent.childNodes.remove(self)
            self.parent = None

    def _adopt(self, child: Element, index: int | None) -> None:
        if child.contains(self):
            raise ValueError("an element cannot be put inside itself")
        child._detach()
        child.parent = self
        if index is None:
            self.childNodes.append(child)
        else:
            self.childNodes.insert(index, child)

    def appendChild(self, child: Element) -> Element:
        self._adopt(child, None)
        self._op("insert", child.handle, None)
        return child

    def append(self, *children: Element) -> None:
        for child in children:
            self.appendChild(child)

    def prepend(self, child: Element) -> None:
        self._adopt(child, 0)
        self._op("insert", child.handle, 0)

    def insertBefore(self, child: Element, ref: Element | None) -> Element:
        if ref is None:
            return self.appendChild(child)
        if child is ref:
            return child
        self._adopt(child, self.childNodes.index(ref))
        self._op("insert", child.handle, ref.handle)
        return child

    def replaceWith(self, other: Element) -> None:
        parent = self.parent
        if parent is None or other is self:
            return
        other._detach()
        parent.childNodes[parent.childNodes.index(self)] = other
        other.parent = parent
        self.parent = None
        self.ownerDocument.ops.add(["replace", self.handle, other.handle])

    def replaceChildren(self, *children: Element) -> None:
        self._clear()
        self._op("text", "")
        for child in children:
            self.appendChild(child)

    def remove(self) -> None:
        if self.parent is not None:
            self._detach()
            self._op("remove")

    def _clear(self) -> None:
        for child in self.childNodes:
            child.parent = None
        self.childNodes = []

    # -- content -------------------------------------------------------------------------------

    @property
    def textContent(self) -> str:
        return "".join(
            c.data if isinstance(c, TextNode) else c.textContent for c in self.childNodes
        )

    @textContent.setter
    def textContent(self, text: str) -> None:
        text = str(text)
        self._clear()
        if text:
            node = TextNode(text)
            node.parent = self
            self.childNodes.append(node)
        if self.tag == "textarea":
            self._value = text
        self._op("text", text)

    @property
    def innerHTML(self) -> str:
        raise AttributeError("the model does not serialize: keep the HTML you set")

    @innerHTML.setter
    def innerHTML(self, html: str) -> None:
        self._clear()
        base, n = self._parse_into(html)
        self._op("html", html, base, n)

    def insertAdjacentHTML(self, where: str, html: str) -> None:
        if where != "beforeend":
            raise ValueError(f"insertAdjacentHTML({where!r}): only 'beforeend' is supported")
        base, n = self._parse_into(html)
        self._op("adj", html, base, n)

    def _parse_into(self, html: str) -> tuple[int, int]:
        if self.opaque:
            return 0, 0
        doc = self.ownerDocument
        base = doc._next
        for node in parse(html):
            built: Element | TextNode = (
                doc._build(node) if isinstance(node, Parsed) else TextNode(_text_of(node))
            )
            built.parent = self
            self.childNodes.append(built)
        return base, doc._next - base

    def cloneNode(self, deep: bool = True) -> Element:
        doc = self.ownerDocument
        base = doc._next
        copy = doc._copy(self, deep)
        doc.ops.add(["clone", base, self.handle, doc._next - base])
        return copy

    # -- attributes and properties ------------------------------------------------------------

    def getAttribute(self, name: str) -> str | None:
        return self.attrs.get(name)

    def hasAttribute(self, name: str) -> bool:
        return name in self.attrs

    def setAttribute(self, name: str, value: object) -> None:
        text = str(value)
        if self.attrs.get(name) != text:
            self.attrs[name] = text
            self._op("attr", name, text)

    def removeAttribute(self, name: str) -> None:
        if name in self.attrs:
            del self.attrs[name]
            self._op("attr", name, None)

    def _set_flag(self, name: str, on: bool) -> None:
        if on:
            self.setAttribute(name, "")
        else:
            self.removeAttribute(name)

    @property
    def dataset(self) -> DataSet:
        return DataSet(self)

    @property
    def style(self) -> Style:
        if self._style is None:
            self._style = Style(self)
        return self._style

    @property
    def classList(self) -> ClassList:
        return ClassList(self)

    @property
    def hidden(self) -> bool:
        return "hidden" in self.attrs

    @hidden.setter
    def hidden(self, on: bool) -> None:
        self._set_flag("hidden", bool(on))

    @property
    def disabled(self) -> bool:
        return "disabled" in self.attrs

    @disabled.setter
    def disabled(self, on: bool) -> None:
        self._set_flag("disabled", bool(on))

    @property
    def open(self) -> bool:
        return "open" in self.attrs

    @open.setter
    def open(self, on: bool) -> None:
        self._set_flag("open", bool(on))

    @property
    def title(self) -> str:
        return self.attrs.get("title", "")

    @title.setter
    def title(self, text: str) -> None:
        self.setAttribute("title", text)

    @property
    def placeholder(self) -> str:
        return self.attrs.get("placeholder", "")

    @placeholder.setter
    def placeholder(self, text: str) -> None:
        self.setAttribute("placeholder", text)

    @property
    def className(self) -> str:
        return self.attrs.get("class", "")

    @className.setter
    def className(self, text: str) -> None:
        self.setAttribute("class", text)

    @property
    def id(self) -> str:
        return self.attrs.get("id", "")

    @property
    def tabIndex(self) -> int:
        return int(self.attrs.get("tabindex", "-1") or -1)

    @tabIndex.setter
    def tabIndex(self, n: int) -> None:
        self.setAttribute("tabindex", str(int(n)))

    @property
    def value(self) -> str:
        if self._value is None:
            self._value = self._initial_value()
        return self._value

    @value.setter
    def value(self, text: str) -> None:
        self._value = str(text)
        self._op("prop", "value", self._value)

    def _initial_value(self) -> str:
        if self.tag == "textarea":
            return self.textContent
        if self.tag == "select":
            options = self.querySelectorAll("option")
            chosen = next((o for o in options if o.hasAttribute("selected")), None)
            chosen = chosen or (options[0] if options else None)
            return "" if chosen is None else chosen.attrs.get("value", chosen.textContent)
        return self.attrs.get("value", "")

    # -- what the view does for Python ---------------------------------------------------------

    def apply_update(self, ops: list[list[Any]], tails: list[str], final: bool) -> None:
        """A streaming-markdown update for this (opaque) element: ``ops`` as
        ``[depth, html, opens, replaces]`` (``pysse.render.update``), applied by the view."""
        self.opaque = True
        self._op("update", ops, tails, final)

    def focus(self, **options: bool) -> None:
        self._op("focus", options or None)

    def select(self) -> None:
        self._op("focus", {"select": True})

    def addEventListener(
        self, kind: str, fn: Listener, capture: bool = False, keys: tuple[str, ...] | None = None
    ) -> None:
        """Hear ``kind`` events here. ``keys`` (keydown): only those keys are forwarded, so
        the view does not send every keystroke to Python."""
        key = (kind, bool(capture))
        wanted = None if keys is None else frozenset(keys)
        if key not in self._listeners:
            self._listeners[key] = []
            self._keys[key] = wanted
        else:
            old = self._keys[key]
            wanted = None if old is None or wanted is None else old | wanted
            if wanted == old:
                self._listeners[key].append(fn)
                return
            self._keys[key] = wanted
        options = {"keys": sorted(wanted)} if wanted is not None else None
        self._op("listen", kind, bool(capture), options)
        self._listeners[key].append(fn)
