"""The list of chats and their files: what the list shows and in what order, new chat ids,
export (Markdown, JSON with recordings) and a checked import. Pure; the bundled page binds it
to the chat drawer (``app/chats.py``) and to IndexedDB (``app/storage.py``).
"""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

from ..jsonsafe import loads_bounded_steps
from ..steps import run_steps
from .conversation import Conversation, ImportError_
from .recording import Recording, RecordingError, recordings_from_json, recordings_to_json
from .records import plain_number

__all__ = [
    "IMPORT_MAX",
    "ChatSummary",
    "conversation_json_steps",
    "export_filename",
    "export_json",
    "new_chat_id",
    "parse_import",
    "parse_import_steps",
    "sort_chats",
    "storage_problem",
]

IMPORT_MAX = 24 << 20  # bytes of an imported file (base64 recordings included)


@dataclass(frozen=True)
class ChatSummary:
    """One row of the chat list (stored apart from the conversation, so listing is cheap)."""

    id: str
    title: str
    updated: float
    messages: int = 0

    @classmethod
    def of(cls, conv: Conversation) -> ChatSummary:
        return cls(conv.id, conv.title, conv.updated, len(conv.messages))

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "updated": self.updated, "n": self.messages}

    @classmethod
    def from_json(cls, obj: Any) -> ChatSummary | None:
        """A stored row, or None if it is not one (a damaged store skips the row)."""
        if not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
            return None
        title = obj.get("title")
        n = obj.get("n")
        return cls(
            obj["id"][:64],
            title[:200] if isinstance(title, str) else "",
            plain_number(obj.get("updated"), 0, 1e11) or 0.0,
            n if isinstance(n, int) and 0 <= n <= 1_000_000 else 0,
        )

    @property
    def label(self) -> str:
        return self.title or "New chat"


def sort_chats(rows: list[ChatSummary]) -> list[ChatSummary]:
    """Most recently changed first."""
    return sorted(rows, key=lambda r: (-r.updated, r.id))


def new_chat_id(now: float | None = None) -> str:
    """A new chat's id: time-ordered and unique enough for one browser's store."""
    return f"c{int((now or time.time()) * 1000):x}{secrets.token_hex(3)}"


def export_filename(title: str, ext: str) -> str:
    """A safe file name from a chat title."""
    stem = "-".join(re.sub(r"[^\w\- ]+", "", title, flags=re.UNICODE).split())
    return f"{stem[:60] or 'chat'}.{ext}"


def export_json(conv: Conversation, recordings: dict[str, Recording]) -> str:
    """The conversation file: ``Conversation.to_json`` plus a ``recordings`` part (their
    bytes in base64, newest first while they fit: ``recording.EXPORT_MAX``)."""
    doc = conv.to_json()
    doc["recordings"] = recordings_to_json(recordings)
    return json.dumps(doc, ensure_ascii=False)


def conversation_json_steps(conv: Conversation, every: int = 16) -> Generator[None, None, str]:
    """``json.dumps(conv.to_json())`` (as JSON: the same value, messages last) in steps of
    ``every`` messages: a chat of 100 long answers is ~700 KB to encode, ~80 ms in one task
    on a phone-class CPU, and it is written through on every change. The content is taken when
    the generator starts, so later changes to ``conv`` do not mix in."""
    doc = conv.to_json()
    messages = doc.pop("messages")
    parts: list[str] = []
    for i, message in enumerate(messages):
        parts.append(json.dumps(message))
        if i % every == every - 1:
            yield
    head = json.dumps(doc)
    return f'{head[:-1]}, "messages": [{", ".join(parts)}]}}'


def parse_import(text: str, taken: set[str]) -> tuple[Conversation, dict[str, Recording]]:
    """A chat from an exported file, checked; ``ImportError_`` says what is wrong with it.
    It gets a new id when ``taken`` (the ids in the list) already has its id, so an import
    never replaces a chat."""
    return run_steps(parse_import_steps(text, taken))


def parse_import_steps(
    text: str, taken: set[str]
) -> Generator[None, None, tuple[Conversation, dict[str, Recording]]]:
    """``parse_import`` in steps (a long chat's file is a few 100 KB: the page reads it in
    slices, ``browser.dom.run_sliced``)."""
    if len(text) > IMPORT_MAX:
        raise ImportError_(f"the file is larger than {IMPORT_MAX >> 20} MiB")
    try:
        obj = yield from loads_bounded_steps(text)
    except ValueError as exc:
        raise ImportError_(f"not a JSON file ({exc})") from None
    yield
    conv = Conversation.from_json(obj)
    yield
    try:
        recs = recordings_from_json(obj.get("recordings"), set(conv.messages))
    except RecordingError as exc:
        raise ImportError_(str(exc)) from None
    if conv.id in taken or not conv.id:
        conv.id = new_chat_id()
    return conv, recs


def storage_problem(name: str, message: str) -> str:
    """Why chats are not being saved, in words, from the browser's error (its DOMException
    name and message), and what still works."""
    why = {
        "QuotaExceededError": "the browser's storage for this site is full: delete old chats, "
        "or set Settings → Keep stream recordings to no",
        "SecurityError": "this browser does not let the page store data here (private "
        "browsing, or storage blocked for this site)",
        "InvalidStateError": "the browser's storage is not available (private browsing, or "
        "another tab holds an older version of the store)",
        "UnknownError": "the browser's storage failed (the disk may be full)",
    }.get(name, f"the browser's storage failed ({name}: {message})")
    return (
        f"Chats are not being saved: {why}. This page keeps working; what you write now lasts "
        "until it is closed."
    )
