"""The structure pass: one partial parse from the innermost open child, and what it decides:
which open containers are now closed (a block follows them, a fence closed), which children
are settled (rendered once, appended), and which new last child is opened as a container.
"""

from __future__ import annotations

import copy

from ..budget import Budget
from ..update import Op
from .boxes import KIND, Box, Parse, list_opener, opener
from .fences import fence_lines, highlighting
from .lists import fix_hidden, set_hidden, stale, task_item, task_list, tight
from .paragraphs import (
    check_provisional,
    checking,
    ends_before,
    para_content,
    para_lost_line,
    stand_in,
)
from .state import Settler
from .waits import hold

__all__ = ["settle", "settle_child"]


def settle(s: Settler, end: int, final: str | None = None, budget: Budget | None = None) -> bool:
    """Settle what the first ``end`` lines decide. ``final``: the text is complete and
    this is its last line (without a line feed; "" if the text ends with one).

    With a ``budget``, a job (highlighting a fence, rendering a paragraph whole) gets what is
    left of it. The lines themselves are always parsed to ``end``: how much new text an
    update takes is what the budget bounds (``StreamingMarkdown._take_new``). Parsing a
    budget's worth of lines per pass instead (a frontier inside the pending lines) made a
    pass end where a list's tightness was not decided yet, and a streamed answer could
    differ from its one-shot render (a tight list shown loose: found by the markdown
    fuzzer, ``tests/fixtures/fuzz_frontier_tight_list.md``). True when it got to ``end``
    (``final``: with everything closed); False when the budget ran out first: call again,
    with the next update's budget.
    """
    rewinds = 0
    job_pass = False
    while True:
        if s.reached >= end and final is None:
            if job_pass or (s.job is None and not s.wait_over()):
                return True
            job_pass = True  # no new lines, but a job to go on with (or a resource came)
        stop, last = end, final  # every pending line at once (see the docstring)
        if not _pass(s, stop, last, budget):
            rewinds = 0
            s.reached = max(s.reached, stop)
            if last is not None:
                return len(s.boxes) == 1 and not s.holding
            continue
        rewinds += 1  # a container was thrown away: parse again from its first line
        if rewinds > s.LOOP_LIMIT:  # the safety net's pass rewound too
            if budget is not None and budget.limited:
                return False  # the next update goes on
            # Without a budget (``finish()``) there is no next update: stop here, as before
            # the budget, so that finishing always ends.
            s.reached = max(s.reached, stop)
            return True
        if rewinds == s.LOOP_LIMIT:
            s.rescue()


