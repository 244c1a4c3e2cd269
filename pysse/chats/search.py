"""Search across chats: which chats' messages contain a term, where, and a snippet around it.

Pure; the browser keeps one ``ChatText`` per chat (built when the chat is first searched,
dropped when it changes) and drives ``search_steps`` in slices, so typing never waits on a
scan (``browser/search_view.py``). Each chat's searchable messages are also stored beside it
(``search_record``, written with the chat in one transaction), so the first search after a
reload reads a small flat record per chat instead of every conversation's whole JSON
(``ChatText.from_record``; a record that is missing, damaged or older than the chat's row is
not used, and the chat is read as before).

Matching is case-insensitive by Unicode case folding (``str.casefold``: "STRASSE" finds
"Straße", "ΣΑΣ" finds "σας"). Each chat's folded messages are kept joined by a separator no
term can contain, so a whole chat is one ``str.find`` (C speed) and a match never spans two
messages. Only what the page shows is searched: the user's and the assistant's text on the
selected path; reasoning and tool calls are not part of ``Message.text``.

Folding can change lengths ("ß" -> "ss"), so a match's position in the folded text is mapped
back to the original characters (``original_span``) before the snippet is cut; the snippet's
HTML is escaped text with the match in ``<mark>``: model output never becomes markup here.
"""

from __future__ import annotations

import bisect
import html
import json
import re
from collections.abc import Generator, Iterable
from dataclasses import dataclass

from ..steps import run_steps
from .conversation import Conversation
from .files import ChatSummary

__all__ = [
    "MIN_TERM",
    "ChatText",
    "Hit",
    "Snippet",
    "count_label",
    "fold",
    "fold_term",
    "locate",
    "original_span",
    "rank",
    "read_batches",
    "search",
    "search_record",
    "search_record_steps",
    "search_steps",
    "snippet",
]

MIN_TERM = 2  # characters typed before the list is filtered
SEP = "\x00"  # between messages in a chat's folded text (removed from texts and terms)
SLICE_CHARS = 400_000  # folded characters scanned between yields (~0.1 ms in CPython)
BEFORE = 40  # snippet characters kept before the match (about)
WIDTH = 140  # snippet characters in all (about)
RECORD_VERSION = 1  # of ``search_record``'s shape: a record of another is not used


def fold(text: str) -> str:
    """The form texts and terms are compared in."""
    return text.replace(SEP, " ").casefold()


def fold_term(term: str) -> str:
    """A typed term as it is searched for: folded, outer spaces dropped; "" when it is too
    short to search (fewer than ``MIN_TERM`` characters)."""
    t = fold(term.strip())
    return t if len(term.strip()) >= MIN_TERM else ""


@dataclass(frozen=True)
class ChatText:
    """One chat's searchable text: its messages (user and assistant, the selected path)."""

    chat_id: str
    title: str
    updated: float
    ids: tuple[str, ...]
    roles: tuple[str, ...]
    texts: tuple[str, ...]  # as written (snippets are cut from these)
    folded: str  # the folded texts joined by SEP
    starts: tuple[int, ...]  # where each message begins in ``folded``

    @classmethod
    def of(cls, conv: Conversation) -> ChatText:
        return cls.from_messages(conv.id, conv.title, conv.updated, _searched(conv))

    @classmethod
    def from_record(cls, chat_id: str, title: str, updated: float, record: str) -> ChatText | None:
        """A chat's text from its stored ``search_record``, or None when the record cannot be
        used: damaged, of another ``RECORD_VERSION``, or not of the chat as its row
        (``updated``) describes it. The title is the row's: a rename moves no record."""
        try:
            obj = json.loads(record)
        except (ValueError, RecursionError, TypeError):
            return None
        if (
            not isinstance(obj, dict)
            or obj.get("v") != RECORD_VERSION
            or obj.get("updated") != updated
            or not isinstance(obj.get("messages"), list)
        ):
            return None
        messages = obj["messages"]
        if not all(
            isinstance(m, list) and len(m) == 3 and all(isinstance(x, str) for x in m)
            for m in messages
        ):
            return None
        return cls.from_messages(chat_id, title, updated, [(m[0], m[1], m[2]) for m in messages])

    @classmethod
    def from_messages(
        cls, chat_id: str, title: str, updated: float, messages: list[tuple[str, str, str]]
    ) -> ChatText:
        folded = [fold(text) for _, _, text in messages]
        starts, at = [], 0
        for f in folded:
            starts.append(at)
            at += len(f) + 1
        return cls(
            chat_id,
            title,
            updated,
            tuple(m[0] for m in messages),
            tuple(m[1] for m in messages),
            tuple(m[2] for m in messages),
            SEP.join(folded),
            tuple(starts),
        )


