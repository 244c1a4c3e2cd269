"""The chat page's Python driven in CPython, against a model view: no browser, no worker.

``ModelPage`` builds the page's ``App`` (``pysse.app``) on the page's own HTML (web/index.html)
with in-memory ports: a dict for IndexedDB (``MemoryStore``), scripted bytes for the network
(``ScriptNet``), frames when the test says. What Python sends to its view, the ops, is applied
here to a second model of the page (``ModelView``), as ``web/view.js`` applies them to the real
one; after every batch the two must agree on every element Python knows (structure,
attributes, values), which checks the op protocol itself. An answer's rendered HTML (opaque to
Python) is built in the model view with ``DomWriter`` on ``dom_model``, as the browser would.

Events are dispatched the DOM's way: capture listeners from the root down, then the target's
and its ancestors' bubbling listeners; the view's own behaviour (Enter sends, Copy, scroll)
is the browser tests'.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dom_model import Element as RawElement

from pysse.app.app import App
from pysse.app.platform import Location, Platform
from pysse.app.storage import row_stamp
from pysse.app.tabs import HubTab, TabHub
from pysse.call.net import Probe, Sink, Timeouts
from pysse.render.dom import DomWriter
from pysse.render.frames import FrameLoop
from pysse.render.update import Op, Update
from pysse.view import Document, Element, Ops

ROOT = Path(__file__).resolve().parents[1]
STORES = ("chats", "bodies", "recordings", "meta", "html", "search")
RELAY = "http://relay.test/v1/chat/completions"


def page_body() -> str:
    """The page's ``<body>`` as index.html has it (the Format menu as the build leaves it)."""
    html = (ROOT / "web" / "index.html").read_text()
    return html[html.index("<body") : html.index("</body>") + len("</body>")]


class MemoryStore:
    """``StoreBackend`` in a dict of dicts (what web/store.js keeps in IndexedDB)."""

    def __init__(self) -> None:
        self.data: dict[str, dict[str, Any]] = {name: {} for name in STORES}
        self.fail: str = ""  # a DOMException name every call raises, when set

    def _check(self) -> None:
        if self.fail:
            raise RuntimeError(self.fail)

    async def open(self) -> bool:
        self._check()
        return True

    async def get(self, store: str, key: str) -> Any:
        self._check()
        return self.data[store].get(key)

    async def getMany(self, store: str, keys: list[str]) -> list[Any]:
        self._check()
        return [self.data[store].get(k) for k in keys]

    async def put(self, store: str, key: str, value: Any) -> None:
        self._check()
        self.data[store][key] = value

    async def putIfStamp(
        self, chat_id: str, expected: str | None, entries: list[tuple[str, str, Any]]
    ) -> tuple[bool, str | None]:
        """The compare-and-set of ``web/store.js``: the check and the writes at once."""
        self._check()
        row = self.data["chats"].get(chat_id)
        seen = None if row is None else row_stamp(row)
        if seen != expected:
            return False, seen
        for store, key, value in entries:
            self.data[store][key] = value
        return True, seen

    async def delete(self, store: str, key: str) -> None:
        self._check()
        self.data[store].pop(key, None)

    async def all(self, store: str) -> list[Any]:
        self._check()
        return [self.data[store][k] for k in sorted(self.data[store])]

    async def keys(self, store: str) -> list[str]:
        self._check()
        return sorted(self.data[store])

    def _prefixed(self, store: str, prefix: str) -> list[str]:
        return sorted(k for k in self.data[store] if k.startswith(prefix))

    async def delPrefix(self, store: str, prefix: str) -> None:
        self._check()
        for k in self._prefixed(store, prefix):
            del self.data[store][k]

    async def getPrefix(self, store: str, prefix: str) -> list[Any]:
        self._check()
        return [self.data[store][k] for k in self._prefixed(store, prefix)]

    async def keysPrefix(self, store: str, prefix: str) -> list[str]:
        self._check()
        return self._prefixed(store, prefix)

    async def clear(self) -> None:
        self._check()
        for d in self.data.values():
            d.clear()


