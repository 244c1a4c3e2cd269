"""The tails: what is not settled yet in each open container, re-rendered on every update
from one partial parse of the open end (with the partial last line held back).

Only the innermost open child and the partial line are parsed, so a tail costs what the open
row, item, code line or paragraph piece costs. Parsing the partial line can also decide
something for good (a list turned loose, an item turned task, a paragraph long enough to be
opened and cut): that is done here too.
"""

from __future__ import annotations

from ..budget import Budget, cost
from ..holdback import hold_back
from ..paragraph import chunk
from .boxes import Box, Parse, common_prefix
from .fences import fence_tail
from .lists import fix_hidden, stale
from .paragraphs import open_para, para_ready, para_tail, stand_in
from .state import Settler
from .structure import settle

__all__ = ["tails"]


def tails(s: Settler, partial: str, budget: Budget | None = None) -> list[str] | None:
    """The unsettled HTML of each open container, with the partial last line held back.
    May settle pieces of a long paragraph (``paragraph.py``) and open one. None when the
    partial line showed a list rendered wrong (``lists.stale``) and its replacement is
    more than the ``budget`` covers: the settler is then behind (``s.reached``).

    ``s.tail_cost`` is then what the unsettled source left costs (``budget.cost``), what
    the next tails will parse again: the streaming renderer lets a firehose's updates skip
    the tails until the text they take pays for that (``streaming.py``)."""
    s.tail_waiting = set()
    out = _tails(s, partial, budget)
    if out is not None:
        stand_in(s, partial)
        src = s.source(s.boxes[-1].start(), len(s.lines), partial)[0]
        s.tail_cost = cost(src)
    return out


def _tails(s: Settler, partial: str, budget: Budget | None) -> list[str] | None:
    inner = s.boxes[-1]
    start = inner.start()
    stand_in(s, partial)
    src, first, fresh = s.source(start, len(s.lines), partial)
    # A provisionally cut paragraph takes what is open as staying open, except near the
    # end, where a link or emphasis being typed is still shown as it will look.
    para = inner.para
    floor = len(src) - chunk(src, backwards=True) if para is not None and para.provisional else 0
    shown = hold_back(src, max(0, floor))
    p = s.parse(shown, first, start)
    p.unheld = common_prefix(src, shown)
    nodes = s.walk(p, fresh)
    k = stale(s, p, nodes)
    if k is not None:
        s.rewind(k)
        if not settle(s, len(s.lines), budget=budget):
            return None
        return _tails(s, partial, budget)
    fix_hidden(s, p, nodes)
    out: list[str] = []
    for k, box in enumerate(s.boxes):
        if k >= len(nodes):
            out.append("")
            continue
        if box.kind == "fence":
            out.append(fence_tail(p, nodes[k], box))
            continue
        if box.kind == "para":
            out.append(para_tail(s, p, nodes[k], box, fresh[k], partial))
            continue
        nxt = nodes[k + 1] if k + 1 < len(nodes) else None
        kids = [c for c in p.children(nodes[k]) if c != nxt and p.line(c) >= first]
        last = k == len(s.boxes) - 1 and len(kids) == 1
        if last and para_ready(s, p, kids[0], box, partial):
            open_para(s, p, kids[0], partial)
            out.append("")
            text = p.toks[kids[0] + 1].content
            out.append(s.inline_html(text))
            return out
        out.append(_render_tail(s, p, box, kids, nxt))
    return out


def _render_tail(s: Settler, p: Parse, box: Box, kids: list[int], after: int | None) -> str:
    if not kids:
        return ""
    prev = p.toks[p.end(after) - 1] if after is not None else None
    return s.render(box, p.toks[kids[0] : p.end(kids[-1])], prev)
