"""Restored answers rendered after they are on screen (issue #28): ``LogView`` puts each one in
the log as a placeholder of about its height (``data-pending``), and this renders them a slice
of work per task, in ``restore_steps.RestoreOrder``'s order: those in view first (the view's
``IntersectionObserver`` says which: ``observe`` ops, ``seen`` events), newest first, then the
rest after them. An answer whose HTML is in the store's cache under its key
(``restore_steps.cache_key``) is put in at once; any other is rendered from its markdown in
steps (``render_steps``) and its HTML then cached. Off screen, a rendered answer costs no
layout or paint (``content-visibility: auto`` in web/style.css).
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Any

from ..call.extras_view import attr, writer_for
from ..render import lazy
from .message_view import show_marks, show_runs
from .platform import spawn
from .restore_steps import (
    WAIT,
    RestoreOrder,
    cache_key,
    placeholder_px,
    render_steps,
    renderer_id,
    renderer_made,
)
from .settings import image_hosts

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ..chats.conversation import Message
    from ..render.update import Update
    from ..view import Event
    from .ports import RestorerHost

__all__ = ["Restorer"]

SLICE_MS = 8.0  # work per task: input and frames go on between slices
FETCH_BATCH = 6  # cached answers read from the store per round trip
IDLE_S = 0.004  # an idle slice waits this long: what is waiting (events, frames) goes first


class _Item:
    """One answer waiting to be rendered: its placeholder and, once started, its steps."""

    def __init__(self, art: Any, msg: Message) -> None:
        self.art = art
        self.msg = msg
        self.steps: Iterator[Update] | None = None
        self.writer: Any = None
        self.md: Any = None


class Restorer:
    def __init__(self, app: RestorerHost) -> None:
        self.app = app
        self.order = RestoreOrder()
        self.items: dict[str, _Item] = {}
        self.chat_id = ""
        self.renderer = renderer_id(app.site)
        self.cached: dict[str, str] = {}  # message id -> its cached entry's key (in the store)
        self.html: dict[str, str] = {}  # message id -> cached HTML read so far
        self.generation = 0
        self.keys_ready = False  # the cache's keys for this chat are known
        self.scheduled = ""  # "", "urgent" or "idle": the next slice asked for
        self.running = False
        self.current: str | None = None  # the answer being rendered in steps
        # for tests and tools: answers rendered, in order, and how
        self.rendered: list[str] = []
        self.from_markdown = 0
        self.from_cache = 0
        self.rejected = 0  # cached HTML the renderer would not have made: rendered again
        self.observed: set[int] = set()  # handles the view reports on (in view or not)
        self.waiting: dict[str, _Item] = {}  # rendering, waiting for a lexer or math
        lazy.REGISTRY.subscribe(self._arrived)
        # the view's IntersectionObserver on the log (a margin of a screen above and below)
        app.log.addEventListener("seen", self._on_seen)

    # -- from the log view ---------------------------------------------------------------------

    def reset(self, chat_id: str) -> None:
        """Another chat is shown: what was waiting for the old one is dropped."""
        for handle in self.observed:
            self.app.doc.ops.add(["observe", handle, False])
        self.observed.clear()
        self.waiting.clear()
        self.order.clear()
        self.items.clear()
        self.cached.clear()
        self.html.clear()
        self.chat_id = chat_id
        self.current = None
        self.generation += 1
        self.keys_ready = False
        spawn(self._load_keys(chat_id, self.generation))

    def placeholder(self, art: Any, msg: Message) -> None:
        """``art`` (an answer's element, its ``.settled`` empty) waits to be rendered."""
        px = placeholder_px(msg.text)
        art.dataset.pending = "1"
        art.style.containIntrinsicBlockSize = f"auto {px}px"
        art.querySelector(".settled").style.minHeight = f"{px}px"
        self.add(art, msg)

    def add(self, art: Any, msg: Message) -> None:
        """(Again) in the log: render it in its turn."""
        if msg.id not in self.items:
            self.items[msg.id] = _Item(art, msg)
        self.order.add(msg.id, msg.created)
        self._observe(art, True)
        self._ask("urgent")  # the newest first, before the observer has said what is in view

    def _observe(self, art: Any, on: bool) -> None:
        if on != (art.handle in self.observed):
            (self.observed.add if on else self.observed.discard)(art.handle)
            self.app.doc.ops.add(["observe", art.handle, on])

    # -- scheduling ----------------------------------------------------------------------------

    def _on_seen(self, e: Event) -> None:
        """The view's report: ``[[handle, in view], ...]``."""
        for handle, inside in e.detail or []:
            el = self.app.doc.element(int(handle))
            if el is not None:
                self.order.seen(attr(el, "data-id"), bool(inside))
        if self.order.urgent:
            self._ask("urgent")

    def _ask(self, kind: str) -> None:
        """A slice soon: "urgent" (an answer in view waits) in the next turn of the loop;
        "idle" a little later, so that the events and frames waiting in the meantime go
        first (in a worker: the main thread's messages; on the main thread: input)."""
        if not self.keys_ready or self.scheduled in ("urgent", kind):
            return
        self.scheduled = kind
        loop = asyncio.get_event_loop()
        if kind == "urgent":
            loop.call_soon(self._run, "urgent")
        else:
            loop.call_later(IDLE_S, self._run, "idle")

    def _run(self, kind: str) -> None:
        if self.scheduled != kind:
            return  # an urgent slice was asked for meanwhile and ran instead
        self.scheduled = ""
        if not self.running:
            spawn(self._slice())

    async def _slice(self) -> None:
        self.running = True
        gen = self.generation
        clock = self.app.platform.clock
        try:
            start = clock()
            while len(self.order) and clock() - start < SLICE_MS:
                # an answer begun is finished first: never two half-rendered at once
                mid = self.current if self.current in self.order else self.order.next()
                self.current = mid
                item = self.items.get(mid or "")
                if item is None or not item.art.isConnected:
                    self.order.done(mid or "")  # no longer on screen: added again if shown
                    continue
                if mid in self.cached and mid not in self.html and item.steps is None:
                    await self._fetch(mid or "")
                    if gen != self.generation:
                        return
                    start = clock()
                    continue
                try:
                    self._step(item)
                except Exception as exc:  # never a stuck queue: the text, as text
                    print(f"pysse: could not render answer {mid}: {exc!r}", file=sys.stderr)
                    item.art.querySelector(".settled").textContent = item.msg.text
                    self._done(item)
        finally:
            self.running = False
        if gen == self.generation and len(self.order):
            self._ask("urgent" if self.order.urgent else "idle")

    # -- rendering -----------------------------------------------------------------------------

    def _hosts(self) -> frozenset[str]:
        return image_hosts(self.app.settings)

    def _step(self, item: _Item) -> None:
        msg = item.msg
        settled = item.art.querySelector(".settled")
        settled.opaque = True  # the answer's HTML: the view's, not the model's
        html = self.html.pop(msg.id, None)
        if html is not None and item.steps is None:
            settled.innerHTML = html
            self.from_cache += 1
            self._done(item)
            return
        if item.steps is None:
            from ..render.streaming import StreamingMarkdown  # see App.md_for

            item.md = StreamingMarkdown(md=self.app.md_for(self._hosts()))
            item.steps = render_steps(msg.text, item.md)
            item.writer = writer_for(settled)
        assert item.writer is not None
        update = next(item.steps, None)
        if update is WAIT:  # a lexer or math on its way: the others first, this one after
            self.order.done(msg.id)
            self.current = None
            self.waiting[msg.id] = item
            return
        if update is not None:
            item.writer.apply(update)
            if not update.final:
                return
        self.from_markdown += 1
        if not item.md.lacking:  # (rendered without a resource that failed: not kept)
            self.save(self.chat_id, msg, str(item.md.html), self._hosts())
        self._done(item)

    def _arrived(self, _resource: Any) -> None:
        """A lazy resource arrived (or failed): the answers waiting for it go on."""
        for mid, item in list(self.waiting.items()):
            if not item.md.waiting:
                del self.waiting[mid]
                self.order.add(mid, item.msg.created)
        if len(self.order):
            self._ask("urgent")

    def _done(self, item: _Item) -> None:
        art = item.art
        show_marks(art, item.msg.text, item.msg.citations)
        show_runs(art, item.msg.runs)
        art.removeAttribute("data-pending")
        art.querySelector(".settled").style.minHeight = ""
        self._observe(art, False)
        self.order.done(item.msg.id)
        self.items.pop(item.msg.id, None)
        self.rendered.append(item.msg.id)

    # -- the cache -----------------------------------------------------------------------------

    def key_for(self, msg: Message, hosts: frozenset[str] | None = None) -> str:
        return cache_key(self.renderer, self._hosts() if hosts is None else hosts, msg.text)

    async def _load_keys(self, chat_id: str, gen: int) -> None:
        keys = await self.app.chats.store.html_keys(chat_id)
        if gen != self.generation:
            return
        for mid, key in keys.items():
            item = self.items.get(mid)
            if item is not None and key == self.key_for(item.msg):
                self.cached[mid] = key
        self.keys_ready = True
        if len(self.order):
            self._ask("urgent")

    async def _fetch(self, first: str) -> None:
        """Read ``first``'s cached HTML and that of the next few waiting (one round trip)."""
        ahead = self.order.peek(4 * FETCH_BATCH)
        ids = [first, *(m for m in ahead if m != first and m in self.cached and m not in self.html)]
        ids = ids[:FETCH_BATCH]
        got = await self.app.chats.store.load_html(self.chat_id, [(m, self.cached[m]) for m in ids])
        for mid in ids:
            html = got.get(mid)
            if html is None or not renderer_made(html):  # gone meanwhile, or not the
                self.cached.pop(mid, None)  # renderer's (restore_steps): from its markdown
                self.rejected += html is not None
            else:
                self.html[mid] = html

    def save(self, chat_id: str, msg: Message, html: str, hosts: frozenset[str]) -> None:
        """Keep a finished answer's HTML (a restored one just rendered, a streamed one that
        ended), under the key its text, this renderer and the image hosts it was rendered
        with give it."""
        if chat_id and msg.text and msg.state != "streaming":
            key = self.key_for(msg, hosts)
            spawn(self.app.chats.store.save_html(chat_id, msg.id, key, html))
