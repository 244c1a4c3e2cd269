"""A conversation as chat users know it: a tree of messages where regenerating an answer adds
a *version* of it and editing a sent message starts a *branch*, with one selected path that is
what the page shows and what is sent.

Pure Python, so the rules are tested in CPython: which history a regenerated answer replies to,
what an edit keeps, how a continued answer is joined, and how a conversation round-trips
through JSON (storage, export, import). The browser binds it to the DOM and to IndexedDB.

    user "hi"
    ├── assistant "Hello!"            version 1/2
    └── assistant "Hi there."         version 2/2  (selected)
        └── user "tell me more"       ...
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from ..events import ReasoningBlock, ToolCall
from ..providers.base import Turn
from .message_extras import (
    ExtrasError,
    reasoning_from_json,
    reasoning_text,
    reasoning_to_json,
    thought_ms_from_json,
    tool_calls_from_json,
    tool_calls_to_json,
)

__all__ = [
    "Conversation",
    "ImportError_",
    "Message",
    "Role",
]

Role = Literal["user", "assistant"]
SCHEMA = "pysse.conversation"
VERSION = 1
MAX_IMPORT_MESSAGES = 10_000


class ImportError_(ValueError):  # "ImportError" is a builtin
    """A conversation file that cannot be imported; the message says what is wrong with it."""


@dataclass
class Message:
    """One message. An assistant message also carries how its answer ended (``state``: one
    of ``streaming``, ``completed``, ``truncated``, ``error``, ``aborted``) and, while it may
    still be resumed or continued, what the page needs for that."""

    id: str
    role: Role
    text: str
    parent: str | None
    state: str = "completed"
    detail: str = ""  # how it ended, for people ("truncated: the connection closed ...")
    format: str | None = None  # the wire format its stream was in
    usage: tuple[int | None, int | None] | None = None
    created: float = field(default_factory=time.time)
    pieces: int = 1  # > 1 once continued: the text is the join of several answers
    speed: dict[str, Any] | None = None  # time to first token, tokens/s (page.speed)
    answer_id: str = ""  # the relay's id for the answer (X-Pysse-Answer-Id), for a reattach
    url: str = ""  # the relay it was asked of (a reattach goes back there)
    # Beside the text, never part of it (issue #23): the reasoning blocks (shown folded, sent
    # back to Anthropic with their signatures), how long the model thought, the tool calls.
    reasoning: tuple[ReasoningBlock, ...] = ()
    thought_ms: float | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    # Not stored: restored from an answer still streaming when the page closed, with an id
    # the relay may still know (the page tries to reattach; see ``reattachable``).
    in_flight: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "role": self.role,
            "text": self.text,
            "parent": self.parent,
            "created": self.created,
        }
        if self.role == "assistant":
            out.update(state=self.state, detail=self.detail, format=self.format)
            out["usage"] = list(self.usage) if self.usage else None
            out["pieces"] = self.pieces
            out["speed"] = self.speed
            if self.answer_id:
                out["answer_id"] = self.answer_id
                out["url"] = self.url
            if self.reasoning:
                out["reasoning"] = reasoning_to_json(self.reasoning)
                out["thought_ms"] = self.thought_ms
            if self.tool_calls:
                out["tool_calls"] = tool_calls_to_json(self.tool_calls)
        return out

    @property
    def reasoning_text(self) -> str:
        """The reasoning as shown (never part of ``text``)."""
        return reasoning_text(self.reasoning)


class Conversation:
    """Messages in a tree, one selected child per parent (the path on screen)."""

    def __init__(self, id: str, title: str = "") -> None:
        self.id = id
        self.title = title
        self.renamed = False  # a title the user chose (else it follows the first message)
        self.deleted = False  # deleted by the user: never written again (an answer streaming)
        self.created = self.updated = time.time()
        self.messages: dict[str, Message] = {}
        self.children: dict[str | None, list[str]] = {None: []}
        self.selected: dict[str | None, str] = {}  # parent id -> the child on the path
        self._ids = itertools.count(1)

    # -- reading ---------------------------------------------------------------------------------

    def path(self) -> list[Message]:
        """The selected path from the first message to the last: what the page shows."""
        out: list[Message] = []
        parent: str | None = None
        while (child := self.selected.get(parent)) is not None:
            out.append(self.messages[child])
            parent = child
        return out

    def reattachable(self, relay_url: str) -> list[Message]:
        """Answers on the selected path that were streaming when the page closed and that the
        relay at ``relay_url`` (the page's relay now) may still be keeping: it gave them an
        id. Only that relay: a stored or imported URL never makes the page call another host.
        A continued answer is not reattached (its stream holds only the last piece): it can be
        continued again."""
        return [
            m
            for m in self.path()
            if m.in_flight and m.answer_id and m.url == relay_url and m.pieces == 1 and m.parent
        ]

    @property
    def leaf(self) -> str | None:
        path = self.path()
        return path[-1].id if path else None

    def history(self, upto: str) -> list[tuple[str, str]]:
        """The (role, text) pairs from the first message down to ``upto`` (included): what is
        sent for an answer that follows it. Empty failed answers are left out: they say
        nothing the model should see."""
        chain: list[Message] = []
        node: Message | None = self.messages[upto]
        while node is not None:
            chain.append(node)
            node = self.messages[node.parent] if node.parent else None
        return [(m.role, m.text) for m in reversed(chain) if m.role == "user" or m.text]

    def turns(self, upto: str) -> list[Turn]:
        """``history`` with each answer's reasoning blocks: what Anthropic, with thinking
        on, needs sent back (the provider's ``build_body`` drops them for the others)."""
        chain: list[Message] = []
        node: Message | None = self.messages[upto]
        while node is not None:
            chain.append(node)
            node = self.messages[node.parent] if node.parent else None
        return [
            Turn(m.role, m.text, m.reasoning if m.role == "assistant" else ())
            for m in reversed(chain)
            if m.role == "user" or m.text
        ]

    def versions(self, message_id: str) -> tuple[int, int]:
        """(1-based position, count) of a message among its siblings: the ‹2/3› control."""
        msg = self.messages[message_id]
        siblings = self.children[msg.parent]
        return siblings.index(message_id) + 1, len(siblings)

    def __iter__(self) -> Iterator[Message]:
        return iter(self.messages.values())

    # -- changing ------------------------------------------------------------------------------

    def _add(self, role: Role, text: str, parent: str | None, **kw: Any) -> Message:
        msg = Message(f"m{next(self._ids)}", role, text, parent, **kw)
        self.messages[msg.id] = msg
        self.children.setdefault(parent, []).append(msg.id)
        self.children.setdefault(msg.id, [])
        self.selected[parent] = msg.id
        self.updated = time.time()
        if not self.title and role == "user":
            self.title = _first_line(text)
        return msg

    def add_user(self, text: str) -> Message:
        """A new message at the end of the selected path."""
        return self._add("user", text, self.leaf)

    def start_answer(self, user_id: str) -> Message:
        """A new (streaming) answer to ``user_id``: a new version if it has answers already."""
        if self.messages[user_id].role != "user":
            raise ValueError("an answer replies to a user message")
        return self._add("assistant", "", user_id, state="streaming")

    def regenerate(self, answer_id: str) -> Message:
        """Another version of an answer, replying to the same history; later turns stay with
        the old version (they become visible again by selecting it)."""
        parent = self.messages[answer_id].parent
        if parent is None:
            raise ValueError("an answer always has a user message before it")
        return self.start_answer(parent)

    def edit(self, user_id: str, text: str) -> Message:
        """Change a sent message: a new sibling (a branch); the old one and its answers stay."""
        old = self.messages[user_id]
        if old.role != "user":
            raise ValueError("only a user message can be edited")
        return self._add("user", text, old.parent)

    def select(self, message_id: str) -> None:
        """Show this version (and the path below it as it was last selected)."""
        msg = self.messages[message_id]
        self.selected[msg.parent] = message_id
        self.updated = time.time()

    def step_version(self, message_id: str, step: int) -> str:
        """The sibling ``step`` places away (the ‹ › buttons), selected; returns its id."""
        siblings = self.children[self.messages[message_id].parent]
        i = max(0, min(len(siblings) - 1, siblings.index(message_id) + step))
        self.select(siblings[i])
        return siblings[i]

    def finish(
        self,
        answer_id: str,
        text: str,
        state: str,
        *,
        detail: str = "",
        format: str | None = None,
        usage: tuple[int | None, int | None] | None = None,
        speed: dict[str, Any] | None = None,
        relay_id: str = "",
        url: str = "",
        reasoning: tuple[ReasoningBlock, ...] | None = None,
        thought_ms: float | None = None,
        tool_calls: tuple[ToolCall, ...] | None = None,
    ) -> None:
        """Record how an answer ended (or, with state ``streaming``, how far it got). A
        continued answer passes its whole joined text. ``reasoning`` and ``tool_calls``
        replace what was kept when given (a continued answer: its last piece's, if any)."""
        msg = self.messages[answer_id]
        msg.text, msg.state, msg.detail = text, state, detail
        msg.format = format or msg.format
        msg.usage = usage or msg.usage
        msg.speed = speed or msg.speed
        msg.answer_id = relay_id or msg.answer_id
        msg.url = url or msg.url
        if reasoning:
            msg.reasoning = reasoning
            msg.thought_ms = thought_ms if thought_ms is not None else msg.thought_ms
        if tool_calls:
            msg.tool_calls = tool_calls
        msg.in_flight = False
        self.updated = time.time()

    def rename(self, title: str) -> None:
        """A title chosen by the user (one line, at most 80 characters); empty goes back to
        the first message's."""
        title = " ".join(title.split())[:80]
        self.renamed = bool(title)
        first = next((m for m in self.path() if m.role == "user"), None)
        self.title = title or (_first_line(first.text) if first else "")
        # not "updated": a new name does not move the chat up the list

    def continue_from(self, answer_id: str) -> tuple[list[tuple[str, str]], str]:
        """What to send to continue a truncated or stopped answer: the history up to and
        including the partial answer, and the text the continuation is joined to."""
        msg = self.messages[answer_id]
        if msg.role != "assistant" or msg.state == "streaming":
            raise ValueError("only a finished answer can be continued")
        msg.pieces += 1
        msg.state = "streaming"
        return self.history(answer_id), msg.text

    # -- JSON ------------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "version": VERSION,
            "id": self.id,
            "title": self.title,
            "renamed": self.renamed,
            "created": self.created,
            "updated": self.updated,
            "messages": [m.to_json() for m in self.messages.values()],
            "selected": {("" if k is None else k): v for k, v in self.selected.items()},
        }

    @classmethod
    def from_json(cls, obj: Any) -> Conversation:
        """A conversation from ``to_json``'s output (storage or an imported file), checked:
        anything malformed is an ``ImportError_`` naming the problem, never a crash."""
        if not isinstance(obj, dict) or obj.get("schema") != SCHEMA:
            raise ImportError_("not a pysse conversation (no schema 'pysse.conversation')")
        if obj.get("version") != VERSION:
            raise ImportError_(f"unsupported conversation version {obj.get('version')!r}")
        raw = obj.get("messages")
        if not isinstance(raw, list) or len(raw) > MAX_IMPORT_MESSAGES:
            raise ImportError_(f"'messages' must be a list of at most {MAX_IMPORT_MESSAGES}")
        conv = cls(_text(obj.get("id"), "id") or "imported", _text(obj.get("title"), "title"))
        top = 0
        for i, m in enumerate(raw):
            if not isinstance(m, dict):
                raise ImportError_(f"message {i} is not an object")
            role = m.get("role")
            if role not in ("user", "assistant"):
                raise ImportError_(f"message {i} has role {role!r}")
            mid, parent = _text(m.get("id"), "id"), m.get("parent")
            if not mid or mid in conv.messages:
                raise ImportError_(f"message {i} has a missing or repeated id")
            if parent is not None and parent not in conv.messages:
                raise ImportError_(f"message {i} replies to {parent!r}, which comes later or not")
            usage = m.get("usage")
            try:
                reasoning = reasoning_from_json(m.get("reasoning"), f"message {i}")
                tool_calls = tool_calls_from_json(m.get("tool_calls"), f"message {i}")
            except ExtrasError as exc:
                raise ImportError_(str(exc)) from None
            msg = Message(
                mid,
                role,
                _text(m.get("text"), "text"),
                parent,
                state=_text(m.get("state"), "state") or "completed",
                detail=_text(m.get("detail"), "detail"),
                format=m.get("format") if isinstance(m.get("format"), str) else None,
                usage=_usage(usage),
                created=_num(m.get("created")),
                pieces=m["pieces"] if isinstance(m.get("pieces"), int) else 1,
                speed=m["speed"] if isinstance(m.get("speed"), dict) else None,
                answer_id=_text(m.get("answer_id"), "answer_id"),
                url=_text(m.get("url"), "url"),
                reasoning=reasoning if role == "assistant" else (),
                thought_ms=thought_ms_from_json(m.get("thought_ms")) if reasoning else None,
                tool_calls=tool_calls if role == "assistant" else (),
            )
            if msg.state == "streaming":  # it was cut off when the page closed
                msg.in_flight = bool(msg.answer_id)
                msg.state, msg.detail = "truncated", msg.detail or "the page closed mid-answer"
            conv.messages[mid] = msg
            conv.children.setdefault(parent, []).append(mid)
            conv.children.setdefault(mid, [])
            top = max(top, _number(mid))
        sel = obj.get("selected")
        for k, v in sel.items() if isinstance(sel, dict) else []:
            parent_id = k or None
            if isinstance(v, str) and v in conv.children.get(parent_id, []):
                conv.selected[parent_id] = v
        for parent_id, kids in conv.children.items():  # every branch shows something
            if kids and parent_id not in conv.selected:
                conv.selected[parent_id] = kids[-1]
        conv._ids = itertools.count(top + 1)
        conv.renamed = obj.get("renamed") is True
        conv.created = _num(obj.get("created")) or time.time()
        conv.updated = _num(obj.get("updated")) or conv.created
        return conv

    def to_markdown(self) -> str:
        """The selected path as a readable Markdown document (Export as Markdown)."""
        out = [f"# {self.title or 'Conversation'}", ""]
        for m in self.path():
            who = "You" if m.role == "user" else "Assistant"
            note = "" if m.role == "user" or m.state == "completed" else f" ({m.state})"
            out += [f"## {who}{note}", "", m.text, ""]
        return "\n".join(out)


def _num(value: Any) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value == value
    return float(value) if ok and abs(value) < 1e12 else 0.0


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0][:60] if text.strip() else ""


def _text(value: Any, name: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ImportError_(f"{name!r} must be text, not {type(value).__name__}")
    return value


def _usage(value: Any) -> tuple[int | None, int | None] | None:
    if isinstance(value, list) and len(value) == 2:
        a, b = value
        return (a if isinstance(a, int) else None, b if isinstance(b, int) else None)
    return None


def _number(mid: str) -> int:
    return int(mid[1:]) if mid[:1] == "m" and mid[1:].isdigit() and len(mid) < 12 else 0
