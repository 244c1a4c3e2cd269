"""Code fences: streamed line by line as escaped text, then highlighted once, in slices.

An open fence is a container whose complete lines are final as soon as they arrive (they are
appended as escaped text; its partial line is its tail). When it closes it is replaced once
by its highlighted form, highlighted within the update's budget, over several updates if
needed (``highlight.HighlightJob``); it stays open meanwhile.
"""

from __future__ import annotations

from markdown_it.common.utils import MD_TRIM_RE, escapeHtml, mdTrim, unescapeAll
from markdown_it.token import Token

from ..budget import Budget
from ..highlight import HighlightJob
from ..update import Op
from .boxes import Box, Parse
from .state import Settler

__all__ = ["fence_lang", "fence_lines", "fence_tail", "highlighting"]


def highlighting(
    s: Settler, p: Parse, nodes: list[int], closed: int, budget: Budget | None
) -> bool:
    """Whether a code fence that closes now is still being highlighted. Its highlighting
    (``highlight.HighlightJob``) is spread over updates, a budget's worth each, so that no
    frame runs pygments on a whole long fence; meanwhile the fence stays open. The finished
    job is remembered, so closing it renders it at once. Without a budget (``finish()``)
    it is finished at once."""
    for k in range(closed, len(s.boxes)):
        box = s.boxes[k]
        tok = p.toks[nodes[k]]
        if box.kind != "fence" or not tok.meta.get("closed"):
            continue
        key = ("".join(box.code) + tok.content, fence_lang(tok))
        job = s.job
        if not isinstance(job, HighlightJob) or job.key != key:
            job = s.job = HighlightJob(*key)
        s.job_steps += 1
        if not job.step(budget):
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
