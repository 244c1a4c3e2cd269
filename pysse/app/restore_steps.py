"""Showing a long chat again without freezing the page (issue #28): which restored answer to
render next, how to render one in bounded steps, and the key of its cached HTML.

Opening a chat of 100 long answers used to render all of them, markdown and DOM, in one task
(seconds on a phone). Now the page puts a placeholder per answer on screen at once and renders
them afterwards, a slice of work per task: the answers in view first, newest first, then the
rest in idle time (``RestoreOrder``). An answer without cached HTML is rendered by the
streaming renderer in pieces of text (``render_steps``), so no single step parses a whole long
answer; its final HTML equals a one-shot ``render()``, which is what the cache keeps.

The cache (``cache_key``): each finished answer's HTML is kept beside the chat, under a key made
of the renderer's identity (the exact wheels the page runs: any change to pysse, markdown-it or
pygments is another key), the image-host policy (it changes the HTML of images) and the text.
A key that does not match means the answer is rendered again from its markdown. HTML in an
imported file is never used: imports carry markdown only and are rendered here.

Pure, so the order and the steps are tested in CPython.
"""

from __future__ import annotations

import bisect
import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping
from html.parser import HTMLParser
from typing import Any

from ..render import math
from ..render.streaming import StreamingMarkdown
from ..render.update import Update

__all__ = [
    "HTML_FORMAT",
    "STEP_CHARS",
    "WAIT",
    "RestoreOrder",
    "cache_key",
    "placeholder_px",
    "render_steps",
    "renderer_made",
]

# Characters of markdown per step: ~4 ms of rendering in Pyodide on a desktop CPU (measured:
# 1,500 took 12-15 ms), well inside a 50 ms task on a phone-class one (4x slower).
STEP_CHARS = 500


def renderer_id(site: Mapping[str, Any]) -> str:
    """What makes the HTML what it is, besides the text and the policy: the wheels the page
    loads (their paths carry content hashes: ``wheels/HASH/name.whl``). Without a list (a
    page built some other way) the package's version."""
    wheels = site.get("wheels")
    if isinstance(wheels, list) and wheels:
        return "\n".join(str(w) for w in wheels)
    from .. import __version__

    return f"pysse {__version__}"


# The shape of the HTML the renderer writes. The wheels' hashes already change the key when
# pysse changes; this also does when the page is built without a wheel list (the version then
# stands for the renderer). 2: blocks carry dir="auto", code and math dir="ltr" (issue #42).
# 3: a table cell's alignment is a class (align-start/end/center), not a style; emphasis next
# to CJK text (render/cjk.py). 4: a table in a box with its tools, a code block's Download.
HTML_FORMAT = "4"


def cache_key(renderer: str, image_hosts: Iterable[str], text: str) -> str:
    """The key a cached answer's HTML is valid for (hex, 32 characters)."""
    h = hashlib.sha256()
    for part in (HTML_FORMAT, renderer, ",".join(sorted(image_hosts))):
        h.update(part.encode())
        h.update(b"\0")
    h.update(text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:32]


def placeholder_px(text: str, width_chars: int = 90, line_px: int = 24) -> int:
    """A guess of an answer's rendered height, for its placeholder before it is rendered (and
    while it is off screen and was never laid out): close enough that the scrollbar does not
    jump much when it renders."""
    lines = 0
    for line in text.split("\n"):
        lines += 1 + len(line) // width_chars
    return 48 + line_px * lines


WAIT = Update()  # render_steps: a lazy resource (a lexer, math) is on its way: come back later


def render_steps(
    text: str, md: StreamingMarkdown, step_chars: int = STEP_CHARS
) -> Iterator[Update]:
    """Render ``text`` with ``md`` (a fresh ``StreamingMarkdown``) in steps of at most
    ``step_chars`` characters each: one ``Update`` per step, to apply in order; the last one
    is the final state (``final``), equal to a one-shot render. Steps are cut at line ends
    where there is one, so most steps settle whole lines. ``WAIT`` (not to apply) while a lazy
    resource the answer needs is on its way (``pysse.render.lazy``): the caller renders
    something else meanwhile and comes back when it arrived or failed."""
    i = 0
    while i < len(text):
        end = min(len(text), i + step_chars)
        if end < len(text):
            nl = text.rfind("\n", i, end)
            if nl > i:
                end = nl + 1
        md.append(text[i:end])
        i = end
        yield md.update()
        while md.busy:  # a closed code fence being highlighted: one slice per step
            yield md.update()
    while md.waiting:
        yield WAIT
    last = md.finish()
    while not last.final:  # pragma: no cover - a renderer that finishes in slices
        yield last
        last = md.finish()
    yield last


