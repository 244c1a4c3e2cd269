"""Lists: tightness, task lists, and the one replacement of a list that turns out different.

What a fresh partial parse cannot see about a list, because it depends on items settled long
ago, is kept here: its tightness (a blank line between two long-settled items makes the
whole list loose; read from markdown-it's own decision per item, ``observe.py``), and
whether it is a task list (the tasklists plugin gives the list its class from any item). A
list found loose or a task list after some of its items were settled otherwise is thrown
away and parsed again from its first line, once (``stale``).
"""

from __future__ import annotations

import re

from .boxes import Box, Parse
from .state import Settler

__all__ = ["fix_hidden", "set_hidden", "stale", "task_item", "task_list", "tight"]


def tight(p: Parse, node: int) -> bool:
    """markdown-it's tightness for the list at ``node`` (its list rule, replayed from the
    per-item facts ``observe.py`` recorded)."""
    items = p.children(node)
    for n, i in enumerate(items):
        meta = p.toks[i].meta
        if "tight" in meta:
            if not meta["tight"]:
                return False
            empty_end = bool(meta["empty_end"])
        else:  # an empty item: markdown-it skipped its content (and a blank line after it)
            m = p.toks[i].map or [0, 0]
            empty_end = m[1] - m[0] > 1
        if empty_end and n < len(items) - 1:
            return False
    return True


def set_hidden(p: Parse, node: int, hidden: bool) -> None:
    """What markdown-it's list rule does for a tight list (``markTightParagraphs``), or
    undoes for a loose one: the paragraphs directly in its items render without ``<p>``."""
    level = p.toks[node].level + 2
    for t in p.toks[node : p.end(node)]:
        if t.level == level and t.type in ("paragraph_open", "paragraph_close"):
            t.hidden = hidden


def fix_hidden(s: Settler, p: Parse, nodes: list[int]) -> None:
    """Paragraphs directly in the items of an open list are hidden when the *whole* list
    is tight, which a partial parse cannot know: apply the list's real tightness."""
    for k in range(1, len(nodes)):
        box = s.boxes[k]
        if box.kind == "list":
            set_hidden(p, nodes[k], box.tight and tight(p, nodes[k]))


_TODO = re.compile(r"\[[ xX]\][ \t\n\v\f\r]+")  # mdit-py-plugins' tasklists rule


def task_item(p: Parse, item: int) -> bool:
    """Whether list item ``item`` is a task (``- [ ] ...``), as the tasklists plugin decides."""
    toks = p.toks
    return (
        item + 2 < len(toks)
        and toks[item + 1].type == "paragraph_open"
        and toks[item + 2].type == "inline"
        and _TODO.match(toks[item + 2].content) is not None
    )


def task_list(p: Parse, x: int) -> bool:
    """Whether list ``x`` is a task list. The tasklists plugin marks an item from its own
    tokens (so a settled item renders right) but the list's class from any of its items: an
    opened list gets the class from us, and a list that turns into a task list after it was
    opened is replaced once. A task item itself is never opened as a container (its checkbox
    comes from its first paragraph, which it would then settle apart): it is re-rendered
    whole until it settles, and task items are short."""
    return any(task_item(p, c) for c in p.children(x))


def _became_task(s: Settler, p: Parse, node: int, box: Box) -> bool:
    """Whether open list ``box`` turned into a task list, or open item ``box`` into a
    task (``- [x]`` and then its text on the next line), since it was opened: then it is
    recorded, for the caller to rewind it and open it right (see ``task_list``)."""
    if box.kind == "list" and box.line not in s.task_lists and task_list(p, node):
        s.task_lists.add(box.line)
        return True
    if box.kind == "item" and task_item(p, node):  # (a task item is never opened)
        s.task_items.add(box.line)
        return True
    return False


def _rendered_tight_content(s: Settler, k: int) -> bool:
    """Whether anything settled in list ``k`` was rendered assuming it is tight."""
    return bool(s.boxes[k].parts) or (k + 1 < len(s.boxes) and bool(s.boxes[k + 1].parts))


def stale(s: Settler, p: Parse, nodes: list[int]) -> int | None:
    """The outermost open box this parse shows was rendered wrong (a list that became a task
    list or loose, an item that became a task), for the caller to rewind; or None. What is
    found is recorded: a list found loose stays loose (a later parse, of fewer lines after a
    rewind, may not see why), and one of which nothing was rendered tight continues loose."""
    for k in range(1, len(nodes)):
        box = s.boxes[k]
        if _became_task(s, p, nodes[k], box):
            return k
        if box.kind == "list" and box.tight and not tight(p, nodes[k]):
            # A block after a blank line in an item, or an item after one, makes the list
            # loose; that cannot change any more, so re-render the list loose now rather
            # than show tight and loose items side by side.
            s.loose.add(box.line)
            box.tight = False
            if box.rendered_tight and _rendered_tight_content(s, k):
                return k
            box.rendered_tight = False
    return None
