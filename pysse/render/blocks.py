"""Block structure, settled incrementally: the open containers of a growing answer.

Why it works, and why it is linear:

* **The rule.** CommonMark decides block structure line by line, and reference definitions
  (the one construct that reaches backwards) are disabled. So a block that is followed by
  another block starting on a complete line can no longer change: it is *settled*, rendered
  once, and appended. That holds at every depth: a list item followed by the next item, a
  table row, a quote's paragraph followed by its next block, a code line (final as soon as
  it is complete). Table rows and code lines are settled as soon as they are complete.
* **Containers stay open.** The last block at each depth may still grow; if it is a container
  (list, list item, quote, table body, code fence, and a long paragraph - ``paragraph.py``)
  it is *opened*: its empty element goes into the DOM once and its children are appended
  into it as they settle. The open containers form a stack of :class:`Box` es.
* **Re-parse only the open end.** Each update parses only from the start of the innermost
  open child, with markdown-it's own block parser. The containers around it are recreated by
  *opener lines*: the real first line of each open list item truncated after its marker
  with a stand-in ``#`` (an empty heading: a closed block that keeps the item's content
  column, tabs included), a table's header and delimiter rows, a fence's opening line.
  Quote markers and indentation are on the real lines themselves. The parse therefore sees
  exactly the container context markdown-it would have seen, and costs O(open child), not
  O(answer).
* **What a fresh parse cannot see** is kept here: a list's tightness (a blank line between
  two long-settled items makes the whole list loose), read from markdown-it's own decision
  per item (``observe.py``); whether the previous sibling ended in a hidden (tight)
  paragraph, which changes the line feeds of the next block.
* **Replaced once, never again**: a list that turns loose after some of its items were
  settled tight is replaced once (re-rendered loose); a code fence is replaced once by its
  highlighted form when it closes (it streams unhighlighted, line by line, until then).
* **A safety net**: if a partial parse ever disagrees with the open containers (a case this
  module did not foresee), the top-level block is replaced and re-rendered whole from then
  on, as a plain tail: slower for that block, never wrong.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import MD_TRIM_CHARS, MD_TRIM_RE, escapeHtml, mdTrim, unescapeAll
from markdown_it.rules_block.state_block import StateBlock
from markdown_it.rules_core.state_core import StateCore
from markdown_it.token import Token

from .highlight import SLICE_FROM, SLICE_SECONDS, HighlightJob
from .holdback import hold_back
from .paragraph import (
    MIN_CHUNK,
    MIN_PARAGRAPH,
    PROVISIONAL,
    Paragraph,
    can_cut,
    find_cut,
    render_inline,
    weight,
)
from .update import Op

__all__ = ["BlockSettler"]

KIND = {
    "bullet_list_open": "list",
    "ordered_list_open": "list",
    "list_item_open": "item",
    "blockquote_open": "quote",
    "table_open": "table",
    "fence": "fence",
    "paragraph_open": "para",
}
# Container kinds recreated by an opener line in a later partial parse (a list by a stand-in
# first item: a real item then continues it, as it did, rather than starting a new list).
NEEDS_OPENER = ("list", "item", "quote", "table", "fence", "para")


class Box:
    """One open container: where its children go, how to recreate it, what it rendered."""

    def __init__(self, kind: str, line: int, tok: Token | None = None) -> None:
        self.kind = kind
        self.type = tok.type if tok is not None else ""
        self.markup = tok.markup if tok is not None else ""
        self.line = line  # absolute line where it starts
        self.opener: list[str] = []  # lines that recreate it, for parses starting later
        self.open_tok: Token | None = None  # context for its first child's line feed
        self.before = ""  # its HTML up to its children
        self.after = ""  # its closing HTML
        self.parts: list[str] = []  # settled children's HTML (the string model)
        self.prev: Token | None = None  # last token of its last settled child
        self.next = line  # absolute line where its unsettled content starts
        self.tight = True  # list: markdown-it's tightness on the evidence so far
        self.rendered_tight = True  # list: what its settled children were rendered as
        self.code: list[str] = []  # fence: content settled so far
        self.para: Paragraph | None = None  # para: the inline state
        self.replacement: str | None = None  # para: its exact HTML, when its pieces differ

    def key(self) -> int:
        """The line its opener stands for."""
        return self.para.cut_line if self.para is not None else self.line

    def start(self) -> int:
        """The first real line a partial parse for this (innermost) box must include."""
        return self.para.cut_line + 1 if self.para is not None else self.next

    def matches(self, tok: Token) -> bool:
        if self.kind == "list":
            return tok.type == self.type and tok.markup == self.markup
        if self.kind == "fence":
            return tok.type == "fence" and tok.markup == self.markup
        return KIND.get(tok.type) == self.kind


class Parse:
    """One partial parse: its tokens, the open token -> close token map, and where the real
    lines start (``first``: lines before it are opener lines)."""

    def __init__(self, toks: list[Token], first: int, start: int, src: str) -> None:
        self.toks = toks
        self.first = first
        self.start = start  # absolute line of fresh line ``first``
        self.src = src
        self.unheld = len(src)  # how much of the source hold-back left unchanged
        self.line_starts = [0]
        for line in src.split("\n"):
            self.line_starts.append(self.line_starts[-1] + len(line) + 1)
        self.match = list(range(len(toks)))
        stack: list[int] = []
        for i, t in enumerate(toks):
            if t.nesting == 1:
                stack.append(i)
            elif t.nesting == -1 and stack:
                self.match[stack.pop()] = i

    def abs(self, fresh: int) -> int:
        return self.start + fresh - self.first

    def children(self, node: int) -> list[int]:
        """Direct children of ``node`` (-1: the document). A table's are its body rows."""
        toks, match = self.toks, self.match
        if node < 0:
            lo, hi = 0, len(toks)
        elif toks[node].type == "table_open":
            body = [i for i in self._span(node + 1, match[node]) if toks[i].type == "tbody_open"]
            if not body:
                return []
            lo, hi = body[0] + 1, match[body[0]]
        elif toks[node].nesting != 1 or toks[node].type == "paragraph_open":
            return []
        else:
            lo, hi = node + 1, match[node]
        return self._span(lo, hi)

    def _span(self, lo: int, hi: int) -> list[int]:
        out = []
        i = lo
        while i < hi:
            out.append(i)
            i = self.match[i] + 1
        return out

    def end(self, node: int) -> int:
        return self.match[node] + 1


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


