"""Search across chats in the chat list: the field, the results in place of the list, the
live count, the keys, and opening a result at its message. The matching is
``chats.search``; this only keeps each chat's ``ChatText`` and renders.

Only the open chat (and chats still streaming) are in memory (``ChatList.convs``); the
others are read from storage the first time a search needs them (when the field gets focus):
each chat's search record (its searched messages, stored with it), not its whole body,
folded once and kept, and dropped when the chat changes (``forget``). Every keystroke starts
a new search and ends the one before it (``_gen``); a search runs in slices of ``SLICE_MS``
between which the next keystroke's event is taken, so typing never waits on a scan.

The keys (arrows between the field and the results, Enter, Escape) are the view's
(``web/view.js``): they move focus, press a result, or empty the field (an ``input`` event).
"""

from __future__ import annotations

import asyncio
import html
from typing import TYPE_CHECKING, Any

from ..call.extras_view import attr
from ..chats.conversation import Conversation
from ..chats.files import ChatSummary, sort_chats
from ..chats.search import (
    ChatText,
    Hit,
    count_label,
    fold_term,
    locate,
    rank,
    read_batches,
    search_steps,
)
from ..view import Element, Event
from .platform import PAUSES, spawn

if TYPE_CHECKING:
    from .ports import SearchOwner

__all__ = ["SearchView", "mark_term"]

SLICE_MS = 8.0  # search work between pauses
# Stored search records read in one IndexedDB transaction: chats up to this many messages in
# all (4 chats of 40 long messages, ~0.5 MB; many more short ones). The records are delivered
# in one task: 20 such chats took 80 ms at 4x (22 long tasks for 500 chats), 4 took under 50
# ms, but each transaction costs a turn, so short chats are read many at a time.
READ_MESSAGES = 160
SHOWN = 50  # results rendered (the count says how many chats matched in all)
READ_WAIT_S = 0.25  # while chats are read, the chats read so far are searched this often
REFRESH_S = 0.5  # shown results are searched again this long after a chat changed or went
REREADS = 3  # chats changed while a search read them: read again, at most this many times
WHO = {"user": "You", "assistant": "Answer", "title": "Name"}  # where a result's snippet is from
HIGHLIGHT = "pysse-search"  # the CSS highlight the term is marked with in an opened chat
MARK_NODES = 20_000  # text nodes of a message looked through for the term (a long answer)
FIND_WAIT_S = 5.0  # how long an opened result waits for its message to be put in the log


