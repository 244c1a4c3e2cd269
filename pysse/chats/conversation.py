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
import secrets
import time
from collections.abc import Iterator
from typing import Any

from ..events import Citation, ReasoningBlock, ToolCall, sources
from ..providers.attachments import Attachment
from ..providers.base import Turn
from .changes import Changes
from .choice import Choice, read_choice
from .message import Message, Role
from .message_extras import kept_citations
from .message_read import MAX_TIME, message_number, read_message
from .records import ImportError_, Reader
from .runs import RunOutput, runs_markdown, with_run

__all__ = [
    "Conversation",
    "ImportError_",
    "Message",
    "Role",
]

SCHEMA = "pysse.conversation"
VERSION = 1
MAX_IMPORT_MESSAGES = 10_000


class Conversation:
    """Messages in a tree, one selected child per parent (the path on screen)."""

    def __init__(self, id: str, title: str = "", tag: str | None = None) -> None:
        self.id = id
        self.title = title
        self.renamed = False  # a title the user chose (else it follows the first message)
        self.deleted = False  # deleted by the user: never written again (an answer streaming)
        # New message ids end with this tab's tag ("m7-3fa9c1"): two tabs adding to one chat
        # never make the same id, so their writes merge (``chats.merge``).
        self.tag = tag if tag is not None else secrets.token_hex(3)
        self.changes = Changes()  # this tab's, since its last write
        self.stored = False  # read from or written to the store (gone there: deleted elsewhere)
        self.stamp = ""  # the stored copy this tab last read or wrote (``app.storage``)
        self.dropped: list[str] = []  # what a lenient read left out (``from_json``)
        self.created = self.updated = time.time()
        self.messages: dict[str, Message] = {}
        self.children: dict[str | None, list[str]] = {None: []}
        self.selected: dict[str | None, str] = {}  # parent id -> the child on the path
        self.choice: Choice | None = None  # the endpoint and model it asks (``chats.choice``)
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

    def turns(self, upto: str, reasoning: bool = True) -> list[Turn]:
        """``history`` with each answer's reasoning blocks: what Anthropic, with thinking
        on, needs sent back (the provider's ``build_body`` drops them for the others); and
        each question's attached files."""
        chain: list[Message] = []
        node: Message | None = self.messages[upto]
        while node is not None:
            chain.append(node)
            node = self.messages[node.parent] if node.parent else None
        return [
            Turn(m.role, m.text, m.reasoning if reasoning else (), m.attachments)
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
        msg = Message(
            f"m{next(self._ids)}-{self.tag}" if self.tag else f"m{next(self._ids)}",
            role,
            text,
            parent,
            **kw,
        )
        self.messages[msg.id] = msg
        self.children.setdefault(parent, []).append(msg.id)
        self.children.setdefault(msg.id, [])
        self.selected[parent] = msg.id
        self.changes.message(msg.id)
        self.changes.selection(parent)
        self.updated = time.time()
        if not self.title and role == "user":
            self.title = _first_line(text)
        return msg

    def add_user(self, text: str, attachments: tuple[Attachment, ...] = ()) -> Message:
        """A new message at the end of the selected path."""
        msg = self._add("user", text, self.leaf, attachments=attachments)
        if not self.title and attachments:  # (files alone: the chat is named for the first)
            self.title = _first_line(attachments[0].name)
        return msg

    def has_attachments(self, upto: str) -> bool:
        """Whether a message from the first down to ``upto`` carries files (its request is
        then made from ``turns``, which carry them)."""
        node: Message | None = self.messages.get(upto)
        while node is not None:
            if node.attachments:
                return True
            node = self.messages[node.parent] if node.parent else None
        return False

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
        """Change a sent message: a new sibling (a branch); the old one and its answers stay.
        Its files go with the new text (Edit changes the words, not what was attached)."""
        old = self.messages[user_id]
        if old.role != "user":
            raise ValueError("only a user message can be edited")
        return self._add("user", text, old.parent, attachments=old.attachments)

    def select(self, message_id: str) -> None:
        """Show this version (and the path below it as it was last selected)."""
        msg = self.messages[message_id]
        self.selected[msg.parent] = message_id
        self.changes.selection(msg.parent)
        self.updated = time.time()

    def set_run(self, answer_id: str, run: RunOutput) -> None:
        """Keep ``run`` as the last run of its block of answer ``answer_id`` (``runs.py``)."""
        msg = self.messages.get(answer_id)
        if msg is None or msg.role != "assistant":
            return
        msg.runs = with_run(msg.runs, run)
        self.changes.message(answer_id)

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
        model: str | None = None,
        usage: tuple[int | None, int | None] | None = None,
        speed: dict[str, Any] | None = None,
        relay_id: str = "",
        url: str = "",
        reasoning: tuple[ReasoningBlock, ...] | None = None,
        thought_ms: float | None = None,
        tool_calls: tuple[ToolCall, ...] | None = None,
        citations: tuple[Citation, ...] | None = None,
    ) -> None:
        """Record how an answer ended (or, with state ``streaming``, how far it got). A
        continued answer passes its whole joined text. ``reasoning`` and ``tool_calls``
        replace what was kept when given (a continued answer: its last piece's, if any);
        ``citations`` too, only their http(s) sources kept (``kept_citations``)."""
        msg = self.messages[answer_id]
        msg.text, msg.state, msg.detail = text, state, detail
        msg.format = format or msg.format
        msg.model = model or msg.model
        msg.usage = usage or msg.usage
        msg.speed = speed or msg.speed
        msg.answer_id = relay_id or msg.answer_id
        msg.url = url or msg.url
        if reasoning:
            msg.reasoning = reasoning
            msg.thought_ms = thought_ms if thought_ms is not None else msg.thought_ms
        if tool_calls:
            msg.tool_calls = tool_calls
        if citations:
            msg.citations = kept_citations(citations)
        msg.in_flight = False
        self.changes.message(answer_id)
        self.updated = time.time()

    def resume(self, answer_id: str) -> Message:
        """An answer streaming again in this tab (reattached after a reload)."""
        msg = self.messages[answer_id]
        msg.state, msg.in_flight = "streaming", False
        self.changes.message(answer_id)
        return msg

    def rename(self, title: str) -> None:
        """A title chosen by the user (one line, at most 80 characters); empty goes back to
        the first message's."""
        title = " ".join(title.split())[:80]
        self.renamed = bool(title)
        first = next((m for m in self.path() if m.role == "user"), None)
        self.title = title or (_first_line(first.text) if first else "")
        self.changes.renamed()
        # not "updated": a new name does not move the chat up the list

    def choose(self, choice: Choice | None) -> None:
        """The endpoint and model this chat's next requests ask (the picker); not "updated":
        a choice does not move the chat up the list."""
        if choice != self.choice:
            self.choice = choice
            self.changes.chose()

    def continue_from(self, answer_id: str) -> tuple[list[tuple[str, str]], str]:
        """What to send to continue a truncated or stopped answer: the history up to and
        including the partial answer, and the text the continuation is joined to."""
        msg = self.messages[answer_id]
        if msg.role != "assistant" or msg.state == "streaming":
            raise ValueError("only a finished answer can be continued")
        msg.pieces += 1
        msg.state = "streaming"
        self.changes.message(answer_id)
        return self.history(answer_id), msg.text

    # -- JSON ------------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        extra = {"choice": self.choice.to_json()} if self.choice else {}
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
            **extra,
        }

    @classmethod
    def from_json(cls, obj: Any, *, strict: bool = True) -> Conversation:
        """A conversation from ``to_json``'s output, checked (``chats.records``). A file is
        read ``strict``: anything malformed is an ``ImportError_`` naming the field. The store
        is read leniently: a bad field is dropped, a message that cannot be read is dropped
        with the messages below it, and ``dropped`` says what went."""
        if not isinstance(obj, dict) or obj.get("schema") != SCHEMA:
            raise ImportError_("not a pysse conversation (no schema 'pysse.conversation')")
        if obj.get("version") != VERSION:
            raise ImportError_(f"unsupported conversation version {str(obj.get('version'))[:9]!r}")
        raw = obj.get("messages")
        if not isinstance(raw, list) or len(raw) > MAX_IMPORT_MESSAGES:
            raise ImportError_(f"'messages' must be a list of at most {MAX_IMPORT_MESSAGES}")
        r = Reader(strict)
        cid = obj.get("id")  # (none: an import gets a new one)
        conv = cls((r.ident(cid, "the chat's 'id'") if cid is not None else "") or "imported")
        conv.title = r.text(obj.get("title"), "the chat's 'title'")
        top = 0
        for i, m in enumerate(raw):
            try:
                msg = read_message(m, f"message {i}", conv.messages, r)
            except ImportError_ as exc:
                if strict:
                    raise
                r.dropped.append(f"{exc} (the message was dropped)")
                continue
            conv.messages[msg.id] = msg
            conv.children.setdefault(msg.parent, []).append(msg.id)
            conv.children.setdefault(msg.id, [])
            top = max(top, message_number(msg.id))
        sel = obj.get("selected")
        for k, v in sel.items() if isinstance(sel, dict) else []:
            parent_id = k or None
            if isinstance(v, str) and v in conv.children.get(parent_id, []):
                conv.selected[parent_id] = v
        for parent_id, kids in conv.children.items():  # every branch shows something
            if kids and parent_id not in conv.selected:
                conv.selected[parent_id] = kids[-1]
        conv._ids = itertools.count(top + 1)
        conv.renamed = r.flag(obj.get("renamed"), "the chat's 'renamed'") is True
        conv.created = r.number(obj.get("created"), "the chat's 'created'", 0, MAX_TIME) or 0.0
        conv.created = conv.created or time.time()
        conv.updated = r.number(obj.get("updated"), "the chat's 'updated'", 0, MAX_TIME) or 0.0
        conv.updated = conv.updated or conv.created
        conv.choice = read_choice(obj.get("choice"), r)
        conv.dropped = r.dropped
        return conv

    def to_markdown(self) -> str:
        """The selected path as a readable Markdown document (Export as Markdown)."""
        out = [f"# {self.title or 'Conversation'}", ""]
        for m in self.path():
            who = "You" if m.role == "user" else "Assistant"
            note = "" if m.role == "user" or m.state == "completed" else f" ({m.state})"
            out += [f"## {who}{note}", "", m.text, ""]
            if m.role == "assistant" and m.citations:
                out += ["Sources:", "", *_markdown_sources(m.citations), ""]
            if m.role == "assistant" and m.runs:
                out += runs_markdown(m.runs)
            if m.attachments:  # (named: the file's bytes are the JSON export's)
                out += ["Attached: " + ", ".join(f"`{f.name}`" for f in m.attachments), ""]
        return "\n".join(out)


def _markdown_sources(citations: tuple[Citation, ...]) -> list[str]:
    """A numbered list of links, ``1. [Title](<url>) (host)``: the title as text (markdown's
    brackets and backslashes escaped), the URL in angle brackets with the characters that
    would end it encoded."""
    out = []
    for n, c in enumerate(sources(citations), 1):
        title = " ".join(c.title.split()) or c.host
        title = "".join("\\" + ch if ch in "\\[]*_`<>" else ch for ch in title)
        url = c.url.replace(" ", "%20").replace("<", "%3C").replace(">", "%3E")
        out.append(f"{n}. [{title}](<{url}>) ({c.host})")
    return out


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0][:60] if text.strip() else ""