def _searched(conv: Conversation) -> list[tuple[str, str, str]]:
    """The messages searched: the user's and the assistant's, on the selected path."""
    return [
        (m.id, m.role, m.text) for m in conv.path() if m.role in ("user", "assistant") and m.text
    ]


def read_batches(rows: list[ChatSummary], messages: int) -> list[list[ChatSummary]]:
    """``rows`` in order, cut into runs of at most ``messages`` messages in all (a chat with
    more is a run of its own): how many stored records one read asks for."""
    out: list[list[ChatSummary]] = []
    size = 0
    for row in rows:
        if not out or size + row.messages > messages:
            out.append([])
            size = 0
        out[-1].append(row)
        size += row.messages
    return out


def search_record(conv: Conversation) -> str:
    """What is stored beside a chat for search: its searched messages as written (folding
    is redone on reading: it is C speed, and the stored text stays what the user wrote)."""
    return run_steps(search_record_steps(conv))


def search_record_steps(conv: Conversation, every: int = 16) -> Generator[None, None, str]:
    """``search_record`` in steps of ``every`` messages, as ``chats.conversation_json_steps``
    encodes the body beside it (a long chat's text is ~80 ms to encode in one task on a
    phone-class CPU, on every save). The content is taken at the call, not at the first
    step, so a record and a body taken together agree."""
    return _record_steps(_searched(conv), conv.updated, every)


def _record_steps(
    messages: list[tuple[str, str, str]], updated: float, every: int
) -> Generator[None, None, str]:
    parts: list[str] = []
    for i, message in enumerate(messages):
        parts.append(json.dumps(message))
        if i % every == every - 1:
            yield
    head = json.dumps({"v": RECORD_VERSION, "updated": updated})
    return f'{head[:-1]}, "messages": [{", ".join(parts)}]}}'


@dataclass(frozen=True)
class Snippet:
    """Text around a match: ``before``, the ``match`` as written, ``after``."""

    before: str
    match: str
    after: str

    def html(self) -> str:
        """Escaped text, the match in ``<mark>``."""
        esc = html.escape
        return f"{esc(self.before)}<mark>{esc(self.match)}</mark>{esc(self.after)}"

    @property
    def text(self) -> str:
        return self.before + self.match + self.after


@dataclass(frozen=True)
class Hit:
    """A chat that matched: its first matching message and a snippet of it."""

    chat_id: str
    title: str
    updated: float
    message_id: str
    role: str
    snippet: Snippet
    in_title: bool


def original_span(text: str, start: int, length: int) -> tuple[int, int]:
    """The characters of ``text`` whose folded form covers ``fold(text)[start:start+length]``
    (a match starting inside one character's folding, the second "s" of "ß", marks all of
    it). Only the characters that fold to several (ß, İ, ligatures) shift positions: they
    are found by a regex over what precedes the match's end, not one ``fold`` a character
    (a 1 MB message that starts with "Straße" took a second a keystroke)."""
    if len(fold(text)) == len(text):  # every character folds to one: same positions
        return start, start + length
    end = start + length
    head = text[:end]  # (a folded position is never before its character's)
    wide = "".join(sorted(c for c in set(head) if len(fold(c)) > 1))
    extra = 0  # how much longer fold(text[:i]) is than text[:i], before wide character i
    first = -1
    for m in re.finditer(f"[{re.escape(wide)}]", head) if wide else ():
        i = m.start()
        at = i + extra  # where character i's folding starts; the ones before it fold to one
        if first < 0 and start < at:
            first = start - extra
        if first >= 0 and end <= at:
            return first, end - extra
        width = len(fold(text[i]))
        if first < 0 and start < at + width:
            first = i
        if first >= 0 and end <= at + width:
            return first, i + 1
        extra += width - 1
    if first < 0:
        first = min(start - extra, len(text))
    return first, min(end - extra, len(text))