class SearchView:
    def __init__(self, chats: SearchOwner) -> None:
        self.chats = chats
        self.app = chats.app
        doc = self.app.doc
        self.field: Element = doc.querySelector("[data-role=search]")  # type: ignore[assignment]
        self.results_el: Element = doc.querySelector("[data-role=search-results]")  # type: ignore[assignment]
        self.count_el: Element = doc.querySelector("[data-role=search-count]")  # type: ignore[assignment]
        self.clock = self.app.platform.clock
        self.texts: dict[str, ChatText] = {}
        self._gen = 0
        self._opens = 0  # results opened: only the latest one opened goes on to mark its term
        self._refreshing = False
        self._loading: asyncio.Future[None] | None = None
        self.searches = 0  # searches run to the end (for the page's stats and tests)
        self.longest_ms = 0.0  # the longest stretch of search work in one task (the bench)
        # where each chat's text came from (the page's stats, the bench and tests)
        self.reads = {"memory": 0, "record": 0, "body": 0}

    def bind(self) -> None:
        self.field.addEventListener("input", lambda e: spawn(self.run(str(self.field.value))))
        self.field.addEventListener("focus", lambda e: self.prepare())
        self.results_el.addEventListener("click", self._on_click)

    @property
    def active(self) -> bool:
        return bool(fold_term(str(self.field.value)))

    def forget(self, chat_id: str) -> None:
        """A chat changed or went: its text is folded again when next searched, and results
        on screen are searched again (an import, a delete, an answer that ended)."""
        self.texts.pop(chat_id, None)
        self._changed()

    def forget_all(self) -> None:
        self.texts.clear()
        self._changed()

    def _changed(self) -> None:
        if self.active and not self._refreshing:
            self._refreshing = True
            spawn(self._refresh())

    async def _refresh(self) -> None:
        await asyncio.sleep(REFRESH_S)  # (a streaming answer's chat is saved every 2 s)
        self._refreshing = False
        if self.active:
            await self.run(str(self.field.value))

    # -- the chats' texts ----------------------------------------------------------------------

    def prepare(self) -> asyncio.Future[None]:
        """Read and fold the chats not kept yet (one reader at a time)."""
        if self._loading is None or self._loading.done():
            self._loading = asyncio.ensure_future(self._load_missing())
        return self._loading

    async def _load_missing(self) -> None:
        """Each chat's text: the chats in memory first (no wait on storage), then stored
        search records read ``READ_MESSAGES`` messages' worth to a transaction, newest
        first, in slices of ``SLICE_MS``."""
        order = [r for r in sort_chats(list(self.chats.rows.values())) if r.id not in self.texts]
        kept = [r for r in order if r.id in self.chats.convs]
        stored = [r for r in order if r.id not in self.chats.convs]
        for batch in [kept, *read_batches(stored, READ_MESSAGES)]:
            wanted = [r.id for r in batch if r.id not in self.chats.convs]
            records = await self.chats.store.load_search_records(wanted) if wanted else {}
            start = self.clock()
            for row in batch:
                if row.id in self.texts or self.chats.rows.get(row.id) != row:
                    continue  # read meanwhile, or changed or gone: the next search reads it
                text = self._kept_text(row, records.get(row.id, ""))
                if text is None:
                    conv = await self._read_body(row)
                    start = self.clock()
                    text = ChatText.of(conv) if conv is not None else None
                if text is not None:
                    self.texts[row.id] = text
                now = self.clock()
                self.longest_ms = max(self.longest_ms, now - start)
                if now - start >= SLICE_MS:
                    await asyncio.sleep(0)
                    start = self.clock()
            await asyncio.sleep(0)

    def _kept_text(self, row: ChatSummary, record: str) -> ChatText | None:
        """From memory (the open chat, chats streaming), else from the stored record."""
        conv = self.chats.convs.get(row.id)
        if conv is not None:
            self.reads["memory"] += 1
            return ChatText.of(conv)
        text = ChatText.from_record(row.id, row.title, row.updated, record)
        if text is not None:
            self.reads["record"] += 1
        return text

    async def _read_body(self, row: ChatSummary) -> Conversation | None:
        """A chat stored without a usable record (by a page before records, or a record that
        does not match its row): its whole body, and its record written for the next reload."""
        conv = await self.chats.store.load_chat(row.id)
        if conv is None or self.chats.rows.get(row.id) != row:
            return None  # damaged, or changed while it was read
        self.reads["body"] += 1
        spawn(self.chats.store.save_search_record(conv))
        return conv

    # -- searching -----------------------------------------------------------------------------

    def _all_read(self) -> bool:
        """Every listed chat's text is here (one saved since it was read is not)."""
        return all(r in self.texts for r in self.chats.rows)

    async def run(self, term: str) -> None:
        """One keystroke's search. Chats not read yet are read meanwhile (``prepare``), and
        the chats read so far are searched as they come, newest first: the results grow
        while the rest is read ("2 chats so far, searching…")."""
        self._gen += 1
        gen = self._gen
        if not fold_term(term):
            self.show_list()
            return
        self.chats.list_el.hidden = True
        self.results_el.hidden = False
        reading = None if self._all_read() else self.prepare()
        hits: list[Hit] = []
        searched: set[str] = set()
        rereads = 0
        while True:
            texts = [
                self.texts[r.id]
                for r in sort_chats(list(self.chats.rows.values()))
                if r.id in self.texts and r.id not in searched
            ]
            if texts:
                found = await self._scan(texts, term, hits, gen)
                if found is None:
                    return  # a newer keystroke: its search goes on, this one ends
                hits = found
                searched.update(t.chat_id for t in texts)
            if reading is None or reading.done():
                if not self._all_read() and rereads < REREADS:
                    rereads += 1  # one changed while it was read (saved: its text dropped)
                    reading = self.prepare()
                    continue
                if all(r not in self.texts or r in searched for r in self.chats.rows):
                    break  # (what was read while the last ones were searched: once more)
                continue
            self.render(hits, "")
            await asyncio.wait([reading], timeout=READ_WAIT_S)
            if gen != self._gen:
                return
        self.searches += 1
        self.render(hits, term)

    async def _scan(
        self, texts: list[ChatText], term: str, hits: list[Hit], gen: int
    ) -> list[Hit] | None:
        """``hits`` and those in ``texts``, best first, in slices of ``SLICE_MS``; None if a
        newer keystroke started meanwhile."""
        steps = search_steps(texts, term)
        start = self.clock()
        while True:
            try:
                new = next(steps)
            except StopIteration as done:
                new = done.value
                break
            if self.clock() - start >= SLICE_MS:
                self.render(rank(hits + new), "")
                self.longest_ms = max(self.longest_ms, self.clock() - start)
                PAUSES[0] += 1
                await asyncio.sleep(0)
                if gen != self._gen:
                    return None
                start = self.clock()
        self.longest_ms = max(self.longest_ms, self.clock() - start)
        return rank(hits + new)

    def render(self, hits: list[Hit], term: str) -> None:
        """The results so far (``term`` "": still searching), and the count when it
        changed. ``data-term`` on the results names the term they are complete for."""
        searching = not term
        current = self.app.conv.id if getattr(self.app, "conv", None) else ""
        items = []
        for hit in hits[:SHOWN]:
            mark = ' aria-current="true"' if hit.chat_id == current else ""
            who = WHO.get(hit.role, "Answer")
            items.append(
                f'<li{mark}><button type="button" class="search-result" '
                f'data-role="search-result" data-chat="{html.escape(hit.chat_id)}" '
                f'data-message="{html.escape(hit.message_id)}">'
                '<span class="result-title" dir="auto">'
                f"{html.escape(hit.title or 'New chat')}</span>"
                f'<span class="snippet"><span class="who">{who}:</span> '
                f'<span dir="auto">{hit.snippet.html()}</span></span></button></li>'
            )
        if not items and not searching:
            items.append('<li class="empty">No chat has this text.</li>')
        # The results grow while stored chats are read: a reader on a result (arrow keys)
        # keeps it (the view gives focus back to the result for the same chat, or the field).
        self.results_el.innerHTML = "".join(items)
        self.results_el.setAttribute("data-term", term)
        label = count_label(len(hits), searching)
        if attr(self.count_el, "data-count") != label:  # said again only when it changes
            self.count_el.setAttribute("data-count", label)
            self.count_el.textContent = label

    def show_list(self) -> None:
        """The chat list again, as it was."""
        self.results_el.hidden = True
        self.results_el.innerHTML = ""
        self.results_el.setAttribute("data-term", "")
        self.count_el.textContent = ""
        self.count_el.setAttribute("data-count", "")
        self.chats.list_el.hidden = False

    def clear(self) -> None:
        self._gen += 1
        self.field.value = ""
        self.show_list()

    # -- clicks --------------------------------------------------------------------------------

    def _on_click(self, e: Event) -> None:
        btn = e.target.closest("[data-role=search-result]") if e.target is not None else None
        if btn is not None:
            self._open(btn)

    def _open(self, btn: Any) -> None:
        spawn(self.open(attr(btn, "data-chat"), attr(btn, "data-message")))

    async def open(self, chat_id: str, message_id: str) -> None:
        """Open the chat with the matching message scrolled into view and marked, and the
        term marked inside it (``mark_term``)."""
        term = fold_term(str(self.field.value))
        self._opens += 1
        mine = self._opens
        await self.app.switch_to(chat_id)

        def current() -> bool:  # still this open's chat: no later open, no other chat shown
            return mine == self._opens and self.app.conv.id == chat_id

        if not current():
            return
        self.chats.close_drawer()
        if not message_id:  # found by its name: the chat, as it opens
            return
        log = self.app.log
        for old in log.querySelectorAll("[data-search-hit]"):
            old.removeAttribute("data-search-hit")
        waited = 0.0
        while (el := _article(log, message_id)) is None and waited < FIND_WAIT_S:
            await asyncio.sleep(0.02)  # older messages are put in slices (log_view)
            waited += 0.02
        if el is None or not current():
            return
        el.setAttribute("data-search-hit", "1")
        self.app.scroll.center(el)  # and stay here, not at the chat's end
        while attr(el, "data-pending") and waited < FIND_WAIT_S:  # rendered once in view
            await asyncio.sleep(0.02)
            waited += 0.02
        if current() and el.isConnected:  # (a stale open would unmark the newer one's term)
            await mark_term(el, term)


def _article(log: Element, message_id: str) -> Element | None:
    return next(
        (a for a in log.querySelectorAll("article[data-id]") if attr(a, "data-id") == message_id),
        None,
    )


async def mark_term(el: Element, term: str) -> bool:
    """The term's first occurrence in message ``el``'s shown text, marked with the CSS Custom
    Highlight API (``::highlight(pysse-search)``): the answer's DOM is not touched. The view
    hands over the message's text nodes (at most ``MARK_NODES``; None where the engine has no
    ``CSS.highlights``), the term is located here, with the same Unicode folding as the
    search, and the view marks the range. Where the rendered text does not hold the term,
    only the message is marked. True if the term was marked."""
    if not term:
        return False
    texts = await el.ownerDocument.call("texts", el.handle, MARK_NODES)
    if texts is None:
        return False
    where = locate([str(t) for t in texts], term)
    if where is None:
        return False
    el.ownerDocument.ops.add(["mark", el.handle, list(where)])
    return True