_TODO = re.compile(r"\[[ xX]\][ \t\n\v\f\r]+")  # mdit-py-plugins' tasklists rule


def _task_item(p: Parse, item: int) -> bool:
    """Whether list item ``item`` is a task (``- [ ] ...``), as the tasklists plugin decides."""
    toks = p.toks
    return (
        item + 2 < len(toks)
        and toks[item + 1].type == "paragraph_open"
        and toks[item + 2].type == "inline"
        and _TODO.match(toks[item + 2].content) is not None
    )


def _task_list(p: Parse, x: int) -> bool:
    """Whether list ``x`` is a task list. The tasklists plugin marks an item from its own
    tokens (so a settled item renders right) but the list's class from any of its items: an
    opened list gets the class from us, and a list that turns into a task list after it was
    opened is replaced once. A task item itself is never opened as a container (its checkbox
    comes from its first paragraph, which it would then settle apart): it is re-rendered
    whole until it settles, and task items are short."""
    return any(_task_item(p, c) for c in p.children(x))


class BlockSettler:
    """The open containers of one answer, and the ops that built them (see module doc)."""

    LOOP_LIMIT = 8

    def __init__(self, md: MarkdownIt) -> None:
        self.md = md
        self.env: dict[str, Any] = {}
        self.lines: list[str] = []  # complete lines, without their line feed
        self.boxes: list[Box] = [Box("root", 0)]
        self.ops: list[Op] = []
        self.plain = -1  # a top-level block starting here is never opened (safety net)
        self.plain_para = -1  # a paragraph starting here turned out not to be one: never opened
        self._last = ""  # the text's last line, during the final pass
        self.loose: set[int] = set()  # first lines of lists the partial line made loose
        self.task_lists: set[int] = set()  # first lines of task lists (opened as such)
        self.task_items: set[int] = set()  # first lines of items found to be tasks
        self.parsed_chars = 0
        self.parses = 0
        self.rescues = 0
        self.replaced = 0
        self.job: HighlightJob | None = None  # a closed fence being highlighted in slices
        core: Any = md.core.ruler
        self._core = [r.fn for r in core.__rules__ if r.enabled and r.name not in _BLOCK_CORE]

    # -- public ------------------------------------------------------------------------------

    def take_ops(self) -> list[Op]:
        ops, self.ops = self.ops, []
        return ops

    def html(self, tails: list[str]) -> str:
        """The string model: what the ops and tails build."""
        out: list[str] = []
        for box in self.boxes:
            out.append(box.before)
            out.extend(box.parts)
        for box, tail in zip(
            reversed(self.boxes), reversed(_pad(tails, len(self.boxes))), strict=True
        ):
            out.append(tail)
            out.append(box.after)
        return "".join(out)

    def settle(self, end: int, final: str | None = None) -> None:
        """Settle what the first ``end`` lines decide. ``final``: the text is complete and
        this is its last line (without a line feed; "" if the text ends with one)."""
        for _ in range(self.LOOP_LIMIT):
            if not self._pass(end, final):
                return
        self._rescue()
        self._pass(end, final)

    def tails(self, partial: str) -> list[str]:
        """The unsettled HTML of each open container, with the partial last line held back.
        May settle pieces of a long paragraph (``paragraph.py``) and open one."""
        inner = self.boxes[-1]
        start = inner.start()
        self._stand_in(partial)
        src, first, fresh = self._source(start, len(self.lines), partial)
        # A provisionally cut paragraph takes what is open as staying open, except near the
        # end, where a link or emphasis being typed is still shown as it will look.
        para = inner.para
        floor = len(src) - MIN_CHUNK if para is not None and para.provisional else 0
        shown = hold_back(src, max(0, floor))
        p = self._parse(shown, first, start)
        p.unheld = _common_prefix(src, shown)
        nodes = self._walk(p, fresh)
        for k in range(1, len(nodes)):
            box = self.boxes[k]
            if self._became_task(p, nodes[k], box):
                self._rewind(k)
                self.settle(len(self.lines))
                return self.tails(partial)
            if box.kind == "list" and box.tight and not tight(p, nodes[k]):
                # The partial line makes this list loose (a block after a blank line in an
                # item, or an item after one): that cannot change any more, so re-render the
                # list loose now rather than show tight and loose items side by side.
                self.loose.add(box.line)
                box.tight = False
                if box.rendered_tight and self._rendered_tight_content(k):
                    self._rewind(k)
                    self.settle(len(self.lines))
                    return self.tails(partial)
                box.rendered_tight = False
        self._fix_hidden(p, nodes)
        tails: list[str] = []
        for k, box in enumerate(self.boxes):
            if k >= len(nodes):
                tails.append("")
                continue
            if box.kind == "fence":
                tails.append(self._fence_tail(p, nodes[k], box))
                continue
            if box.kind == "para":
                tails.append(self._para_tail(p, nodes[k], box, fresh[k], partial))
                continue
            nxt = nodes[k + 1] if k + 1 < len(nodes) else None
            kids = [c for c in p.children(nodes[k]) if c != nxt and _line(p, c) >= first]
            last = k == len(self.boxes) - 1 and len(kids) == 1
            if last and self._para_ready(p, kids[0], box, partial):
                self._open_para(p, kids[0], partial)
                tails.append("")
                text = p.toks[kids[0] + 1].content
                tails.append(render_inline(self.md, self.env, text, self._core))
                return tails
            tails.append(self._render_tail(p, box, kids, nxt))
        return tails

    # -- the structure pass --------------------------------------------------------------------

    def _pass(self, end: int, last: str | None) -> bool:
        """One parse from the innermost open child; settle, close and open what it decides.
        True when it rewound a container and must run again."""
        final = last is not None
        self._last = last or ""
        inner = self.boxes[-1]
        start = inner.start()
        if start >= end and not final:
            return False
        if inner.para is not None and self._para_lost_line(end, last or ""):
            self.plain_para = inner.para.first_line
            self._rewind(len(self.boxes) - 1)
            return True
        self._stand_in(last or "")
        src, first, fresh = self._source(start, end, last or None)
        if not src:  # the end, and nothing new: close what is open as it is
            while len(self.boxes) > 1:
                box = self.boxes.pop()
                self.boxes[-1].parts.append(box.before + "".join(box.parts) + box.after)
            return False
        p = self._parse(src, first, start)
        nodes = self._walk(p, fresh)
        if len(nodes) < len(self.boxes):
            para = self.boxes[len(nodes)]
            if para.para is not None and len(nodes) == len(self.boxes) - 1:
                # The paragraph became something else (a setext heading, a table): render
                # it again whole, once, from its first line.
                self.plain_para = para.para.first_line
                self._rewind(len(nodes))
            else:
                self._rescue()
            return True
        # A list's tightness may change long after its first items settled; so may whether
        # it is a task list.
        for k, box in enumerate(self.boxes):
            if self._became_task(p, nodes[k], box):
                self._rewind(k)
                return True
            if box.kind == "list" and box.tight and not tight(p, nodes[k]):
                box.tight = False
                if box.rendered_tight and self._rendered_tight_content(k):
                    self._rewind(k)
                    return True
                box.rendered_tight = False
        self._fix_hidden(p, nodes)
        depth = len(self.boxes) - 1
        # The outermost container that is now closed: a block follows it, or a fence closed.
        closed = depth + 1
        for k in range(1, depth + 1):
            node = nodes[k]
            if (
                final
                or self._followed(p, nodes, k)
                or p.toks[node].meta.get("closed")
                or (self.boxes[k].kind == "para" and _ends_before(p, node))
            ):
                closed = k
                break
        if self._highlighting(p, nodes, closed, final):
            return False  # the fence stays open, its lines in its tail, until highlighted
        after: int | None = None
        for k in range(depth, closed - 1, -1):
            self._drain(p, nodes[k], first, after, True)
            self._close(p, nodes[k])
            after = nodes[k]
        box = self.boxes[-1]
        kids = self._kids(p, nodes[len(self.boxes) - 1], first, after)
        if after is None and box.kind == "para":
            return False  # an open paragraph: its tail is cut in tails()
        if after is None and box.kind in ("table", "fence"):  # rows and code lines: final now
            self._drain(p, nodes[-1], first, None, False)
            if box.kind == "table" and kids:
                box.next = p.abs(_end(p, kids[-1]))
            return False
        if final:
            for c in kids:
                self._settle(p, c)
            box.next = end
            return False
        if not kids:
            if after is not None:
                box.next = p.abs(_end(p, after))
            return False
        for c in kids[:-1]:
            self._settle(p, c)
        self._descend(p, kids[-1])
        return False

    def _descend(self, p: Parse, x: int) -> None:
        """``x`` is the new open child of the innermost box: open it, and what it contains."""
        while True:
            box = self.boxes[-1]
            tok = p.toks[x]
            box.next = p.abs(_line(p, x))
            if not self._opens(p, x, box):
                return
            new = self._open(p, x)
            if new.kind == "fence":
                self._fence_lines(p, x, new)
                return
            kids = p.children(x)
            if new.kind == "table":
                for c in kids:
                    self._settle(p, c)
                new.next = p.abs(_end(p, kids[-1])) if kids else new.line + 2
                return
            if not kids:
                new.next = p.abs(tok.map[0]) if tok.map else new.line
                return
            for c in kids[:-1]:
                self._settle(p, c)
            x = kids[-1]

    def _opens(self, p: Parse, x: int, parent: Box) -> bool:
        tok = p.toks[x]
        kind = KIND.get(tok.type)
        if kind is None or kind == "para":
            return False
        line = p.abs(_line(p, x))
        if parent.kind == "root" and line == self.plain:
            return False
        if "|" in self.lines[line] and line + 1 >= len(self.lines) and kind != "item":
            return False  # a first line with a pipe is a table header if a delimiter row follows
        if kind == "table":
            return bool(p.children(x))
        # a task item is re-rendered whole until it is settled (see _task_list)
        return not (kind == "item" and (line in self.task_items or _task_item(p, x)))

    def _followed(self, p: Parse, nodes: list[int], k: int) -> bool:
        """Whether a block follows container ``k`` inside its parent (so it is complete)."""
        siblings = p.children(nodes[k - 1])
        return siblings[-1] != nodes[k] if siblings else False

    def _kids(self, p: Parse, node: int, first: int, after: int | None) -> list[int]:
        kids = p.children(node)
        if after is not None:
            return kids[kids.index(after) + 1 :] if after in kids else []
        return [c for c in kids if _line(p, c) >= first]

    def _drain(self, p: Parse, node: int, first: int, after: int | None, complete: bool) -> None:
        """Settle everything left in the innermost box (``complete``: it is closed)."""
        box = self.boxes[-1]
        if box.kind == "fence":
            self._fence_lines(p, node, box, drain=complete)
            return
        if box.kind == "para":
            if complete:
                rest = self._para_content(p, node)
                if rest:
                    self._append(render_inline(self.md, self.env, rest, self._core))
                if box.para is not None and box.para.provisional:
                    self._check_provisional(p.abs(_end(p, node)))
            return
        for c in self._kids(p, node, first, after):
            self._settle(p, c)

    # -- opening, settling, closing --------------------------------------------------------------

    def _open(self, p: Parse, x: int) -> Box:
        parent = self.boxes[-1]
        toks = p.toks
        tok = toks[x]
        kind = KIND[tok.type]
        line = p.abs(_line(p, x))
        box = Box(kind, line, tok)
        if kind == "fence":
            empty = copy.copy(tok)
            empty.content = ""
            empty.meta = {"closed": False}
            html = self._html(parent, [empty])
            cut = html.rindex("</code>")
            box.before, box.after = html[:cut], html[cut:]
            box.opener = [self.lines[line]]
            box.next = line + 1
        else:
            if kind == "table":
                body = next(i for i in p._span(x + 1, p.match[x]) if toks[i].type == "tbody_open")
                head_toks, tail_toks, inner = (
                    toks[x : body + 1],
                    toks[p.match[body] : p.end(x)],
                    body,
                )
                box.opener = [self.lines[line], self.lines[line + 1]]
            else:
                head_toks, tail_toks, inner = [tok], [toks[p.match[x]]], x
                if kind in ("item", "quote"):
                    box.opener = [_opener(p, x, self.lines[line])]
                elif kind == "list":
                    box.opener = [_list_opener(p, x + 1, self.lines[line])]
            if kind == "list" and (line in self.task_lists or _task_list(p, x)):
                self.task_lists.add(line)
                head_toks = [copy.copy(tok)]
                head_toks[0].attrs = {**tok.attrs, "class": "contains-task-list"}
            head = self._html(parent, head_toks)
            box.before = head[:-1] if head.endswith("\n") else head
            box.after = self.md.renderer.render(tail_toks, self.md.options, self.env)
            box.open_tok = toks[inner]
            if kind == "list":
                box.tight = box.rendered_tight = tight(p, x) and line not in self.loose
                _set_hidden(p, x, box.tight)
        self.ops.append(Op(len(self.boxes) - 1, box.before + box.after, opens=True))
        self.boxes.append(box)
        return box

    def _settle(self, p: Parse, node: int) -> None:
        """Render child ``node`` once and append it to the innermost box."""
        box = self.boxes[-1]
        toks = p.toks[node : p.end(node)]
        html = self._html(box, toks)
        box.parts.append(html)
        box.prev = toks[-1]
        self.ops.append(Op(len(self.boxes) - 1, html))

    def _close(self, p: Parse, node: int) -> None:
        box = self.boxes.pop()
        parent = self.boxes[-1]
        if box.kind == "fence" and p.toks[node].meta.get("closed"):
            # Highlighted once, now that it is complete: replace the streamed lines.
            tok = copy.copy(p.toks[node])
            tok.content = "".join(box.code)
            tok.meta = {"closed": True}
            html = self._html(parent, [tok])
            self.ops.append(Op(len(self.boxes) - 1, html, replaces=True))
            self.replaced += 1
            parent.parts.append(html)
            parent.prev = tok
            return
        if box.replacement is not None:
            self.ops.append(Op(len(self.boxes) - 1, box.replacement, replaces=True))
            self.replaced += 1
            parent.parts.append(box.replacement)
        else:
            parent.parts.append(box.before + "".join(box.parts) + box.after)
        parent.prev = p.toks[p.match[node]] if p.toks[node].nesting == 1 else p.toks[node]

    def _became_task(self, p: Parse, node: int, box: Box) -> bool:
        """Whether open list ``box`` turned into a task list, or open item ``box`` into a
        task (``- [x]`` and then its text on the next line), since it was opened: then it is
        recorded, for the caller to rewind it and open it right (see ``_task_list``)."""
        if box.kind == "list" and box.line not in self.task_lists and _task_list(p, node):
            self.task_lists.add(box.line)
            return True
        if box.kind == "item" and _task_item(p, node):  # (a task item is never opened)
            self.task_items.add(box.line)
            return True
        return False

    def _rewind(self, k: int) -> None:
        """Throw container ``k`` (and what it contains) away; it is parsed again from its first
        line, as the open child of its parent. Its element is removed from the page."""
        line = self.boxes[k].line
        del self.boxes[k:]
        self.boxes[-1].next = line
        self.ops.append(Op(k - 1, "", replaces=True))
        self.replaced += 1

    def _rescue(self) -> None:
        """The safety net (module docstring): re-render the top-level block as a plain tail."""
        self.rescues += 1
        if len(self.boxes) > 1:
            self.plain = self.boxes[1].line
            self._rewind(1)

    def _rendered_tight_content(self, k: int) -> bool:
        """Whether anything settled in list ``k`` was rendered assuming it is tight."""
        return bool(self.boxes[k].parts) or (
            k + 1 < len(self.boxes) and bool(self.boxes[k + 1].parts)
        )

    # -- code fences ---------------------------------------------------------------------------

    def _highlighting(self, p: Parse, nodes: list[int], closed: int, final: bool) -> bool:
        """Whether a long code fence that closes now is still being highlighted. Its
        highlighting (``highlight.HighlightJob``) is spread over updates, ``SLICE_SECONDS``
        each, so that no frame runs pygments on a whole long fence; meanwhile the fence stays
        open. The finished job is remembered, so ``_close`` renders it at once. At the end
        of the text it is finished synchronously (the final state must not wait)."""
        for k in range(closed, len(self.boxes)):
            box = self.boxes[k]
            tok = p.toks[nodes[k]]
            if box.kind != "fence" or not tok.meta.get("closed"):
                continue
            code = "".join(box.code) + tok.content
            if len(code) < SLICE_FROM:
                continue
            key = (code, fence_lang(tok))
            if self.job is None or self.job.key != key:
                self.job = HighlightJob(*key)
            if not self.job.step(None if final else SLICE_SECONDS):
                return True
            self.job = None
        return False

    def _fence_lines(self, p: Parse, node: int, box: Box, drain: bool = False) -> None:
        """A fence's complete lines are final: append them as escaped text. Blank lines at
        its end wait for the next line: if the fence ends there (its container ends), they
        may make a list loose, which a later partial parse could no longer see."""
        content = p.toks[node].content
        lines = _split_lines(content)
        if not drain:
            while lines and not lines[-1].strip():
                lines.pop()
            content = "".join(lines)
        if content:
            box.code.append(content)
            html = escapeHtml(content)
            box.parts.append(html)
            self.ops.append(Op(len(self.boxes) - 1, html))
        box.next = box.start() + len(lines)

    def _fence_tail(self, p: Parse, node: int, box: Box) -> str:
        content = p.toks[node].content
        if content.lstrip(" ").startswith(box.markup[0]):
            return ""  # may be the closing fence
        return escapeHtml(content)

    # -- paragraphs (paragraph.py does the inline work) ----------------------------------------

    def _para_ready(self, p: Parse, x: int, parent: Box, partial: str) -> bool:
        """Open the paragraph ``x`` (the innermost open child) once it is long, and if its
        text starts on its first line."""
        tok = p.toks[x]
        if not (
            tok.type == "paragraph_open"
            and not tok.hidden
            and parent.kind in ("root", "item", "quote")
            and "content_pos" in tok.meta
            and weight(p.toks[x + 1].content) >= MIN_PARAGRAPH
            and p.abs(_line(p, x)) != self.plain_para
            and can_cut(self.md)
        ):
            return False
        _, raw, col = self._para_start(p, x, partial)
        return col < len(raw)

    def _para_start(self, p: Parse, x: int, partial: str) -> tuple[int, str, int]:
        """The paragraph's first line (absolute), that line, and where its text starts in
        it: markdown-it trims the content (mdTrim: also U+2028, NBSP...), so the stand-in
        must start there, or that leading space would be kept (a first line of only such
        characters is not a place to start: the paragraph is not opened)."""
        line = p.abs(_line(p, x))
        raw = self.lines[line] if line < len(self.lines) else partial
        col = int(p.toks[x].meta["content_pos"]) - p.line_starts[_line(p, x)]
        return line, raw, len(raw) - len(raw[col:].lstrip(MD_TRIM_CHARS))

    def _open_para(self, p: Parse, x: int, partial: str) -> None:
        parent = self.boxes[-1]
        tok = p.toks[x]
        line, raw, col = self._para_start(p, x, partial)
        box = Box("para", line, tok)
        box.para = Paragraph(line, raw[:col])
        head = self._html(parent, [tok])
        box.before = head[:-1] if head.endswith("\n") else head
        box.after = self.md.renderer.render([p.toks[x + 2]], self.md.options, self.env)
        self.ops.append(Op(len(self.boxes) - 1, box.before + box.after, opens=True))
        self.boxes.append(box)

    def _para_content(self, p: Parse, node: int) -> str:
        """The unsettled content of the open paragraph at ``node`` (after its stand-in)."""
        if p.toks[node].type != "paragraph_open":
            return ""
        content = p.toks[node + 1].content
        return content[2:] if content.startswith("x ") else ""

    def _para_tail(self, p: Parse, node: int, box: Box, fresh_line: int, partial: str) -> str:
        """The open paragraph's unsettled content as HTML, after settling the part of it that
        can be cut off (``paragraph.find_cut``) and that hold-back did not touch."""
        para = box.para
        assert para is not None
        text = self._para_content(p, node)
        if len(text) >= 2 * MIN_CHUNK:
            limit = self._para_unheld(p, fresh_line, para, text)
            cut = find_cut(self.md, self.env, text, limit, para.provisional)
            if not cut and not para.provisional and weight(text) >= PROVISIONAL:
                para.provisional = True
                cut = find_cut(self.md, self.env, text, limit, True)
            raw = [*self.lines[para.cut_line :], partial]
            if cut and para.advance(text, cut, raw, len(self.lines) - para.cut_line):
                self._append(render_inline(self.md, self.env, text[:cut], self._core))
                text = text[cut:]
        return render_inline(self.md, self.env, text, self._core) if text else ""

    def _para_unheld(self, p: Parse, fresh_line: int, para: Paragraph, text: str) -> int:
        """How much of the paragraph's unsettled content hold-back left as it is."""
        starts = p.line_starts
        at = starts[fresh_line] + len(para.stand_in(""))  # content position 0
        lines = text.split("\n")
        if p.unheld < starts[fresh_line + 1] - 1:
            return max(0, p.unheld - at)
        limit = len(lines[0]) + 1
        for j, line in enumerate(lines[1:], 1):
            at_line = fresh_line + j
            if at_line + 1 >= len(starts):
                break
            end = starts[at_line + 1] - 1
            if p.unheld < end:
                # Hold-back changed this line from ``unheld`` on (a marker it closed for
                # display): what comes before that is as it came. The content line is the
                # source line less its container prefix (and, the last line, trimmed).
                shown = p.src[starts[at_line] : end]
                if j == len(lines) - 1:
                    shown = shown.rstrip(MD_TRIM_CHARS)
                prefix = len(shown) - len(line)
                limit += max(0, p.unheld - starts[at_line] - prefix)
                break
            limit += len(line) + 1
        return min(limit, len(text))

    def _check_provisional(self, end: int) -> None:
        """A provisionally cut paragraph has ended (at line ``end``): render it whole, once,
        and have ``_close`` replace it if that differs from its pieces."""
        box = self.boxes.pop()
        para = box.para
        assert para is not None
        try:
            src, first, fresh = self._source(para.first_line, min(end, len(self.lines)), None)
            if end > len(self.lines):  # it ends with the text's last (partial) line
                src += self._last
            p = self._parse(src, first, para.first_line)
            nodes = self._walk(p, fresh)
            self._fix_hidden(p, nodes)
            kids = p.children(nodes[-1]) if len(nodes) == len(self.boxes) else []
            para_node = next((c for c in kids if _line(p, c) == first), None)
            if para_node is None or p.toks[para_node].type != "paragraph_open":
                return
            html = self._html(self.boxes[-1], p.toks[para_node : p.end(para_node)])
            if html != box.before + "".join(box.parts) + box.after:
                box.replacement = html
        finally:
            self.boxes.append(box)

    def _para_lost_line(self, end: int, last: str) -> bool:
        """Whether the open paragraph's cut line became a table header: the line after it is
        a delimiter row. The stand-in cut line cannot tell (its columns differ), so parse the
        real cut line and the next one, as the paragraph's continuation."""
        box = self.boxes[-1]
        para = box.para
        assert para is not None
        cut = para.cut_line
        nxt = self.lines[cut + 1] if cut + 1 < end else (last if cut + 1 == end else "")
        if not (nxt and cut < len(self.lines) and "|" in self.lines[cut] and _DELIM.fullmatch(nxt)):
            return False
        self.boxes.pop()
        try:
            lines = [para.cont + "x"] if cut > para.first_line else []
            src, first, fresh = self._source(cut, cut, None)
            src += "\n".join([*lines, self.lines[cut], nxt]) + "\n"
            p = self._parse(src, first, cut)
            nodes = self._walk(p, fresh)
            kids = p.children(nodes[-1]) if len(nodes) == len(self.boxes) else []
            return [p.toks[c].type for c in kids if _line(p, c) >= first] != ["paragraph_open"]
        finally:
            self.boxes.append(box)

    def _stand_in(self, partial: str) -> None:
        """An open paragraph's opener: the line of its cut, settled part replaced."""
        box = self.boxes[-1]
        if box.para is not None:
            cut = box.para.cut_line
            box.opener = [box.para.stand_in(self.lines[cut] if cut < len(self.lines) else partial)]

    def _append(self, html: str) -> None:
        box = self.boxes[-1]
        box.parts.append(html)
        self.ops.append(Op(len(self.boxes) - 1, html))

    # -- parsing -------------------------------------------------------------------------------

    def _source(self, start: int, end: int, partial: str | None) -> tuple[str, int, list[int]]:
        """Opener lines for the open containers, then the real lines ``start:end`` (and the
        partial line): the source of one partial parse; also where each box opens in it."""
        keyed: dict[int, int] = {}  # line -> the deepest box whose opener stands for it
        for k, box in enumerate(self.boxes):
            if box.kind in NEEDS_OPENER and box.key() < start:
                keyed[box.key()] = k
        lines: list[str] = []
        at: dict[int, int] = {}
        for key in sorted(keyed):
            at[key] = len(lines)
            lines.extend(self.boxes[keyed[key]].opener)
        first = len(lines)
        fresh = [0] * len(self.boxes)
        nxt = first
        for k in range(len(self.boxes) - 1, 0, -1):
            box = self.boxes[k]
            key = box.key()
            if key < start and keyed.get(key, -1) >= k:  # recreated by that opener line
                fresh[k] = at[key]
            elif box.line >= start:
                fresh[k] = first + box.line - start
            else:  # recreated by the line that recreates its open child
                fresh[k] = nxt
            nxt = fresh[k]
        lines.extend(self.lines[start:end])
        if partial is None:
            src = "\n".join(lines) + "\n" if lines else ""
        elif start > len(self.lines):  # an open paragraph's stand-in is the partial line
            src = "\n".join(lines)
        else:
            lines.append(partial)
            src = "\n".join(lines)
        return src, first, fresh

    def _parse(self, src: str, first: int, start: int) -> Parse:
        if "\0" in src:
            src = src.replace("\0", "\ufffd")  # as markdown-it's normalize rule
        self.parses += 1
        self.parsed_chars += len(src)
        state = StateBlock(src, self.md, self.env, [])
        self.md.block.tokenize(state, state.line, state.lineMax)
        return Parse(state.tokens, first, start, src)

    def _walk(self, p: Parse, fresh: list[int]) -> list[int]:
        """The token of each open box in this parse (``nodes[0] = -1``: the document). Stops
        at the first box it cannot find (the caller decides whether that is an error)."""
        nodes = [-1]
        for k in range(1, len(self.boxes)):
            box = self.boxes[k]
            found = next(
                (
                    c
                    for c in p.children(nodes[-1])
                    if _line(p, c) == fresh[k] and box.matches(p.toks[c])
                ),
                None,
            )
            if found is None:
                break
            nodes.append(found)
        return nodes

    def _fix_hidden(self, p: Parse, nodes: list[int]) -> None:
        """Paragraphs directly in the items of an open list are hidden when the *whole* list
        is tight, which a partial parse cannot know: apply the list's real tightness."""
        for k in range(1, len(nodes)):
            box = self.boxes[k]
            if box.kind == "list":
                _set_hidden(p, nodes[k], box.tight and tight(p, nodes[k]))

    # -- rendering -----------------------------------------------------------------------------

    def _inline(self, toks: list[Token]) -> None:
        state = StateCore("", self.md, self.env)
        state.tokens = toks
        for rule in self._core:
            rule(state)
        # The tasklists plugin marks an item's list (its parent token); in a slice that starts
        # at the item there is none, and it marks the slice's last token instead, which the
        # renderer would print as ``</li class=...>``. A closing tag has no attributes.
        for tok in toks:
            if tok.nesting == -1 and tok.attrs:
                tok.attrs = {}

    def _html(self, box: Box, toks: list[Token], after: Token | None = None) -> str:
        """Render ``toks`` as the next child of ``box`` (``after`` its previous sibling's last
        token, if not ``box.prev``): with the line feed the renderer would put before it
        there (after a hidden tight paragraph, or as a container's first child)."""
        self._inline(toks)
        r = self.md.renderer
        opts = self.md.options
        prev = after or box.prev
        if prev is not None:
            if not prev.hidden:
                return str(r.render(toks, opts, self.env))
            return str(r.render([prev, *toks], opts, self.env))
        if box.open_tok is None:
            return str(r.render(toks, opts, self.env))
        head = r.render([box.open_tok], opts, self.env)
        return str(r.render([box.open_tok, *toks], opts, self.env))[len(head) - 1 :]

    def _render_tail(self, p: Parse, box: Box, kids: list[int], after: int | None) -> str:
        if not kids:
            return ""
        prev = p.toks[p.end(after) - 1] if after is not None else None
        return self._html(box, p.toks[kids[0] : p.end(kids[-1])], prev)


