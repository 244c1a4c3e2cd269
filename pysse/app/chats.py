"""The chat list (a sidebar, a drawer on small screens): new, switch, rename, delete, delete
all, export as Markdown, JSON or a web page, import JSON, search across chats
(``search_view.py``). It owns the loaded conversations and writes every change through to
storage (``storage.py``); the rules are in ``chats.files``.

Other tabs of the page share the store. After each write or delete this tab tells them
(``app.tabs``: ``saved`` with the chat's row and the answers streaming in it here, ``deleted``,
``cleared``), and it hears theirs: the list updates live, an open chat takes in what another
tab wrote (``chats.merge``), an answer streaming there is shown as it is saved, and a chat
deleted there closes here with a notice and is never written back."""

from __future__ import annotations

import asyncio
import html
import json
from typing import TYPE_CHECKING, Any

from ..call.extras_view import attr
from ..chats.conversation import Conversation, ImportError_
from ..chats.files import (
    IMPORT_MAX,
    ChatSummary,
    export_filename,
    export_json,
    new_chat_id,
    parse_import_steps,
)
from ..chats.html_export import export_html
from ..chats.merge import absorb
from ..jsonsafe import loads_bounded
from ..view import Element, Event
from .platform import run_sliced, spawn
from .search_view import SearchView
from .storage import ChatStore

if TYPE_CHECKING:
    from .ports import ChatsHost

__all__ = ["ChatList"]


GONE_NOTICE = "This chat was deleted in another tab of this page; a new chat is open."