def _pass(s: Settler, end: int, last: str | None, budget: Budget | None) -> bool:
    """One parse from the innermost open child; settle, close and open what it decides.
    True when it rewound a container and must run again."""
    final = last is not None
    s.last = last or ""
    s.end = end
    s.holding = False
    inner = s.boxes[-1]
    start = inner.start()
    if start >= end and not final:
        return False
    if inner.para is not None and para_lost_line(s, end, last or ""):
        s.plain_para = inner.para.first_line
        s.rewind(len(s.boxes) - 1)
        return True
    stand_in(s, last or "")
    src, first, fresh = s.source(start, end, last or None)
    if not src:  # the end, and nothing new: close what is open as it is
        while len(s.boxes) > 1:
            box = s.boxes.pop()
            s.boxes[-1].parts.append(box.before + "".join(box.parts) + box.after)
        return False
    key = (src, first, start)
    held, s.held = s.held, None
    p = held[1] if held is not None and held[0] == key else s.parse(src, first, start)
    nodes = s.walk(p, fresh)
    if len(nodes) < len(s.boxes):
        para = s.boxes[len(nodes)]
        if para.para is not None and len(nodes) == len(s.boxes) - 1:
            # The paragraph became something else (a setext heading, a table): render
            # it again whole, once, from its first line.
            s.plain_para = para.para.first_line
            s.rewind(len(nodes))
        else:
            s.rescue()
        return True
    # A list's tightness may change long after its first items settled; so may whether
    # it is a task list.
    k = stale(s, p, nodes)
    if k is not None:
        s.rewind(k)
        return True
    fix_hidden(s, p, nodes)
    depth = len(s.boxes) - 1
    # The outermost container that is now closed: a block follows it, or a fence closed.
    closed = depth + 1
    for k in range(1, depth + 1):
        node = nodes[k]
        if (
            final
            or _followed(p, nodes, k)
            or p.toks[node].meta.get("closed")
            or (s.boxes[k].kind == "para" and ends_before(p, node))
        ):
            closed = k
            break
    if (
        hold(s, p.toks)
        or highlighting(s, p, nodes, closed, budget)
        or checking(s, p, nodes, closed, budget)
    ):
        # A resource it needs is pending (waits.py); the fence (paragraph) stays open, in
        # its tail, until it is done. Nothing of this parse was rendered: the next pass, over
        # the same lines, may take it as it is.
        s.held = (key, p)
        return False
    after: int | None = None
    for k in range(depth, closed - 1, -1):
        _drain(s, p, nodes[k], first, after, True)
        _close(s, p, nodes[k])
        after = nodes[k]
    box = s.boxes[-1]
    kids = _kids(p, nodes[len(s.boxes) - 1], first, after)
    if after is None and box.kind == "para":
        s.held = (key, p)  # nothing of it rendered either (a job's pass without its end)
        return False  # an open paragraph: its tail is cut in tails()
    if after is None and box.kind in ("table", "fence"):  # rows and code lines: final now
        _drain(s, p, nodes[-1], first, None, False)
        if box.kind == "table" and kids:
            box.next = p.abs(p.end_line(kids[-1]))
        return False
    if final:
        for c in kids:
            settle_child(s, p, c)
        box.next = end
        return False
    if not kids:
        if after is not None:
            box.next = p.abs(p.end_line(after))
        return False
    for c in kids[:-1]:
        settle_child(s, p, c)
    _descend(s, p, kids[-1])
    return False


def _descend(s: Settler, p: Parse, x: int) -> None:
    """``x`` is the new open child of the innermost box: open it, and what it contains."""
    while True:
        box = s.boxes[-1]
        tok = p.toks[x]
        box.next = p.abs(p.line(x))
        if not _opens(s, p, x, box):
            return
        new = _open(s, p, x)
        if new.kind == "fence":
            fence_lines(s, p, x, new)
            return
        kids = p.children(x)
        if new.kind == "table":
            for c in kids:
                settle_child(s, p, c)
            new.next = p.abs(p.end_line(kids[-1])) if kids else new.line + 2
            return
        if not kids:
            new.next = p.abs(tok.map[0]) if tok.map else new.line
            return
        for c in kids[:-1]:
            settle_child(s, p, c)
        x = kids[-1]


def _opens(s: Settler, p: Parse, x: int, parent: Box) -> bool:
    tok = p.toks[x]
    kind = KIND.get(tok.type)
    if kind is None or kind == "para":
        return False
    line = p.abs(p.line(x))
    if parent.kind == "root" and line == s.plain:
        return False
    if "|" in s.lines[line] and line + 1 >= s.end and kind != "item":
        return False  # a first line with a pipe is a table header if a delimiter row follows
    if kind == "table":
        return bool(p.children(x))
    # a task item is re-rendered whole until it is settled (see lists.task_list)
    return not (kind == "item" and (line in s.task_items or task_item(p, x)))


def _followed(p: Parse, nodes: list[int], k: int) -> bool:
    """Whether a block follows container ``k`` inside its parent (so it is complete)."""
    siblings = p.children(nodes[k - 1])
    return siblings[-1] != nodes[k] if siblings else False


def _kids(p: Parse, node: int, first: int, after: int | None) -> list[int]:
    kids = p.children(node)
    if after is not None:
        return kids[kids.index(after) + 1 :] if after in kids else []
    return [c for c in kids if p.line(c) >= first]