_BLOCK_CORE = ("normalize", "block")
_DELIM = re.compile(r"[\s>]*[|:-][\s|:>-]*")  # could be a table's delimiter row


def _split_lines(text: str) -> list[str]:
    """Lines with their line feeds, split at LF only: ``str.splitlines`` would also split at
    U+2028, VT, FF ... which markdown does not, and then miscount the fence's lines."""
    parts = text.split("\n")
    out = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def fence_lang(tok: Token) -> str:
    """The language word markdown-it's fence renderer passes to the highlighter."""
    info = mdTrim(unescapeAll(tok.info)) if tok.info else ""
    return MD_TRIM_RE.split(info, maxsplit=1)[0] if info else ""


def _ends_before(p: Parse, node: int) -> bool:
    """Whether the parse has a complete line after block ``node``: after a paragraph that is
    a blank line (anything else would be in it or a block after it), which ends it for good,
    though no block follows yet (the next one's first line is still arriving)."""
    tok = p.toks[node]
    complete_lines = len(p.line_starts) - 2  # the source's line feeds
    return tok.map is not None and tok.map[1] < complete_lines


def _set_hidden(p: Parse, node: int, hidden: bool) -> None:
    """What markdown-it's list rule does for a tight list (``markTightParagraphs``), or
    undoes for a loose one: the paragraphs directly in its items render without ``<p>``."""
    level = p.toks[node].level + 2
    for t in p.toks[node : p.end(node)]:
        if t.level == level and t.type in ("paragraph_open", "paragraph_close"):
            t.hidden = hidden


