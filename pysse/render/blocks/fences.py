"""Code fences: streamed line by line as escaped text, then highlighted once, in slices.

An open fence is a container whose complete lines are final as soon as they arrive (they are
appended as escaped text; its partial line is its tail). When it closes it is replaced once
by its highlighted form; a long one is highlighted over several updates
(``highlight.HighlightJob``), and stays open meanwhile.
"""

from __future__ import annotations

from markdown_it.common.utils import MD_TRIM_RE, escapeHtml, mdTrim, unescapeAll
from markdown_it.token import Token

from ..highlight import SLICE_FROM, SLICE_SECONDS, HighlightJob
from ..update import Op
from .boxes import Box, Parse
from .state import Settler

__all__ = ["fence_lang", "fence_lines", "fence_tail", "highlighting"]


def highlighting(s: Settler, p: Parse, nodes: list[int], closed: int, final: bool) -> bool:
    """Whether a long code fence that closes now is still being highlighted. Its
    highlighting (``highlight.HighlightJob``) is spread over updates, ``SLICE_SECONDS``
    each, so that no frame runs pygments on a whole long fence; meanwhile the fence stays
    open. The finished job is remembered, so closing it renders it at once. At the end of
    the text it is finished synchronously (the final state must not wait)."""
    for k in range(closed, len(s.boxes)):
        box = s.boxes[k]
        tok = p.toks[nodes[k]]
        if box.kind != "fence" or not tok.meta.get("closed"):
            continue
        code = "".join(box.code) + tok.content
        if len(code) < SLICE_FROM:
            continue
        key = (code, fence_lang(tok))
        if s.job is None or s.job.key != key:
            s.job = HighlightJob(*key)
        if not s.job.step(None if final else SLICE_SECONDS):
            return True
        s.job = None
    return False


def fence_lines(s: Settler, p: Parse, node: int, box: Box, drain: bool = False) -> None:
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
        s.ops.append(Op(len(s.boxes) - 1, html))
    box.next = box.start() + len(lines)


def fence_tail(p: Parse, node: int, box: Box) -> str:
    """The open fence's partial line, unless it may be the closing fence."""
    content = p.toks[node].content
    if content.lstrip(" ").startswith(box.markup[0]):
        return ""  # may be the closing fence
    return escapeHtml(content)


def fence_lang(tok: Token) -> str:
    """The language word markdown-it's fence renderer passes to the highlighter."""
    info = mdTrim(unescapeAll(tok.info)) if tok.info else ""
    return MD_TRIM_RE.split(info, maxsplit=1)[0] if info else ""


def _split_lines(text: str) -> list[str]:
    """Lines with their line feeds, split at LF only: ``str.splitlines`` would also split at
    U+2028, VT, FF ... which markdown does not, and then miscount the fence's lines."""
    parts = text.split("\n")
    out = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out
