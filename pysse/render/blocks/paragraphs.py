"""A long paragraph as an open container: opened once it is long, its inline content
settled a piece at a time (``paragraph.py`` finds where it can be cut), and checked whole
once when it ends if it was cut provisionally.

A later partial parse starts at the line of the paragraph's last cut, with a stand-in for
the part already settled (``Paragraph.stand_in``), so the block around it (still one
paragraph? a ``===`` line making it a heading? a table header?) is decided by markdown-it.
"""

from __future__ import annotations

import re

from markdown_it.common.utils import MD_TRIM_CHARS
from markdown_it.token import Token

from ..budget import Budget
from ..paragraph import (
    MIN_CHUNK,
    MIN_PARAGRAPH,
    PROVISIONAL,
    Paragraph,
    can_cut,
    chunk,
    find_cut,
    find_cuts,
    weight,
)
from ..sliced import SlicedInline
from ..update import Op
from .boxes import Box, Parse
from .lists import fix_hidden
from .state import Settler
from .waits import hold_text

__all__ = [
    "WholeParagraph",
    "check_provisional",
    "checking",
    "ends_before",
    "open_para",
    "para_content",
    "para_lost_line",
    "para_ready",
    "para_tail",
    "stand_in",
]

_DELIM = re.compile(r"[\s>]*[|:-][\s|:>-]*")  # could be a table's delimiter row


def para_ready(s: Settler, p: Parse, x: int, parent: Box, partial: str) -> bool:
    """Open the paragraph ``x`` (the innermost open child) once it is long, and if its
    text starts on its first line."""
    tok = p.toks[x]
    if not (
        tok.type == "paragraph_open"
        and not tok.hidden
        and parent.kind in ("root", "item", "quote")
        and "content_pos" in tok.meta
        and weight(p.toks[x + 1].content) >= MIN_PARAGRAPH
        and p.abs(p.line(x)) != s.plain_para
        and can_cut(s.md)
    ):
        return False
    _, raw, col = _para_start(s, p, x, partial)
    return col < len(raw)


def _para_start(s: Settler, p: Parse, x: int, partial: str) -> tuple[int, str, int]:
    """The paragraph's first line (absolute), that line, and where its text starts in
    it: markdown-it trims the content (mdTrim: also U+2028, NBSP...), so the stand-in
    must start there, or that leading space would be kept (a first line of only such
    characters is not a place to start: the paragraph is not opened)."""
    line = p.abs(p.line(x))
    raw = s.lines[line] if line < len(s.lines) else partial
    col = int(p.toks[x].meta["content_pos"]) - p.line_starts[p.line(x)]
    return line, raw, len(raw) - len(raw[col:].lstrip(MD_TRIM_CHARS))


def open_para(s: Settler, p: Parse, x: int, partial: str) -> None:
    parent = s.boxes[-1]
    tok = p.toks[x]
    line, raw, col = _para_start(s, p, x, partial)
    box = Box("para", line, tok)
    box.para = Paragraph(line, raw[:col])
    head = s.render(parent, [tok])
    box.before = head[:-1] if head.endswith("\n") else head
    box.after = s.md.renderer.render([p.toks[x + 2]], s.md.options, s.env)
    s.ops.append(Op(len(s.boxes) - 1, box.before + box.after, opens=True))
    s.boxes.append(box)


def para_content(p: Parse, node: int) -> str:
    """The unsettled content of the open paragraph at ``node`` (after its stand-in)."""
    if p.toks[node].type != "paragraph_open":
        return ""
    content = p.toks[node + 1].content
    return content[2:] if content.startswith("x ") else ""


def para_tail(s: Settler, p: Parse, node: int, box: Box, fresh_line: int, partial: str) -> str:
    """The open paragraph's unsettled content as HTML, after settling the part of it that
    can be cut off (``paragraph.find_cut``) and that hold-back did not touch."""
    para = box.para
    assert para is not None
    text = para_content(p, node)
    if (len(text) >= 2 * MIN_CHUNK or len(text) >= 2 * chunk(text)) and not hold_text(s, text):
        limit = _para_unheld(p, fresh_line, para, text)
        complete = len(s.lines) - para.cut_line
        if complete and text.count("\n") >= complete:
            # No cut on the partial line (``Paragraph.advance``): look for one before it,
            # or a text that always arrives mid-line would never be cut.
            limit = min(limit, text.rfind("\n"))
        s.inlined_chars += len(text)
        heavy, provisional_cut = False, 0
        if para.provisional:
            cut = find_cut(s.md, s.env, text, limit, True)
        else:  # one parse for both cuts: the text may be huge (a paragraph of brackets)
            heavy = weight(text) >= PROVISIONAL
            cut, provisional_cut = find_cuts(s.md, s.env, text, limit, heavy)
            if not cut and heavy:
                para.provisional = True
                cut = provisional_cut
        raw = [*s.lines[para.cut_line :], partial]
        made = bool(cut) and para.advance(text, cut, raw, complete)
        if not made and not para.provisional and heavy and provisional_cut:
            # The exact cut cannot be mapped onto the lines: cut provisionally instead, or a
            # heavy paragraph would be parsed whole again on every update.
            para.provisional = True
            cut = provisional_cut
            made = para.advance(text, cut, raw, complete)
        if made:
            s.append(s.inline_html(text[:cut]))
            text = text[cut:]
    return s.inline_html(text) if text else ""


