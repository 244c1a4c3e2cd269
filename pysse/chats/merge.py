"""One chat written by several tabs: a write is a merge, never an overwrite.

Each tab holds its own copy of a conversation. Before it writes, it reads the stored copy and
``absorb``s it: every change this tab made since its last write (``chats.changes``) is kept;
everything else comes from the stored copy, which another tab may have written meanwhile
(new questions and answers, an answer that finished there, a version chosen there, a new
name, a model picked there). Messages are never removed by a merge: a stale tab adds its
messages and removes nothing. Message ids carry their tab's tag, so two tabs never make
the same one.

Pure: the chat store (``app.storage``) runs it under a Web Lock, between its read and its
write, so two tabs' writes never interleave.
"""

from __future__ import annotations

import itertools

from .conversation import Conversation
from .message import Message
from .message_read import message_number

__all__ = ["absorb"]


def absorb(mine: Conversation, theirs: Conversation) -> bool:
    """Take into ``mine`` what ``theirs`` (the stored copy) has that this tab did not change
    itself since its last write. Returns whether anything in ``mine`` changed."""
    changed = False
    kept = mine.changes
    for mid, msg in theirs.messages.items():
        if mid in kept.messages:
            continue  # this tab changed it last: its copy is the newer
        have = mine.messages.get(mid)
        if have is None or _differs(have, msg):
            mine.messages[mid] = msg
            changed = True
    if changed:
        _order(mine)
    for parent, child in theirs.selected.items():
        if parent in kept.selected or mine.selected.get(parent) == child:
            continue
        if child in mine.children.get(parent, []):
            mine.selected[parent] = child
            changed = True
    if not kept.title and (mine.title, mine.renamed) != (theirs.title, theirs.renamed):
        mine.title, mine.renamed = theirs.title, theirs.renamed
        changed = True
    if not kept.choice and theirs.choice is not None and mine.choice != theirs.choice:
        mine.choice = theirs.choice  # (chosen in another tab since: the later choice)
        changed = True
    mine.updated = max(mine.updated, theirs.updated)
    top = max((message_number(m) for m in mine.messages), default=0)
    mine._ids = itertools.count(top + 1)
    return changed


def _differs(a: Message, b: Message) -> bool:
    return a.to_json() != b.to_json() or a.was_streaming != b.was_streaming


def _order(conv: Conversation) -> None:
    """Siblings in the order they were made (versions ‹1/2› in time, whichever tab made
    them), and the messages parents first in that order (how ``to_json`` lists them and
    ``from_json`` needs them)."""
    kids: dict[str | None, list[str]] = {None: []}
    for mid in conv.messages:
        kids[mid] = []
    for mid, msg in conv.messages.items():
        kids.setdefault(msg.parent, []).append(mid)
    for siblings in kids.values():
        siblings.sort(key=lambda m: conv.messages[m].created)
    ordered: dict[str, Message] = {}
    stack = list(reversed(kids[None]))
    while stack:
        mid = stack.pop()
        ordered[mid] = conv.messages[mid]
        stack.extend(reversed(kids.get(mid, [])))
    conv.messages = ordered
    conv.children = kids
