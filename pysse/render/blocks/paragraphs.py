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

from ..paragraph import (
    MIN_CHUNK,
    MIN_PARAGRAPH,
    PROVISIONAL,
    Paragraph,
    can_cut,
    find_cut,
    render_inline,
    weight,
)
from ..update import Op
from .boxes import Box, Parse
from .lists import fix_hidden
from .state import Settler

__all__ = [
    "check_provisional",
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
    if len(text) >= 2 * MIN_CHUNK:
        limit = _para_unheld(p, fresh_line, para, text)
        cut = find_cut(s.md, s.env, text, limit, para.provisional)
        if not cut and not para.provisional and weight(text) >= PROVISIONAL:
            para.provisional = True
            cut = find_cut(s.md, s.env, text, limit, True)
        raw = [*s.lines[para.cut_line :], partial]
        if cut and para.advance(text, cut, raw, len(s.lines) - para.cut_line):
            s.append(render_inline(s.md, s.env, text[:cut], s.core))
            text = text[cut:]
    return render_inline(s.md, s.env, text, s.core) if text else ""


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


def check_provisional(s: Settler, end: int) -> None:
    """A provisionally cut paragraph has ended (at line ``end``): render it whole, once,
    and have closing it replace it if that differs from its pieces."""
    box = s.boxes.pop()
    para = box.para
    assert para is not None
    try:
        src, first, fresh = s.source(para.first_line, min(end, len(s.lines)), None)
        if end > len(s.lines):  # it ends with the text's last (partial) line
            src += s.last
        p = s.parse(src, first, para.first_line)
        nodes = s.walk(p, fresh)
        fix_hidden(s, p, nodes)
        kids = p.children(nodes[-1]) if len(nodes) == len(s.boxes) else []
        para_node = next((c for c in kids if p.line(c) == first), None)
        if para_node is None or p.toks[para_node].type != "paragraph_open":
            return
        html = s.render(s.boxes[-1], p.toks[para_node : p.end(para_node)])
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