class _Played:
    def __init__(self) -> None:
        self.aborted = False
        self.task: asyncio.Future[None] | None = None

    def abort(self) -> None:
        self.aborted = True

    def revive(self) -> None:
        """(A scripted answer never dies by itself.)"""


class ScriptNet:
    """``Net`` that answers each request with the next queued body, fed ``chunk`` bytes a
    turn of the event loop, as ``bridge.js`` would call its sink."""

    def __init__(self) -> None:
        self.queue: list[tuple[bytes, int, bool, str]] = []
        self.requests: list[dict[str, Any]] = []
        self.probed: list[str] = []  # every GET (a format probe, a model list)
        self.probes: dict[str, Probe] = {}  # what a GET to that URL finds (else "{}")

    def play(self, body: bytes, chunk: int = 64, end: bool = True, answer_id: str = "") -> None:
        """The next request's answer; ``end=False``: the connection then stays silent;
        ``answer_id``: the relay keeps it under that id (a reload can reattach)."""
        self.queue.append((body, chunk, end, answer_id))

    def start(self, url: str, headers: Any, body: str, sink: Sink, t: Timeouts) -> _Played:
        self.requests.append({"url": url, "headers": dict(headers), "body": json.loads(body)})
        played = _Played()
        data, chunk, end, answer_id = self.queue.pop(0) if self.queue else (b"", 64, True, "")
        feed = self._feed(sink, played, data, chunk, end, answer_id)
        played.task = asyncio.ensure_future(feed)
        return played

    def reattach(
        self, url: str, headers: Any, answer_id: str, received: int, sink: Sink, t: Timeouts
    ) -> _Played:
        played = self.start(url, headers, "{}", sink, t)
        self.requests[-1]["reattach"] = (answer_id, received)
        return played

    async def probe(self, url: str, limit: int = 8192) -> Probe:
        self.probed.append(url)
        return self.probes.get(url) or Probe(True, 200, "pysse", "{}")

    async def _feed(
        self, sink: Sink, played: _Played, data: bytes, chunk: int, end: bool, answer_id: str
    ) -> None:
        sink.on_open(200, "text/event-stream", "", "", answer_id)
        for i in range(0, len(data), chunk):
            await asyncio.sleep(0)
            if played.aborted:
                sink.on_read_error("AbortError", "Stopped by the user")
                return
            sink.on_chunk(data[i : i + chunk])
        await asyncio.sleep(0)
        if end:
            sink.on_end()