class RestoreOrder:
    """Which restored answer to render next: those in view (or about to be) first, newest
    first; then every other one, newest first (a reader at the bottom scrolls up into them).
    Answers are ordered by ``when`` (their creation time: a chat's path is always in that
    order), whatever order they were added in."""

    def __init__(self) -> None:
        self._pending: list[tuple[float, str]] = []  # (when, id), oldest first
        self._ids: set[str] = set()
        self._visible: set[str] = set()

    def add(self, message_id: str, when: float) -> None:
        if message_id not in self._ids:
            self._ids.add(message_id)
            bisect.insort(self._pending, (when, message_id))

    def seen(self, message_id: str, visible: bool) -> None:
        """The answer came into view (or near it), or left it."""
        if visible:
            self._visible.add(message_id)
        else:
            self._visible.discard(message_id)

    def done(self, message_id: str) -> None:
        if message_id in self._ids:
            self._ids.discard(message_id)
            self._pending = [p for p in self._pending if p[1] != message_id]
        self._visible.discard(message_id)

    def clear(self) -> None:
        self._pending.clear()
        self._ids.clear()
        self._visible.clear()

    @property
    def urgent(self) -> bool:
        """An answer in view is still to be rendered."""
        return any(m in self._ids for m in self._visible)

    def __len__(self) -> int:
        return len(self._pending)

    def __contains__(self, message_id: object) -> bool:
        return message_id in self._ids

    def next(self) -> str | None:
        ahead = self.peek(1)
        return ahead[0] if ahead else None

    def peek(self, n: int) -> list[str]:
        """The next ``n`` answers to render, in order."""
        newest_first = [m for _, m in reversed(self._pending)]
        visible = [m for m in newest_first if m in self._visible]
        rest = [m for m in newest_first if m not in self._visible]
        return (visible + rest)[:n]


# -- cached HTML: only what the renderer emits -----------------------------------------------
# The cache's key is a hash anyone who can write the site's IndexedDB can recompute, so HTML
# read back from it is accepted only if it holds nothing the renderer never emits (its tags
# and attributes, a safe URL in href/src, no style at all); anything else is dropped
# and the answer rendered again from its markdown. (The page's CSP stops script, not <form>,
# <style>, <meta http-equiv> or a phishing link.)
_TAGS = (
    frozenset(
        [
            "a",
            "b",
            "blockquote",
            "br",
            "button",
            "code",
            "del",
            "div",
            "em",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "hr",
            "i",
            "img",
            "input",
            "label",
            "li",
            "ol",
            "p",
            "pre",
            "s",
            "section",
            "span",
            "strong",
            "sub",
            "sup",
            "table",
            "tbody",
            "td",
            "th",
            "thead",
            "tr",
            "ul",
        ]
    )
    | math.ELEMENTS
)
_ATTRS = (
    frozenset(
        [
            "class",
            "title",
            "alt",
            "start",
            "checked",
            "disabled",
            "type",
            "aria-label",
            "aria-hidden",
            "tabindex",
            "rel",
            "target",
            "id",
            "colspan",
            "rowspan",
            "encoding",  # (math's annotation: the formula's TeX)
            "loading",  # (an allowed host's image: lazy, no referrer)
            "referrerpolicy",
        ]
    )
    | math.ATTRIBUTES
)
_URL = {
    "href": re.compile(r"(?i)^(https?:|mailto:|#)"),
    "src": re.compile(r"(?i)^(https?:|data:image/(png|gif|jpeg|webp)[;,])"),
}


class _Check(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ok = True

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.ok = self.ok and tag in _TAGS and all(_attr_ok(k, v or "") for k, v in attrs)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_comment(self, data: str) -> None:
        self.ok = False

    def handle_decl(self, decl: str) -> None:
        self.ok = False

    def handle_pi(self, data: str) -> None:
        self.ok = False


def _attr_ok(name: str, value: str) -> bool:
    if name in _URL:
        return bool(_URL[name].match(value.strip()))
    if name == "dir":  # (each block's direction, issue #42: render/direction.py)
        return value in ("auto", "ltr", "rtl")
    if name == "role":  # (a table's tools: render/markdown.py)
        return value == "group"
    return name in _ATTRS or name.startswith("data-")


def renderer_made(html: str) -> bool:
    """Whether cached ``html`` holds only tags and attributes the renderer emits (see above):
    True, it may be shown as is; False, render the answer again from its text."""
    check = _Check()
    check.feed(html)
    check.close()
    return check.ok