def _drain(s: Settler, p: Parse, node: int, first: int, after: int | None, complete: bool) -> None:
    """Settle everything left in the innermost box (``complete``: it is closed)."""
    box = s.boxes[-1]
    if box.kind == "fence":
        fence_lines(s, p, node, box, drain=complete)
        return
    if box.kind == "para":
        if complete:
            rest = para_content(p, node)
            if rest:
                s.append(s.inline_html(rest))
            if box.para is not None and box.para.provisional:
                check_provisional(s, p.abs(p.end_line(node)))
        return
    for c in _kids(p, node, first, after):
        settle_child(s, p, c)


# -- opening, settling, closing ------------------------------------------------------------------


def _open(s: Settler, p: Parse, x: int) -> Box:
    parent = s.boxes[-1]
    toks = p.toks
    tok = toks[x]
    kind = KIND[tok.type]
    line = p.abs(p.line(x))
    box = Box(kind, line, tok)
    if kind == "fence":
        empty = copy.copy(tok)
        empty.content = ""
        empty.meta = {"closed": False}
        html = s.render(parent, [empty])
        cut = html.rindex("</code>")
        box.before, box.after = html[:cut], html[cut:]
        box.opener = [s.lines[line]]
        box.next = line + 1
    else:
        if kind == "table":
            body = next(i for i in p.span(x + 1, p.match[x]) if toks[i].type == "tbody_open")
            head_toks, tail_toks, inner = toks[x : body + 1], toks[p.match[body] : p.end(x)], body
            box.opener = [s.lines[line], s.lines[line + 1]]
        else:
            head_toks, tail_toks, inner = [tok], [toks[p.match[x]]], x
            if kind in ("item", "quote"):
                box.opener = [opener(p, x, s.lines[line])]
            elif kind == "list":
                box.opener = [list_opener(p, x + 1, s.lines[line])]
        if kind == "list" and (line in s.task_lists or task_list(p, x)):
            s.task_lists.add(line)
            head_toks = [copy.copy(tok)]
            head_toks[0].attrs = {**tok.attrs, "class": "contains-task-list"}
        head = s.render(parent, head_toks)
        box.before = head[:-1] if head.endswith("\n") else head
        box.after = s.md.renderer.render(tail_toks, s.md.options, s.env)
        box.open_tok = toks[inner]
        if kind == "list":
            box.tight = box.rendered_tight = tight(p, x) and line not in s.loose
            set_hidden(p, x, box.tight)
    s.ops.append(Op(len(s.boxes) - 1, box.before + box.after, opens=True))
    s.boxes.append(box)
    return box


def settle_child(s: Settler, p: Parse, node: int) -> None:
    """Render child ``node`` once and append it to the innermost box."""
    box = s.boxes[-1]
    toks = p.toks[node : p.end(node)]
    html = s.render(box, toks)
    box.parts.append(html)
    box.prev = toks[-1]
    s.ops.append(Op(len(s.boxes) - 1, html))


def _close(s: Settler, p: Parse, node: int) -> None:
    box = s.boxes.pop()
    parent = s.boxes[-1]
    if box.kind == "fence" and p.toks[node].meta.get("closed"):
        # Highlighted once, now that it is complete: replace the streamed lines.
        tok = copy.copy(p.toks[node])
        tok.content = "".join(box.code)
        tok.meta = {"closed": True}
        html = s.render(parent, [tok])
        s.ops.append(Op(len(s.boxes) - 1, html, replaces=True))
        s.replaced += 1
        parent.parts.append(html)
        parent.prev = tok
        return
    if box.replacement is not None:
        s.ops.append(Op(len(s.boxes) - 1, box.replacement, replaces=True))
        s.replaced += 1
        parent.parts.append(box.replacement)
    else:
        parent.parts.append(box.before + "".join(box.parts) + box.after)
    parent.prev = p.toks[p.match[node]] if p.toks[node].nesting == 1 else p.toks[node]