class ModelView:
    """The ops applied to a second model of the page, as ``web/view.js`` applies them to the
    real one; answers' opaque HTML in ``dom_model`` elements (``html_of``)."""

    def __init__(self, body: str) -> None:
        self.doc = Document(body)
        self.held: dict[int, Element] = dict(self.doc._elements)  # (the view's Map: strong)
        self.opaque: dict[int, RawElement] = {}  # handle -> its rendered content
        self.writers: dict[int, DomWriter] = {}
        self.texts: dict[int, str] = {}
        self.stored: dict[str, str] = {}  # localStorage
        self.downloads: list[tuple[str, Any, str]] = []
        self.srcs: dict[int, tuple[bytes, str]] = {}  # an image's bytes (the "src" op)
        self.cites: dict[int, list[Any]] = {}  # an answer's source marks (the "cite" op)
        self.runs: dict[int, list[Any]] = {}  # a restored answer's kept runs (the "runs" op)
        self.copies: list[str | None] = []  # what a table's Copy asked for
        self.scrolls: list[list[Any]] = []
        self.focused: Element | None = None
        self.observed: set[int] = set()
        self.marks: list[list[Any]] = []
        self.calls: list[list[Any]] = []

    def el(self, h: int) -> Element:
        found = self.doc.element(h)
        assert found is not None, f"no element #{h} in the view"
        return found

    def _number(self, el: Element, h: int) -> int:
        """Renumber ``el``'s tree from ``h`` (the handles the page's Python gave it)."""
        doc = self.doc
        doc._elements.pop(el.handle, None)
        el.handle = h
        doc._elements[h] = el
        self.held[h] = el
        h += 1
        for kid in (el.content or el).childNodes:
            if isinstance(kid, Element):
                h = self._number(kid, h)
        return h

    def _raw(self, h: int) -> RawElement:
        if h not in self.opaque:
            self.opaque[h] = RawElement("div", "<div>")
        return self.opaque[h]

    def html_of(self, el: Element) -> str:
        """The rendered HTML of opaque element ``el`` (an answer's ``.settled``)."""
        raw = self.opaque.get(el.handle)
        return raw.inner() if raw is not None else ""

    def apply(self, ops: list[list[Any]], blobs: list[bytes]) -> None:
        doc = self.doc
        saved = doc.ops
        doc.ops = Ops()  # (the view's own writes are not ops)
        try:
            for op in ops:
                getattr(self, "op_" + op[0])(*op[1:], blobs=blobs)
        finally:
            doc.ops = saved

    def op_new(self, h: int, tag: str, blobs: list[bytes]) -> None:
        self._number(self.doc.createElement(tag), h)

    def op_clone(self, h: int, src: int, n: int, blobs: list[bytes]) -> None:
        copy = self.el(src).cloneNode(True)
        assert self._number(copy, h) - h == n

    def op_attr(self, h: int, name: str, value: str | None, blobs: list[bytes]) -> None:
        if value is None:
            self.el(h).removeAttribute(name)
        else:
            self.el(h).setAttribute(name, value)

    def op_prop(self, h: int, name: str, value: Any, blobs: list[bytes]) -> None:
        setattr(self.el(h), name, value)

    def op_style(self, h: int, prop: str, value: str, blobs: list[bytes]) -> None:
        setattr(self.el(h).style, prop, value)

    def op_text(self, h: int, text: str, blobs: list[bytes]) -> None:
        self.writers.pop(h, None)
        if h in self.opaque:
            self.opaque[h] = RawElement("div", "<div>")
        self.el(h).textContent = text

    def op_html(self, h: int, html: str, base: int, n: int, blobs: list[bytes]) -> None:
        el = self.el(h)
        self.writers.pop(h, None)
        if n == 0 and base == 0:  # opaque: the view's content
            raw = self.opaque[h] = RawElement("div", "<div>")
            raw.insertAdjacentHTML("beforeend", html)
            return
        el.innerHTML = html
        got = base
        for kid in el.children:
            got = self._number(kid, got)
        assert got - base == n, (h, html[:80])

    def op_adj(self, h: int, html: str, base: int, n: int, blobs: list[bytes]) -> None:
        before = len(self.el(h).children)
        self.el(h).insertAdjacentHTML("beforeend", html)
        got = base
        for kid in self.el(h).children[before:]:
            got = self._number(kid, got)
        assert got - base == n

    def op_insert(self, parent: int, h: int, ref: int | None, blobs: list[bytes]) -> None:
        p = self.el(parent)
        if ref == 0:
            p.prepend(self.el(h))
        else:
            p.insertBefore(self.el(h), self.el(ref) if ref else None)

    def op_replace(self, old: int, h: int, blobs: list[bytes]) -> None:
        self.el(old).replaceWith(self.el(h))

    def op_remove(self, h: int, blobs: list[bytes]) -> None:
        self.el(h).remove()

    def op_drop(self, handles: list[int], blobs: list[bytes]) -> None:
        for h in handles:
            self.held.pop(h, None)
            self.opaque.pop(h, None)
            self.writers.pop(h, None)

    def op_listen(self, *args: Any, blobs: list[bytes]) -> None:
        """(The model's listeners are the page's own: ``ModelPage.fire``.)"""

    def op_update(
        self, h: int, ops: list[list[Any]], tails: list[str], final: bool, blobs: list[bytes]
    ) -> None:
        writer = self.writers.get(h)
        if writer is None:
            writer = self.writers[h] = DomWriter(self._raw(h))
        writer.apply(Update([Op(*o) for o in ops], list(tails), final))

    def op_answer(self, h: int, text: str, reset: bool, blobs: list[bytes]) -> None:
        self.texts[h] = ("" if reset else self.texts.get(h, "")) + text

    def op_focus(self, h: int, options: Any, blobs: list[bytes]) -> None:
        self.focused = self.el(h)

    def op_scroll(self, what: str, *args: Any, blobs: list[bytes]) -> None:
        self.scrolls.append([what, *args])

    def op_observe(self, h: int, on: bool, blobs: list[bytes]) -> None:
        (self.observed.add if on else self.observed.discard)(h)

    def op_call(self, ident: int, name: str, args: list[Any], blobs: list[bytes]) -> None:
        self.calls.append([ident, name, args])

    def op_mark(self, h: int, where: list[int], blobs: list[bytes]) -> None:
        self.marks.append([h, where])

    def op_cite(self, h: int, marks: list[Any], blobs: list[bytes]) -> None:
        self.cites[h] = marks

    def op_runs(self, h: int, items: list[Any], blobs: list[bytes]) -> None:
        self.runs[h] = items

    def op_download(self, name: str, data: Any, mime: str, blobs: list[bytes]) -> None:
        if isinstance(data, dict):
            data = blobs[data["$blob"]]
        self.downloads.append((name, data, mime))

    def op_src(self, h: int, data: Any, mime: str, blobs: list[bytes]) -> None:
        assert self.el(h).tagName == "IMG"
        self.srcs[h] = (blobs[data["$blob"]], mime)

    def op_copy(self, text: str | None, blobs: list[bytes]) -> None:
        self.copies.append(text)

    def op_store(self, key: str, value: str, blobs: list[bytes]) -> None:
        self.stored[key] = value