class ChatList:
    def __init__(self, app: ChatsHost) -> None:
        self.app = app
        tabs = app.platform.tabs
        self.store = ChatStore(
            app.platform.store, app.storage_problem, app.platform.now_epoch_ms, tabs
        )
        self.store.on_gone = lambda conv: self._gone(conv.id)
        self.store.on_merged = self._merged
        self.tabs = tabs
        self.heard = 0  # messages from other tabs (tests, stats)
        self.rows: dict[str, ChatSummary] = {}
        self.convs: dict[str, Conversation] = {}  # loaded: the open chat, chats still streaming
        self.list_el = self._el("[data-role=chat-list]")
        self.search = SearchView(self)  # search across chats: the field above the list

    def _el(self, selector: str) -> Element:
        el = self.app.doc.querySelector(selector)
        if el is None:
            raise LookupError(f"the page has no {selector} element: rebuild the site")
        return el

    def bind(self) -> None:
        def on(selector: str, kind: str, fn: Any) -> None:
            self._el(selector).addEventListener(kind, fn)

        self.list_el.addEventListener("click", self._on_click)
        # the rename box's Enter and Escape (the view forwards only these keys)
        self.list_el.addEventListener("keydown", self._on_key, keys=("Enter", "Escape"))
        on("[data-role=chats-toggle]", "click", lambda e: self.toggle())
        on("[data-role=chats-close]", "click", lambda e: self.close_drawer())
        on("[data-role=chats-backdrop]", "click", lambda e: self.close_drawer())
        on("[data-role=delete-all]", "click", lambda e: spawn(self.delete_all()))
        on("[data-role=export-md]", "click", lambda e: self.export("md"))
        on("[data-role=export-json]", "click", lambda e: self.export("json"))
        on("[data-role=export-html]", "click", lambda e: spawn(self.export_html()))
        on("[data-role=import]", "change", self._on_import)
        self.search.bind()
        self.tabs.listen(self._on_tab)

    # -- loading and saving --------------------------------------------------------------------

    async def load(self) -> Conversation:
        """The list and the chat that was open, or a new one (storage failing: a new one)."""
        if await self.store.open():
            for row in await self.store.list_chats():
                self.rows[row.id] = row
            current = await self.store.current()
            conv = await self.store.load_chat(current) if current in self.rows else None
            if conv is not None:
                self.convs[conv.id] = conv
                self.render()
                return conv
        self.render()
        return self.new_conversation()

    def new_conversation(self) -> Conversation:
        conv = Conversation(new_chat_id())
        self.convs[conv.id] = conv
        return conv

    def save(self, conv: Conversation) -> None:
        """Write a changed conversation through (an empty one is not listed or stored, and a
        deleted one never again: an answer streaming into it when it was deleted)."""
        if not conv.messages or conv.deleted:
            return
        self.rows[conv.id] = ChatSummary.of(conv)
        self.search.forget(conv.id)
        spawn(self._save(conv))
        self.render()

    async def _save(self, conv: Conversation) -> None:
        if await self.store.save_chat(conv):
            row = ChatSummary.of(conv).to_json()
            self._tell({"t": "saved", "chat": conv.id, "row": row, "live": self._live(conv.id)})

    def _live(self, chat_id: str) -> list[str]:
        """The answers of ``chat_id`` streaming in this tab."""
        live = self.app.answers.live
        return [mid for (cid, mid), t in live.items() if cid == chat_id and t.state == "streaming"]

    # -- the other tabs ------------------------------------------------------------------------

    def _tell(self, message: dict[str, Any]) -> None:
        self.tabs.post(json.dumps(message))

    def _on_tab(self, text: str) -> None:
        """A message from another tab: checked, then handled by its kind (``TAB_MESSAGES``)."""
        try:
            msg = loads_bounded(str(text)[:100_000])
        except ValueError:
            return
        if not isinstance(msg, dict):
            return
        chat, kind = msg.get("chat"), msg.get("t")
        handler = TAB_MESSAGES.get(kind) if isinstance(kind, str) else None
        if handler is not None and (chat is None or isinstance(chat, str)):
            self.heard += 1
            handler(self, msg)

    def _heard_saved(self, msg: dict[str, Any]) -> None:
        row = ChatSummary.from_json(msg.get("row"))
        live = msg.get("live")
        if row is None or row.id != msg.get("chat") or not isinstance(live, list):
            return
        self.rows[row.id] = row
        self.search.forget(row.id)
        self.render()
        if row.id in self.convs:
            spawn(self.reload(row.id, {m for m in live if isinstance(m, str)}))

    async def reload(self, chat_id: str, live: set[str] | None = None) -> None:
        """Take in what another tab wrote to a loaded chat (in the chat's turn, after this
        tab's own saves asked for before). ``live``: its answers streaming there."""
        conv = self.convs.get(chat_id)
        if conv is None:
            return
        async with self.store.chat_turn(chat_id):
            theirs = await self.store.load_chat(chat_id)
            if theirs is None or conv.deleted:
                return
            changed = absorb(conv, theirs)
            conv.stamp = theirs.stamp
        if live is not None:  # (a broadcast says which of its answers stream there now)
            for mid, m in conv.messages.items():
                there = mid in live and (chat_id, mid) not in self.app.answers.live
                if m.elsewhere != there:
                    m.elsewhere, changed = there, True
            if live:
                spawn(self.app.answers.watch_elsewhere(conv, reattach=False))
        if changed:
            self._merged(conv)

    def _merged(self, conv: Conversation) -> None:
        """Another tab's changes are in ``conv``: the list and, if it is open, the chat."""
        if conv.deleted:
            return
        self.rows[conv.id] = ChatSummary.of(conv)
        self.render()
        if conv is self.app.conv:
            self.app.view.show(conv)

    def _heard_deleted(self, msg: dict[str, Any]) -> None:
        self._gone(str(msg["chat"]))

    def _heard_cleared(self, msg: dict[str, Any]) -> None:
        for chat_id in [*self.rows, *(c.id for c in self.convs.values() if c.stored)]:
            self._gone(chat_id)

    def _gone(self, chat_id: str) -> None:
        """Deleted in another tab: it leaves the list; loaded here, it is never written
        again; open here, it closes with a notice."""
        self.rows.pop(chat_id, None)
        self.search.forget(chat_id)
        conv = self.convs.pop(chat_id, None)
        if conv is not None:
            conv.deleted = True
            self.app.answers.stop_chat(chat_id)
        if self.app.conv.id == chat_id:
            spawn(self._close_gone())
        self.render()

    async def _close_gone(self) -> None:
        await self.app.switch_to(None)
        self.app.show_notice(GONE_NOTICE)

    def set_current(self, conv: Conversation) -> None:
        spawn(self.store.set_current(conv.id))
        self.render()

    async def get(self, chat_id: str) -> Conversation | None:
        conv = self.convs.get(chat_id)
        if conv is None:
            conv = await self.store.load_chat(chat_id)
            if conv is not None:
                self.convs[chat_id] = conv
        return conv

    # -- the list ------------------------------------------------------------------------------

    def render(self) -> None:
        current = self.app.conv.id if getattr(self.app, "conv", None) else ""
        items = []
        for row in sorted(self.rows.values(), key=lambda r: (-r.updated, r.id)):
            name = html.escape(row.label)
            mark = ' aria-current="true"' if row.id == current else ""
            items.append(
                f'<li data-chat="{html.escape(row.id)}"{mark}>'
                '<button type="button" class="chat-open" data-role="chat-open" dir="auto">'
                f"{name}</button>"
                f'<button type="button" class="chat-rename" data-role="chat-rename" '
                f'aria-label="Rename {name}" title="Rename">✎</button>'
                f'<button type="button" class="chat-delete" data-role="chat-delete" '
                f'aria-label="Delete {name}" title="Delete">✕</button></li>'
            )
        empty = '<li class="empty">No saved chats yet.</li>'
        self.list_el.innerHTML = "".join(items) or empty

    def _on_click(self, e: Event) -> None:
        if e.target is None:
            return
        btn = e.target.closest("button")
        item = e.target.closest("li[data-chat]")
        if btn is None or item is None:
            return
        chat_id = attr(item, "data-chat")
        role = btn.getAttribute("data-role")
        if role == "chat-open":
            spawn(self.app.switch_to(chat_id))
            self.close_drawer()
        elif role == "chat-rename":
            self.start_rename(item, chat_id)
        elif role == "chat-delete":
            spawn(self.delete(chat_id))

    def start_rename(self, item: Any, chat_id: str) -> None:
        row = self.rows[chat_id]
        box = self.app.doc.createElement("input")
        box.value = row.title
        box.setAttribute("aria-label", "Chat name")
        box.dataset.role = "chat-title"
        item.replaceChildren(box)
        box.focus()
        box.select()

    def _on_key(self, e: Event) -> None:
        """Enter in the rename box renames, Escape gives the list back (the view kept the
        page's Escape from closing the drawer too)."""
        box = e.target
        if box is None or box.getAttribute("data-role") != "chat-title":
            return
        item = box.closest("li")
        if e.key == "Enter" and item is not None:
            spawn(self.rename(attr(item, "data-chat"), str(box.value)))
        elif e.key == "Escape":
            self.render()

    async def rename(self, chat_id: str, title: str) -> None:
        conv = await self.get(chat_id)
        if conv is not None:
            conv.rename(title)
            self.save(conv)
        self.render()

    async def delete(self, chat_id: str) -> None:
        row = self.rows.get(chat_id)
        ask = f"Delete the chat “{row.label}”? This cannot be undone." if row else ""
        if row is None or not await self.app.doc.call("confirm", ask):
            return
        if chat_id not in self.rows:
            return  # deleted meanwhile
        self.rows.pop(chat_id, None)
        conv = self.convs.pop(chat_id, None)
        if conv is not None:
            conv.deleted = True
        self.app.answers.stop_chat(chat_id)  # its answer, if one streams: nothing to keep it for
        self.search.forget(chat_id)
        await self.store.delete_chat(chat_id)
        self._tell({"t": "deleted", "chat": chat_id})
        if self.app.conv.id == chat_id:
            await self.app.switch_to(None)
        self.render()

    async def delete_all(self) -> None:
        ask = f"Delete all {len(self.rows)} chats and their recordings? This cannot be undone."
        if not self.rows or not await self.app.doc.call("confirm", ask):
            return
        for chat_id in self.rows:
            self.app.answers.stop_chat(chat_id)
        for conv in self.convs.values():
            conv.deleted = True
        self.rows.clear()
        self.search.forget_all()
        self.convs = {k: v for k, v in self.convs.items() if k == self.app.conv.id}
        await self.store.delete_all()
        self._tell({"t": "cleared"})
        await self.app.switch_to(None)
        self.render()

    # -- the drawer (small screens) ------------------------------------------------------------

    def toggle(self) -> None:
        body = self.app.doc.body
        if attr(body, "data-chats-open") == "1":
            self.close_drawer()
        else:
            body.dataset.chatsOpen = "1"
            self._el("[data-role=chats-backdrop]").hidden = False
            self._el("[data-role=chats-toggle]").setAttribute("aria-expanded", "true")
            first = self.app.doc.querySelector("[data-role=chat-list] button")
            (first or self._el("[data-role=chats-close]")).focus()

    @property
    def drawer_open(self) -> bool:
        return bool(attr(self.app.doc.body, "data-chats-open") == "1")

    def close_drawer(self) -> None:
        if not self.drawer_open:
            return
        self.app.doc.body.dataset.chatsOpen = ""
        self._el("[data-role=chats-backdrop]").hidden = True
        toggle = self._el("[data-role=chats-toggle]")
        toggle.setAttribute("aria-expanded", "false")
        toggle.focus(ifShown=True)  # (on a wide screen the toggle is not shown)

    # -- files ---------------------------------------------------------------------------------

    def export(self, kind: str) -> None:
        conv = self.app.conv
        if not conv.messages:
            self.app.show_notice("Nothing to export yet: this chat is empty.")
            return
        name = export_filename(conv.title or "chat", kind)
        if kind == "md":
            self.app.doc.ops.add(["download", name, conv.to_markdown(), "text/markdown"])
        else:
            recs = {
                m: r for m, r in self.app.answers.recordings_of(conv).items() if m in conv.messages
            }
            json_text = export_json(conv, recs)
            self.app.doc.ops.add(["download", name, json_text, "application/json"])

    async def export_html(self) -> None:
        """The chat as a self-contained web page: the page's styles (the view reads them from
        its style sheets), the answers rendered, no script (``chats/html_export.py``)."""
        conv = self.app.conv
        if not conv.messages:
            self.app.show_notice("Nothing to export yet: this chat is empty.")
            return
        css = await self.app.doc.call("styles")
        from ..render.markdown import make_markdown, render

        md = make_markdown()  # (no remote images: the file loads nothing)
        page = export_html(conv, css if isinstance(css, str) else "", lambda t: render(t, md))
        name = export_filename(conv.title or "chat", "html")
        self.app.doc.ops.add(["download", name, page, "text/html;charset=utf-8"])

    def _on_import(self, e: Event) -> None:
        """A file chosen (the view sends the ``File`` itself: it is read here, not on the
        main thread, and the input is emptied there so the same file can be chosen again)."""
        if e.files:
            spawn(self._import(e.files[0]))

    async def _import(self, file: Any) -> None:
        if int(file.size) > IMPORT_MAX:  # refused before reading: reading it is the freeze
            self.app.show_notice(
                f"Could not import {file.name}: larger than {IMPORT_MAX >> 20} MiB."
            )
            return
        text = str(await file.text())
        try:  # in slices: a long chat's file must not freeze the page (issue #28)
            conv, recs = await run_sliced(parse_import_steps(text, set(self.rows)))
        except ImportError_ as exc:
            self.app.show_notice(f"Could not import {file.name}: {exc}")
            return
        self.convs[conv.id] = conv
        await asyncio.sleep(0)  # the parse, the save and the first paint: a task each
        self.save(conv)
        for mid, rec in recs.items():
            spawn(self.store.save_recording(conv.id, mid, rec))
        self.app.answers.recordings[conv.id] = dict(recs)
        await self.app.switch_to(conv.id)
        self.close_drawer()


# What another tab tells this one, by its kind (``ChatList._on_tab``).
TAB_MESSAGES = {
    "saved": ChatList._heard_saved,
    "deleted": ChatList._heard_deleted,
    "cleared": ChatList._heard_cleared,
}