def _common_prefix(a: str, b: str) -> int:
    if a == b:
        return len(a)
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:  # binary search on equal prefixes: C-speed comparisons
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _line(p: Parse, node: int) -> int:
    m = p.toks[node].map
    return m[0] if m else -1


def _end(p: Parse, node: int) -> int:
    m = p.toks[node].map
    return m[1] if m else len(p.line_starts) - 1


def _pad(tails: list[str], n: int) -> list[str]:
    return (tails + [""] * n)[:n]


def _opener(p: Parse, x: int, line: str) -> str:
    """A list item's or quote's first line cut after its marker, with a stand-in empty
    heading (a closed block) as its first child, in the same content column: after a list
    marker the real spaces (tabs included) are kept, unless they made the content an
    indented code block or there is no content, where markdown-it's column is marker + 1."""
    tok = p.toks[x]
    if "content_pos" in tok.meta:
        pos = min(max(0, int(tok.meta["content_pos"]) - _line_start(p, tok)), len(line))
    else:  # an empty item: markdown-it did not even look for its content
        pos = len(line)
    head = line[:pos].rstrip(" \t")
    if tok.type == "blockquote_open":
        return head[: head.rindex(">") + 1] + " #" if ">" in head else "> #"
    kids = p.children(x)
    code_first = (
        bool(kids) and p.toks[kids[0]].type == "code_block" and _line(p, kids[0]) == _line(p, x)
    )
    if pos >= len(line.rstrip()) or code_first:
        return head + " #"
    return line[:pos] + "#"


def _list_opener(p: Parse, item: int, line: str) -> str:
    """A list's first line cut after the marker of its first item, with a stand-in heading at
    the widest content column (marker + 4): any real item after it, at most 3 columns in,
    starts a new item of the same list, as it did in the whole text (it cannot become the
    stand-in's content, nor start a list of its own - which could then be a table header)."""
    tok = p.toks[item]
    pos = len(line)
    if "content_pos" in tok.meta:
        pos = min(max(0, int(tok.meta["content_pos"]) - _line_start(p, tok)), len(line))
    return line[:pos].rstrip(" \t") + "    #"


def _line_start(p: Parse, tok: Token) -> int:
    return p.line_starts[tok.map[0]] if tok.map else 0