def _utf16(s: str) -> int:
    """``len(s)`` as JavaScript counts it (UTF-16 code units: a DOM Range's offsets)."""
    return len(s) + sum(1 for c in s if ord(c) > 0xFFFF)


def locate(texts: list[str], term: str) -> tuple[int, int, int, int] | None:
    """Where ``term`` (folded, as ``fold_term`` gives it) first occurs in text split over
    nodes ``texts`` (a message's DOM text nodes, in order): ``(first node, its UTF-16 offset,
    last node, its UTF-16 end offset)``, ready for a DOM ``Range``; None if it is not there
    (the rendered text can differ from the source the search matched: ``**kal**eido``)."""
    joined = "".join(texts)
    pos = fold(joined).find(term) if term else -1
    if pos < 0:
        return None
    start, end = original_span(joined, pos, len(term))
    at = 0
    first: tuple[int, int] | None = None
    for i, t in enumerate(texts):
        if first is None and start < at + len(t):
            first = (i, _utf16(t[: start - at]))
        if first is not None and end <= at + len(t):
            return (*first, i, _utf16(t[: end - at]))
        at += len(t)
    return None


def _squeeze(s: str) -> str:
    return " ".join(s.split())


def snippet(text: str, start: int, end: int) -> Snippet:
    """``text[start:end]`` with some of what surrounds it, cut at spaces where there are
    some, whitespace squeezed (a snippet is one line), "…" where text was left out."""
    lo = max(0, start - BEFORE)
    if lo > 0:
        space = text.find(" ", lo, start)
        lo = space + 1 if 0 <= space < start - BEFORE // 2 else lo
    hi = min(len(text), end + max(WIDTH - BEFORE - (end - start), 20))
    if hi < len(text):
        space = text.rfind(" ", end, hi)
        hi = space if space > end + 10 else hi
    before = ("…" if lo > 0 else "") + _squeeze(text[lo:start]).lstrip()
    if before and text[start - 1 : start].isspace():
        before += " "
    after = _squeeze(text[end:hi])
    if after and text[end : end + 1].isspace():
        after = " " + after
    return Snippet(before, text[start:end], after + ("…" if hi < len(text) else ""))


def find(chat: ChatText, term: str) -> Hit | None:
    """The chat's first message containing ``term`` (folded); else its title, if that has
    it (a chat renamed "Tax return" is found by its name: ``role`` "title", no message);
    else None."""
    title = fold(chat.title)
    in_title = term in title
    pos = chat.folded.find(term)
    if pos >= 0:
        k = bisect.bisect_right(chat.starts, pos) - 1
        text, at, message_id, role = chat.texts[k], pos - chat.starts[k], chat.ids[k], chat.roles[k]
    elif in_title:
        text, at, message_id, role = chat.title, title.find(term), "", "title"
    else:
        return None
    start, end = original_span(text, at, len(term))
    return Hit(
        chat.chat_id,
        chat.title,
        chat.updated,
        message_id,
        role,
        snippet(text, start, end),
        in_title,
    )


def rank(hits: list[Hit]) -> list[Hit]:
    """Chats whose title has the term first, then the most recently changed (the list's
    own order)."""
    return sorted(hits, key=lambda h: (not h.in_title, -h.updated, h.chat_id))


def search_steps(
    chats: Iterable[ChatText], term: str, slice_chars: int = SLICE_CHARS
) -> Generator[list[Hit], None, list[Hit]]:
    """``search`` in steps: it yields the hits so far after every ``slice_chars`` scanned
    (between chats), so the page can paint, take the next keystroke and drop this search."""
    folded = fold_term(term)
    hits: list[Hit] = []
    if not folded:
        return hits
    done = 0
    for chat in chats:
        hit = find(chat, folded)
        if hit is not None:
            hits.append(hit)
        done += len(chat.folded)
        if done >= slice_chars:
            done = 0
            yield rank(hits)
    return rank(hits)


def search(chats: Iterable[ChatText], term: str) -> list[Hit]:
    """The chats whose messages contain ``term`` (case-insensitive), best first; none for a
    term shorter than ``MIN_TERM``."""
    return run_steps(search_steps(chats, term))


def count_label(n: int, searching: bool = False) -> str:
    """The live count read out as results change."""
    words = "1 chat" if n == 1 else f"{n} chats"
    return f"{words} so far, searching…" if searching else words
