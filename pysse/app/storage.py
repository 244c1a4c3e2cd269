"""Chats in IndexedDB (``web/store.js``, reached through the platform's ``StoreBackend``), with
the page working on in memory when storage is missing or fails (private browsing, a full
disk): the first failure is reported once, in words (``chats.files.storage_problem``), and
nothing is lost from the page.

Stores: ``chats`` (the list's rows, cheap to list), ``bodies`` (each conversation's JSON),
``recordings`` (``chat/message`` → metadata JSON + the bytes), ``meta`` (the open chat, the
recordings' index for the total cap), ``html`` (``chat/message/key`` → a finished answer's
rendered HTML, a cache: ``app.restore_steps.cache_key``; the key in the name, so which answers are
cached is known without reading any HTML), ``search`` (each chat's searched messages,
``chats.search.search_record_steps``: the first search after a reload reads these, not the bodies).
A chat's body, search record and row are written in one transaction, so they never disagree.

Several tabs share the store (``app.tabs``). A chat is written as a compare-and-set
(``StoreBackend.putIfStamp``): one transaction reads the row's ``w`` stamp and writes only if it
is still the one this tab last read or wrote. If another tab wrote since, its body is read and
``absorb``-ed (``chats.merge``), and the write is tried again. A chat whose row is gone, though
this tab read or wrote it, was deleted in another tab: it is never written back. After each
write or delete the other tabs are told (``app.chats``). No Web Lock is waited for on the way:
in WebKit, under load, a lock took 0.5-4 s to be granted while an answer streamed, and a reload
then lost the question (``tests/test_browser_tabs.py``, a tab frozen holding a lock).
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from ..chats.conversation import Conversation, ImportError_
from ..chats.files import ChatSummary, conversation_json_steps, storage_problem
from ..chats.merge import absorb
from ..chats.recording import TOTAL_MAX, Recording, RecordingError, evict
from ..chats.records import plain_number
from ..chats.search import search_record_steps
from ..jsonsafe import loads_bounded, loads_bounded_steps
from .platform import StoreBackend, run_sliced
from .tabs import TabHub, Tabs

__all__ = ["ChatStore", "row_stamp"]

# Writes of one save that may each find another tab wrote first (each then merges that in).
MERGE_TRIES = 8


def _rec_key(chat_id: str, message_id: str) -> str:
    return f"{chat_id}/{message_id}"


class ChatStore:
    """Async reads and writes of chats; every method is safe to call when storage is off."""

    def __init__(
        self,
        backend: StoreBackend | None,
        on_problem: Callable[[str], None],
        now_epoch_ms: Callable[[], float],
        tabs: Tabs | None = None,
    ) -> None:
        self.backend = backend
        self.now_epoch_ms = now_epoch_ms
        self.on_problem = on_problem
        self.tabs: Tabs = tabs if tabs is not None else TabHub().tab()
        self.ok = False
        self.problem = ""
        self._saves: dict[str, int] = {}  # chat id -> the number of its latest save
        self._turns: dict[str, asyncio.Lock] = {}  # chat id -> this tab's turn (chat_turn)
        self._writes = 0  # this tab's writes: a stamp is its tag and this number
        self.tag = secrets.token_hex(4)
        # Told when a write finds that another tab deleted the chat, or merged another
        # tab's changes into it (``app.chats``).
        self.on_gone: Callable[[Conversation], object] = lambda conv: None
        self.on_merged: Callable[[Conversation], object] = lambda conv: None
        self.merges = 0  # writes that merged another tab's copy (tests, stats)

    @asynccontextmanager
    async def locked(self, name: str) -> AsyncIterator[None]:
        """Hold the Web Lock ``name`` (one tab at a time) for the block."""
        release = await self.tabs.acquire(name, True)
        try:
            yield
        finally:
            if release is not None:
                release()

    def _fail(self, exc: BaseException) -> None:
        """Say the first failure, once. A failed call does not turn storage off: a full
        store fails writes, but deleting chats (what the notice advises) must still reach
        it, and the chats stored before it must still open."""
        name = str(getattr(exc, "name", "") or type(exc).__name__)
        message = str(getattr(exc, "message", "") or exc)
        if not self.problem:
            self.problem = storage_problem(name, message)
            self.on_problem(self.problem)

    async def _call(self, method: str, *args: Any) -> Any:
        if not self.ok or self.backend is None:
            return None
        try:
            return await getattr(self.backend, method)(*args)
        except Exception as exc:  # (a JsException in the browser: a DOMException's name)
            self._fail(exc)
            return None

    async def open(self) -> bool:
        if self.backend is None:
            self._fail(RuntimeError("store.js did not load"))
            return False
        try:
            await self.backend.open()
        except Exception as exc:
            self._fail(exc)
            return False
        self.ok = True
        return True

    # -- chats ---------------------------------------------------------------------------------

    async def list_chats(self) -> list[ChatSummary]:
        rows = await self._call("all", "chats")
        out = []
        for raw in rows or []:
            try:
                row = ChatSummary.from_json(loads_bounded(str(raw)))
            except ValueError:
                continue
            if row is not None:
                out.append(row)
        return out

    async def load_chat(self, chat_id: str) -> Conversation | None:
        """A stored chat, read leniently (what cannot be read is dropped and listed in its
        ``dropped``); None if there is none or its body is not a chat at all."""
        # The stamp first: a write between the two reads leaves it older than the body, so the
        # next save finds it changed and merges again (never the reverse: a write lost).
        stamp = row_stamp(await self._call("get", "chats", chat_id))
        raw = await self._call("get", "bodies", chat_id)
        if raw is None:
            return None
        try:  # in slices: a long chat's body is a few 100 KB (issue #28)
            obj = await run_sliced(loads_bounded_steps(str(raw)))
            conv = Conversation.from_json(obj, strict=False)
        except (ValueError, ImportError_):
            return None  # a damaged record: the chat is skipped, the page goes on
        conv.id, conv.stored, conv.stamp = chat_id, True, stamp
        return conv

    def chat_turn(self, chat_id: str) -> asyncio.Lock:
        """This tab's saves, reloads and deletes of one chat, one at a time and in the order
        asked (between tabs, each write is a compare-and-set: ``save_chat``)."""
        return self._turns.setdefault(chat_id, asyncio.Lock())

    async def save_chat(self, conv: Conversation) -> bool:
        """Write a conversation through, merged with what another tab wrote (the module
        docstring), encoded in slices (``conversation_json_steps``). This tab's saves of one
        chat queue on its turn: only the latest one asked for writes. True if this one wrote."""
        seq = self._outdate(conv.id)
        backend = self.backend
        async with self.chat_turn(conv.id):
            expected: str | None = conv.stamp if conv.stored else None
            for _ in range(MERGE_TRIES):
                if self._saves.get(conv.id) != seq or conv.deleted or not self.ok or not backend:
                    return False  # a newer save of this chat writes, or it was deleted
                upto = conv.changes.n
                self._writes += 1
                stamp = f"{self.tag}:{self._writes}"
                entries = await self._entries(conv, stamp)
                try:
                    written, seen = await backend.putIfStamp(conv.id, expected, entries)
                except Exception as exc:
                    self._fail(exc)
                    return False
                if written:
                    conv.changes.forget(upto)
                    conv.stored, conv.stamp = True, stamp
                    return True
                if not await self._merge(conv, seen):
                    return False
                expected = seen
            return False  # (other tabs wrote it this often meanwhile: the next save goes on)

    async def _entries(self, conv: Conversation, stamp: str) -> list[tuple[str, str, Any]]:
        """A chat's body, search record and list row, for one transaction."""
        row = json.dumps({**ChatSummary.of(conv).to_json(), "w": stamp})
        record_steps = search_record_steps(conv)  # taken now, with the body
        body = await run_sliced(conversation_json_steps(conv))
        record = await run_sliced(record_steps)
        return [("bodies", conv.id, body), ("search", conv.id, record), ("chats", conv.id, row)]

    async def _merge(self, conv: Conversation, seen: str | None) -> bool:
        """Another tab wrote the chat (its row's stamp is ``seen``) since this tab last read
        or wrote it: bring that in. False if the chat was deleted there (``seen`` None for a
        chat this tab stored): it is marked deleted, never written back."""
        if seen is None:
            if conv.stored:
                conv.deleted = True
                self.on_gone(conv)
                return False
            return True
        theirs = await self.load_chat(conv.id)
        if theirs is not None:
            self.merges += 1
            if absorb(conv, theirs):
                self.on_merged(conv)
        conv.stamp = seen
        return True

    def _outdate(self, chat_id: str) -> int:
        """Number a new save of ``chat_id`` (or a delete): any save under way is outdated,
        and writes nothing when its encoding ends. Returns the new number."""
        self._saves[chat_id] = seq = self._saves.get(chat_id, 0) + 1
        return seq

    async def save_search_record(self, conv: Conversation) -> None:
        """A search record for a chat stored without one (by a page before records)."""
        record = await run_sliced(search_record_steps(conv))
        await self._call("put", "search", conv.id, record)

    async def load_search_records(self, chat_ids: list[str]) -> dict[str, str]:
        """The stored search records of these chats (one transaction); absent where none."""
        values = await self._call("getMany", "search", chat_ids)
        return {
            cid: value
            for cid, value in zip(chat_ids, values or [], strict=False)
            if isinstance(value, str)
        }

    async def delete_chat(self, chat_id: str) -> None:
        self._outdate(chat_id)  # a save of it under way (encoded in slices) writes nothing
        async with self.chat_turn(chat_id):  # the row first: another tab's write then sees it gone
            await self._call("delete", "chats", chat_id)
            await self._call("delete", "bodies", chat_id)
            await self._call("delete", "search", chat_id)
            await self._call("delPrefix", "recordings", chat_id + "/")
            await self._call("delPrefix", "html", chat_id + "/")
        async with self.locked("pysse-recordings"):
            index = [row for row in await self._index() if not row[0].startswith(chat_id + "/")]
            await self._call("put", "meta", "recordings", json.dumps(index))

    # -- rendered HTML (a cache) ---------------------------------------------------------------

    async def html_keys(self, chat_id: str) -> dict[str, str]:
        """Message id -> the key its cached HTML was rendered under, for one chat."""
        found = await self._call("keysPrefix", "html", chat_id + "/")
        out: dict[str, str] = {}
        for name in found or []:
            parts = str(name).split("/")
            if len(parts) == 3:
                out[parts[1]] = parts[2]
        return out

    async def load_html(self, chat_id: str, wanted: list[tuple[str, str]]) -> dict[str, str]:
        """The cached HTML of ``(message id, key)`` pairs; absent where there is none."""
        names = [f"{chat_id}/{mid}/{key}" for mid, key in wanted]
        values = await self._call("getMany", "html", names)
        out: dict[str, str] = {}
        for (mid, _), value in zip(wanted, values or [], strict=False):
            if isinstance(value, str):
                out[mid] = value
        return out

    async def save_html(self, chat_id: str, message_id: str, key: str, html: str) -> None:
        """Cache an answer's HTML under ``key``, replacing what it had under any other key."""
        await self._call("delPrefix", "html", f"{chat_id}/{message_id}/")
        await self._call("put", "html", f"{chat_id}/{message_id}/{key}", html)

    async def delete_all(self) -> None:
        for chat_id in self._saves:  # saves under way write nothing (delete_chat)
            self._outdate(chat_id)
        await self._call("clear")

    async def current(self) -> str:
        got = await self._call("get", "meta", "current")
        return str(got) if got is not None else ""

    async def set_current(self, chat_id: str) -> None:
        await self._call("put", "meta", "current", chat_id)

    # -- recordings ----------------------------------------------------------------------------

    async def _index(self) -> list[tuple[str, int, float]]:
        raw = await self._call("get", "meta", "recordings")
        try:
            rows = loads_bounded(str(raw)) if raw is not None else []
        except ValueError:
            rows = []
        return [
            (r[0], r[1], plain_number(r[2], 0, 1e15) or 0.0)
            for r in rows
            if isinstance(rows, list)
            if isinstance(r, list)
            and len(r) == 3
            and isinstance(r[0], str)
            and isinstance(r[1], int)
            and 0 <= r[1] <= 1 << 40
        ]

    async def save_recording(self, chat_id: str, message_id: str, rec: Recording) -> None:
        """Keep a recording; the oldest are dropped when all of them pass ``TOTAL_MAX``."""
        key = _rec_key(chat_id, message_id)
        meta, data = rec.pack()
        value = {"meta": json.dumps(meta), "bytes": data}
        await self._call("put", "recordings", key, value)
        async with self.locked("pysse-recordings"):  # the index: one tab at a time
            index = [row for row in await self._index() if row[0] != key]
            index.append((key, len(data), float(self.now_epoch_ms())))
            for old in evict(index, TOTAL_MAX):
                await self._call("delete", "recordings", old)
                index = [row for row in index if row[0] != old]
            await self._call("put", "meta", "recordings", json.dumps(index))

    async def delete_recording(self, chat_id: str, message_id: str) -> None:
        await self._call("delete", "recordings", _rec_key(chat_id, message_id))

    async def load_recordings(self, chat_id: str) -> dict[str, Recording]:
        keys = await self._call("keys", "recordings")
        values = await self._call("getPrefix", "recordings", chat_id + "/")
        if keys is None or values is None:
            return {}
        mine = sorted(str(k) for k in keys if str(k).startswith(chat_id + "/"))
        out: dict[str, Recording] = {}
        for key, value in zip(mine, values, strict=False):  # both in key order
            try:
                meta = loads_bounded(str(value["meta"]))
                out[key.split("/", 1)[1]] = Recording.unpack(meta, bytes(value["bytes"]))
            except (ValueError, RecordingError, KeyError, TypeError):
                continue
        return out


def row_stamp(row: Any) -> str:
    """Which tab's write a stored row is (its ``w``: the writer's tag and count); "" for a
    row written before stamps, or none."""
    if row is None:
        return ""
    try:
        obj = loads_bounded(str(row))
    except ValueError:
        return ""
    w = obj.get("w") if isinstance(obj, dict) else None
    return w[:64] if isinstance(w, str) else ""
