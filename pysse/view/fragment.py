"""HTML text -> a list of node trees, as a browser's parser would build them from the HTML the
page itself writes.

Why it must match the browser: the page's Python (``dom.py``) and its JavaScript view
(``web/view.js``) name every element by a number, its *handle*. When Python sets an element's
``innerHTML``, both sides parse the same string and number the new elements in document order
(pre-order) from the same first number. So the two parsers must produce the same elements in
the same order. ``html.parser`` is a tokenizer, not HTML5's tree builder; the HTML this
project writes is well formed (every element closed, attributes quoted), and the one tree
builder rule it meets is applied here: a ``<tr>`` directly inside a ``<table>`` gets the
``<tbody>`` the browser adds. ``web/view.js`` checks the count on every insertion and says so
loudly on a mismatch (``body[data-view-error]``, which the browser tests check).

Answers' markdown HTML is never parsed here: it goes to the view opaque (see ``dom.py``).
"""

from __future__ import annotations

from html.parser import HTMLParser

__all__ = ["VOID", "Element", "Node", "Text", "parse"]

VOID = frozenset(
    [
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "source",
        "track",
        "wbr",
    ]
)
_TABLE_SECTIONS = frozenset(["thead", "tbody", "tfoot"])


class Node:
    """A parsed node: an element (``tag``, ``attrs``, ``children``) or a text (``data``)."""

    __slots__ = ()


class Text(Node):
    __slots__ = ("data",)

    def __init__(self, data: str) -> None:
        self.data = data


class Element(Node):
    __slots__ = ("attrs", "children", "tag")

    def __init__(self, tag: str, attrs: dict[str, str]) -> None:
        self.tag = tag
        self.attrs = attrs
        self.children: list[Node] = []


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#fragment", {})
        self.stack: list[Element] = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        parent = self.stack[-1]
        if tag == "tr" and parent.tag == "table":  # HTML5: the implied <tbody>
            body = Element("tbody", {})
            parent.children.append(body)
            self.stack.append(body)
            parent = body
        el = Element(tag, {name: value or "" for name, value in attrs})
        parent.children.append(el)
        if tag not in VOID:
            self.stack.append(el)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return
            if tag == "table" and self.stack[i].tag in _TABLE_SECTIONS:
                continue  # an implied <tbody> closes with its table

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(Text(data))


def parse(html: str) -> list[Node]:
    """The top-level nodes of ``html`` (a fragment: no implied ``<html>``/``<body>``)."""
    builder = _Builder()
    builder.feed(html)
    builder.close()
    return builder.root.children
