"""Boxes and opener lines: an open container, one partial parse, and the lines that recreate
a container in a parse that starts after its first line.

A :class:`Box` is one open container of the answer (its element is in the DOM, its settled
children are appended into it). A :class:`Parse` is markdown-it's block tokens for one
partial source, with the open -> close token map and the source's line starts. Opener lines
(``opener``, ``list_opener``) are a container's real first line cut after its marker, with a
stand-in empty heading as content: a closed block that keeps the content column.
"""

from __future__ import annotations

from markdown_it.token import Token

from ..paragraph import Paragraph

__all__ = [
    "KIND",
    "NEEDS_OPENER",
    "Box",
    "Parse",
    "common_prefix",
    "list_opener",
    "opener",
    "pad",
]

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
            body = [i for i in self.span(node + 1, match[node]) if toks[i].type == "tbody_open"]
            if not body:
                return []
            lo, hi = body[0] + 1, match[body[0]]
        elif toks[node].nesting != 1 or toks[node].type == "paragraph_open":
            return []
        else:
            lo, hi = node + 1, match[node]
        return self.span(lo, hi)

    def span(self, lo: int, hi: int) -> list[int]:
        """The top-level nodes among tokens ``lo:hi``."""
        out = []
        i = lo
        while i < hi:
            out.append(i)
            i = self.match[i] + 1
        return out

    def end(self, node: int) -> int:
        """The token index after ``node`` (and everything inside it)."""
        return self.match[node] + 1

    def line(self, node: int) -> int:
        """The (fresh) line where block ``node`` starts."""
        m = self.toks[node].map
        return m[0] if m else -1

    def end_line(self, node: int) -> int:
        """The (fresh) line after block ``node``."""
        m = self.toks[node].map
        return m[1] if m else len(self.line_starts) - 1

    def line_start(self, tok: Token) -> int:
        """Where ``tok``'s first line starts in the source."""
        return self.line_starts[tok.map[0]] if tok.map else 0


# -- opener lines ---------------------------------------------------------------------------------


def opener(p: Parse, x: int, line: str) -> str:
    """A list item's or quote's first line cut after its marker, with a stand-in empty
    heading (a closed block) as its first child, in the same content column: after a list
    marker the real spaces (tabs included) are kept, unless they made the content an
    indented code block or there is no content, where markdown-it's column is marker + 1."""
    tok = p.toks[x]
    if "content_pos" in tok.meta:
        pos = min(max(0, int(tok.meta["content_pos"]) - p.line_start(tok)), len(line))
    else:  # an empty item: markdown-it did not even look for its content
        pos = len(line)
    head = line[:pos].rstrip(" \t")
    if tok.type == "blockquote_open":
        return head[: head.rindex(">") + 1] + " #" if ">" in head else "> #"
    kids = p.children(x)
    code_first = (
        bool(kids) and p.toks[kids[0]].type == "code_block" and p.line(kids[0]) == p.line(x)
    )
    if pos >= len(line.rstrip(" \t")) or code_first:
        return head + " #"
    return line[:pos] + "#"


def list_opener(p: Parse, item: int, line: str) -> str:
    """A list's first line cut after the marker of its first item, with a stand-in heading at
    the widest content column (marker + 4): any real item after it, at most 3 columns in,
    starts a new item of the same list, as it did in the whole text (it cannot become the
    stand-in's content, nor start a list of its own - which could then be a table header)."""
    tok = p.toks[item]
    pos = len(line)
    if "content_pos" in tok.meta:
        pos = min(max(0, int(tok.meta["content_pos"]) - p.line_start(tok)), len(line))
    return line[:pos].rstrip(" \t") + "    #"


# -- small helpers --------------------------------------------------------------------------------


def common_prefix(a: str, b: str) -> int:
    """The length of the common prefix of ``a`` and ``b``."""
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


def pad(tails: list[str], n: int) -> list[str]:
    return (tails + [""] * n)[:n]
