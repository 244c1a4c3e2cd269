"""Text direction of an answer's blocks: each takes it from its own text, code stays left to right.

Arabic, Hebrew, Persian and Urdu readers need an answer's paragraphs laid out right to left,
English ones left to right, often in the same answer. The browser does that from the text
itself with ``dir="auto"``: an element's direction is that of its first strong letter, and it
is re-resolved as text arrives, so a streaming block flips at most once, when its first
strong letter arrives (before that it has none to go by and is left to right).

Why ``dir`` goes only on *direction roots* and not on every block: ``dir="auto"`` skips the
text of any descendant that has a ``dir`` attribute of its own. A quote whose paragraphs each
carried ``dir="auto"`` would find no text of its own and stay left to right (its border on
the wrong side), and so would a loose list item around its ``<p>``. So:

* a list item is always a root (each item its own direction; its marker and indent follow);
* a paragraph, heading, quote or table is a root at the top of the answer; inside a quote, an
  item or a table it takes its container's direction (a table's cells its table's, so its
  columns run in the table's reading order);
* code (fences, indented code) and math are always ``dir="ltr"`` (``markdown.py``, ``math.py``).

A table column's alignment mirrors with its table: markdown-it writes ``:---`` as
``style="text-align:left"``, which stays on the left in a right-to-left table, though the colon
was typed at the start of the cell. pysse writes a class instead (``align-start``,
``align-end``, ``align-center``) that the page's CSS maps to ``text-align: start`` / ``end``:
left is the start of a left-to-right table and the end of a right-to-left one. No inline
style then (a page whose Content-Security-Policy refuses inline styles aligns them too, and
the cache's check, ``page/restore.py``, accepts no ``style`` at all).

The attribute is added when a token is rendered, never stored on it: the streaming renderer
renders the same token objects more than once (a container's opening tag, then the context
of its first child) and a one-shot render must give the same attribute order.
"""

from __future__ import annotations

from typing import Any

from markdown_it import MarkdownIt

__all__ = ["ALIGN", "ALWAYS", "DIRECTIONS", "TOP_LEVEL", "install_direction", "with_dir"]

DIRECTIONS = ("auto", "ltr", "rtl")  # the only values pysse ever writes (docs/security.md)
ALWAYS = ("list_item_open",)
TOP_LEVEL = ("paragraph_open", "heading_open", "blockquote_open", "table_open")
# markdown-it's style on a table cell -> the class pysse writes (web/style.css aligns them)
ALIGN = {
    "text-align:left": "align-start",
    "text-align:right": "align-end",
    "text-align:center": "align-center",
}


def _is_root(tok: Any) -> bool:
    """Whether ``tok`` opens a block that resolves its own direction (see the docstring)."""
    return tok.type in ALWAYS or (tok.type in TOP_LEVEL and tok.level == 0)


def with_dir(render: Any, tokens: Any, idx: int, *args: Any) -> str:
    """``render(tokens, idx, *args)`` with ``dir="auto"`` on ``tokens[idx]`` for this call
    only (the token is shared between renders; see the module docstring)."""
    tok = tokens[idx]
    saved = tok.attrs
    tok.attrs = {**saved, "dir": "auto"}
    try:
        return str(render(tokens, idx, *args))
    finally:
        tok.attrs = saved


def install_direction(md: MarkdownIt) -> None:
    """Render rules that put ``dir="auto"`` on the direction roots (after any rule a plugin
    set for those tokens, which they then call), and write a table cell's alignment as a
    class that mirrors in a right-to-left table."""
    renderer: Any = md.renderer
    for name in (*ALWAYS, *TOP_LEVEL):
        inner = renderer.rules.get(name)
        md.add_render_rule(name, _rule(inner))
    for name in ("th_open", "td_open"):
        md.add_render_rule(name, _cell(renderer.rules.get(name)))


def _cell(inner: Any) -> Any:
    def rule(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        render = inner if inner is not None else self.renderToken
        tok = tokens[idx]
        style = tok.attrs.get("style")
        if style is None:
            return str(render(tokens, idx, options, env))
        saved = tok.attrs  # shared between renders: replaced for this call only
        attrs = {k: v for k, v in saved.items() if k != "style"}
        if style in ALIGN:
            attrs["class"] = ALIGN[style]
        tok.attrs = attrs
        try:
            return str(render(tokens, idx, options, env))
        finally:
            tok.attrs = saved

    return rule


def _rule(inner: Any) -> Any:
    def rule(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        render = inner if inner is not None else self.renderToken
        if not _is_root(tokens[idx]):
            return str(render(tokens, idx, options, env))
        return with_dir(render, tokens, idx, options, env)

    return rule