def same(python: Element, view: Element) -> list[str]:
    """Where the view's element differs from Python's model of it (its tree, attributes)."""
    problems: list[str] = []
    if (python.tag, python.attrs) != (view.tag, view.attrs):
        problems.append(f"#{python.handle}: {python.tag} {python.attrs} != {view.attrs}")
    if not python.opaque:
        ours = [c.handle for c in python.children]
        theirs = [c.handle for c in view.children]
        if ours != theirs:
            problems.append(f"#{python.handle} children {ours} != {theirs}")
        for a, b in zip(python.children, view.children, strict=False):
            problems.extend(same(a, b))
    return problems


class ModelPage:
    """The page's Python with in-memory ports and a model view (see the module docstring)."""

    def __init__(
        self,
        store: MemoryStore | None = None,
        net: ScriptNet | None = None,
        settings: dict[str, Any] | None = None,
        site: dict[str, Any] | None = None,
        confirm: bool = True,
        tabs: HubTab | None = None,
    ) -> None:
        self.store = store if store is not None else MemoryStore()
        self.tabs = tabs if tabs is not None else TabHub().tab()  # ``hub.tab()``: another tab
        self.net = net if net is not None else ScriptNet()
        self.confirm = confirm
        body = page_body()
        self.view = ModelView(body)
        self.doc = Document(body)
        self.loop = FrameLoop()
        self.clock_ms = 0.0
        self.platform = Platform(
            net=self.net,
            store=self.store,
            clock=self.clock,
            location=Location("http://page.test/", "http://page.test", ""),
            loop=self.loop,
            now_epoch_ms=lambda: 1.8e12 + self.clock_ms,
            stored_settings=json.dumps(settings or {}),
            tabs=self.tabs,
        )
        self.app = App(site if site is not None else {"relay": RELAY}, self.platform, self.doc)
        self.app.inspector.bind()
        self.batches = 0

    def clock(self) -> float:
        self.clock_ms += 1.0  # (a millisecond a reading: time moves, deterministically)
        return self.clock_ms

    # -- running ------------------------------------------------------------------------------

    async def boot(self, early: tuple[str, ...] = ()) -> None:
        await self.app.boot(list(early))
        await self.settle()

    async def settle(self, seconds: float = 30.0) -> None:
        """Turn the event loop, render frames and deliver ops until nothing is left to do
        (a scripted answer played to its end, the restorer done, the saves written; the
        page's own timers, such as a search refreshed half a second after a change, run in
        real time)."""
        deadline = time.monotonic() + seconds
        idle = 0
        while time.monotonic() < deadline:
            await asyncio.sleep(0)
            if self.loop.pending:
                self.loop.on_frame()
            busy = self.deliver() or self.loop.pending
            idle = 0 if busy else idle + 1
            if idle > 30:
                if not self._tasks_running(self.tabs.hub):
                    return
                await asyncio.sleep(0.005)  # a task waits on a timer
        raise AssertionError("the page never settled")

    @staticmethod
    def _tasks_running(hub: TabHub) -> bool:
        """Tasks still to finish (a task waiting for another tab's lock is idle: that tab
        decides when it ends)."""
        current = asyncio.current_task()
        running = sum(1 for t in asyncio.all_tasks() if t is not current and not t.done())
        waiting = sum(1 for q in hub.waiters.values() for _, fut in q if not fut.done())
        return running > waiting

    def deliver(self) -> bool:
        """Apply the waiting ops to the model view (answering its calls) and check it."""
        if not self.doc.ops:
            return False
        items, blobs = self.doc.ops.take()
        self.view.apply(items, blobs)
        self.batches += 1
        for ident, name, args in self.view.calls:
            self.doc.dispatch({"type": "reply", "id": ident, "value": self._answer(name, args)})
        self.view.calls.clear()
        problems = same(self.doc.body, self.view.doc.body)
        assert problems == [], problems[:5]
        return True

    def _answer(self, name: str, args: list[Any]) -> Any:
        if name == "confirm":
            return self.confirm
        if name == "texts":
            raw = self.view.opaque.get(self.view.el(args[0]).querySelector(".settled").handle)  # type: ignore[union-attr]
            return [t.data for t in _texts(raw)] if raw is not None else []
        if name == "styles":  # (the page's CSS, as the view reads it from its style sheets)
            return ".msg { color: black }"
        raise AssertionError(f"unknown call {name}")

    # -- the reader ----------------------------------------------------------------------------

    def q(self, selector: str, root: Element | None = None) -> Element:
        el = (root or self.doc.documentElement).querySelector(selector)
        assert el is not None, f"no {selector} on the page"
        return el

    def fire(self, target: Element, kind: str, **data: Any) -> None:
        """``kind`` at ``target``, through its ancestors' capture and bubbling listeners."""
        path: list[Element] = []
        node: Element | None = target
        while node is not None and node.handle:
            path.append(node)
            node = node.parent
        record = {"type": kind, "t": target.handle, "e": id(path) + len(path), **data}
        for el in reversed(path):
            if (kind, True) in el._listeners:
                self.doc.dispatch({**record, "h": el.handle, "cap": True})
        for el in path:
            if (kind, False) in el._listeners:
                self.doc.dispatch({**record, "h": el.handle, "cap": False})

    def click(self, selector_or_el: str | Element, root: Element | None = None) -> None:
        el = self.q(selector_or_el, root) if isinstance(selector_or_el, str) else selector_or_el
        self.fire(el, "click")

    def send(self, text: str) -> None:
        """Enter in the composer: the view sends the text (and empties the composer)."""
        self.fire(self.q("[data-role=prompt]"), "send", detail=text)

    def type_into(self, selector: str, value: str, kind: str = "input") -> None:
        self.fire(self.q(selector), kind, value=value)

    # -- reading the page ----------------------------------------------------------------------

    def answers(self) -> list[Element]:
        return self.app.log.querySelectorAll("[data-role=assistant]")

    def answer_html(self, art: Element) -> str:
        return self.view.html_of(self.q(".settled", art))

    def log_texts(self) -> list[str]:
        out = []
        for art in self.app.log.querySelectorAll("article[data-id]"):
            if art.getAttribute("data-role") == "user":
                out.append(self.q(".content", art).textContent)
            else:
                out.append(art.getAttribute("data-text") or "")
        return out


def _texts(raw: RawElement) -> Iterator[Any]:
    for child in raw.children:
        if child.nodeType == 3:
            yield child
        else:
            yield from _texts(child)  # type: ignore[arg-type]