def _para_unheld(p: Parse, fresh_line: int, para: Paragraph, text: str) -> int:
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


class WholeParagraph:
    """The one whole render of a provisionally cut paragraph that ended at line ``end``
    (``check_provisional``), its inline parse spread over updates (``sliced.py``). ``toks``
    is None when the lines are not one paragraph on their own after all."""

    def __init__(self, s: Settler, end: int, budget: Budget | None = None) -> None:
        box = s.boxes.pop()
        para = box.para
        assert para is not None
        self.key = (para.first_line, end)
        self.toks: list[Token] | None = None
        try:
            src, first, fresh = s.source(para.first_line, min(end, len(s.lines)), None)
            if end > len(s.lines):  # it ends with the text's last (partial) line
                src += s.last
            p = s.parse(src, first, para.first_line)
            if budget is not None:
                budget.spend(len(src))
            nodes = s.walk(p, fresh)
            fix_hidden(s, p, nodes)
            kids = p.children(nodes[-1]) if len(nodes) == len(s.boxes) else []
            x = next((c for c in kids if p.line(c) == first), None)
            if x is not None and p.toks[x].type == "paragraph_open":
                self.toks = p.toks[x : p.end(x)]
        finally:
            s.boxes.append(box)
        inline = [t for t in self.toks or [] if t.type == "inline"]
        self._parses = [SlicedInline(s.md, s.env, t) for t in inline]
        self._s = s

    def step(self, budget: Budget | None = None) -> bool:
        for job in self._parses:
            start = job.state.pos
            done = job.step(budget)
            self._s.inlined_chars += job.state.pos - start
            if not done:
                return False
        return True


def checking(s: Settler, p: Parse, nodes: list[int], closed: int, budget: Budget | None) -> bool:
    """Whether a provisionally cut paragraph that ends now is still being rendered whole
    (``WholeParagraph``, a budget's worth per update); it stays open meanwhile."""
    box = s.boxes[-1]
    if closed >= len(s.boxes) or box.para is None or not box.para.provisional:
        return False
    job = _job(s, p.abs(p.end_line(nodes[-1])), budget)
    s.job_steps += 1
    return not job.step(budget)


def _job(s: Settler, end: int, budget: Budget | None) -> WholeParagraph:
    para = s.boxes[-1].para
    assert para is not None
    job = s.job
    if not isinstance(job, WholeParagraph) or job.key != (para.first_line, end):
        job = s.job = WholeParagraph(s, end, budget)
    return job


def check_provisional(s: Settler, end: int) -> None:
    """A provisionally cut paragraph has ended (at line ``end``): render it whole, once
    (``checking`` has done the parsing, or it is done now), and have closing it replace it
    if that differs from its pieces."""
    job = _job(s, end, None)
    job.step(None)
    s.job = None
    if job.toks is None:
        return
    box = s.boxes.pop()
    try:
        html = s.render(s.boxes[-1], job.toks, parsed=True)
        if html != box.before + "".join(box.parts) + box.after:
            box.replacement = html
    finally:
        s.boxes.append(box)


def para_lost_line(s: Settler, end: int, last: str) -> bool:
    """Whether the open paragraph's cut line became a table header: the line after it is
    a delimiter row. The stand-in cut line cannot tell (its columns differ), so parse the
    real cut line and the next one, as the paragraph's continuation."""
    box = s.boxes[-1]
    para = box.para
    assert para is not None
    cut = para.cut_line
    nxt = s.lines[cut + 1] if cut + 1 < end else (last if cut + 1 == end else "")
    if not (nxt and cut < len(s.lines) and "|" in s.lines[cut] and _DELIM.fullmatch(nxt)):
        return False
    s.boxes.pop()
    try:
        lines = [para.cont + "x"] if cut > para.first_line else []
        src, first, fresh = s.source(cut, cut, None)
        src += "\n".join([*lines, s.lines[cut], nxt]) + "\n"
        p = s.parse(src, first, cut)
        nodes = s.walk(p, fresh)
        kids = p.children(nodes[-1]) if len(nodes) == len(s.boxes) else []
        return [p.toks[c].type for c in kids if p.line(c) >= first] != ["paragraph_open"]
    finally:
        s.boxes.append(box)


def stand_in(s: Settler, partial: str) -> None:
    """An open paragraph's opener: the line of its cut, settled part replaced."""
    box = s.boxes[-1]
    if box.para is not None:
        cut = box.para.cut_line
        box.opener = [box.para.stand_in(s.lines[cut] if cut < len(s.lines) else partial)]


def ends_before(p: Parse, node: int) -> bool:
    """Whether the parse has a complete line after block ``node``: after a paragraph that is
    a blank line (anything else would be in it or a block after it), which ends it for good,
    though no block follows yet (the next one's first line is still arriving)."""
    tok = p.toks[node]
    complete_lines = len(p.line_starts) - 2  # the source's line feeds
    return tok.map is not None and tok.map[1] < complete_lines
