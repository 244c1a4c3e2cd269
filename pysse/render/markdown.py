"""The markdown configuration pysse renders every answer with, and the one-shot renderer the
streaming renderer's final state must equal.

Safe by default: model output is untrusted: raw HTML is escaped (``html=False``), links
are allowed only for http, https and mailto and open with ``rel="noopener noreferrer
nofollow"``, remote images are shown as links unless their host is allowed, math becomes
sanitized MathML (``math.py``), task list checkboxes are disabled.

Extended only through markdown-it's plugin ecosystem (mdit-py-plugins: dollarmath, texmath's
brackets, amsmath, tasklists); a fenced code block gets a header with its language, a
Copy and a Download button (its file name from the language: ``takeout.py``), so the buttons
never cover code; a table gets Copy, Copy TSV and Download CSV buttons above it. Blocks take
their direction from their own text (``dir="auto"``), code and math are always left to right
(``direction.py``). Emphasis next to Chinese and Japanese text and full-width punctuation
follows the CommonMark CJK-friendly amendment (``cjk.py``).

A code fence without its closing fence (the answer is still arriving, or ended inside it) is
shown as code marked ``incomplete`` and is never highlighted, at any depth (a list item, a
quote): ``observe.py`` records on each fence token whether it was closed. A fence whose
language's lexer is a lazy resource not here yet (``lazy.py``) requests it as soon as it is
rendered, open or closed, and is shown plain until it has arrived. A closed ``mermaid`` fence
is marked as a diagram for the view to draw, or carries a note on why it is not drawn
(``diagrams.py``).
"""

from __future__ import annotations

import html as _html
import re
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.utils import OptionsDict

from . import lazy
from .cjk import install_cjk
from .code_names import code_filename
from .diagrams import diagram_kind, refusal
from .direction import install_direction
from .highlight import lexer_resource, make_highlighter
from .observe import install

__all__ = ["MarkdownPolicy", "make_markdown", "open_fence_line", "render"]

SAFE_SCHEMES = ("http", "https", "mailto")
# A closed block in one of these languages gets a Run button (docs/chat-page.md "Run Python").
RUNNABLE = frozenset({"python", "py", "python3", "py3"})
RUN_BUTTON = '<button class="run" type="button" aria-label="Run code">Run</button>'


@dataclass(frozen=True)
class MarkdownPolicy:
    """What model-written markdown may do. Everything risky is off by default."""

    image_hosts: frozenset[str] = frozenset()  # hosts whose images may load ("*" for any)
    link_schemes: tuple[str, ...] = SAFE_SCHEMES
    highlight: bool = True  # pygments for closed fences, when pygments is importable
    math: bool = True  # $…$, $$…$$, \(…\), \[…\] and amsmath environments as MathML

    def image_allowed(self, url: str) -> bool:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            return False
        return "*" in self.image_hosts or (parts.hostname or "") in self.image_hosts


def _link_ok(url: str, schemes: tuple[str, ...]) -> bool:
    scheme = urlsplit(url.strip()).scheme.lower()
    return scheme in schemes


def make_markdown(policy: MarkdownPolicy | None = None) -> MarkdownIt:
    """A markdown-it instance with the safe configuration used everywhere in pysse."""
    policy = policy or MarkdownPolicy()
    md = MarkdownIt("js-default", {"html": False, "linkify": False, "typographer": False})
    md.disable("reference")  # would let a later line change an earlier, settled block
    if policy.math:
        from .math import math_plugin

        math_plugin(md)
    from mdit_py_plugins.tasklists import tasklists_plugin

    # Disabled checkboxes, each inside a <label> with its item's text (its accessible name);
    # no generated ids, so a render is the same every time.
    tasklists_plugin(md, enabled=False, label=True)
    install_cjk(md)  # emphasis next to CJK text and full-width punctuation (cjk.py)
    install(md)  # the streaming renderer's observers (observe.py)
    install_direction(md)  # dir="auto" on blocks, each from its own text (direction.py)
    schemes = policy.link_schemes
    md.validateLink = lambda url: _link_ok(url, schemes)  # type: ignore[method-assign]
    hl = make_highlighter(policy.highlight)
    renderer: Any = md.renderer
    default_fence = renderer.rules["fence"]
    default_code_block = renderer.rules["code_block"]
    default_link_open = renderer.rules.get("link_open")
    default_table_open = _rule_or_token(md, "table_open")
    default_table_close = _rule_or_token(md, "table_close")
    plain_options = OptionsDict(cast(Any, {**md.options, "highlight": None}))
    hl_options = OptionsDict(cast(Any, {**md.options, "highlight": hl}))

    def fence(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        tok = tokens[idx]
        open_fence = not tok.meta.get("closed", False)
        if hl is not None and lazy.REGISTRY.lazy:
            # Its lexer is fetched as soon as the fence opens (hold-back shows no fence
            # before its info string is complete), so it is likely here when it closes.
            resource = lexer_resource(tok.info)
            if resource is not None:
                lazy.REGISTRY.request(resource)
        use = plain_options if open_fence or hl is None else hl_options
        # Focusable: a reader on a keyboard can scroll code that is wider than the page.
        inner = default_fence(tokens, idx, use, env).replace("<pre>", '<pre tabindex="0">', 1)
        cls = "codeblock incomplete" if open_fence else "codeblock"
        word = tok.info.strip().split(maxsplit=1)[0][:40] if tok.info.strip() else ""
        lang, name = _html.escape(word), _html.escape(code_filename(word))
        mark, note = "", ""
        kind = None if open_fence else diagram_kind(tok.info)
        if kind is not None:  # drawn by the view once the answer ended (diagrams.py)
            why = refusal(tok.content)
            if why is None:
                mark = f' data-diagram="{kind}"'
            else:
                note = f'<p class="diagram-note" role="note">Not drawn: {_html.escape(why)}</p>'
        # Run (web/runner_host.js): a closed Python block only; a streaming one is unfinished.
        run = RUN_BUTTON if not open_fence and word.lower() in RUNNABLE else ""
        return (
            f'<div class="{cls}" dir="ltr"{mark}><div class="code-head">'
            f'<span class="code-lang">{lang}</span><span class="code-tools">{run}'
            '<button class="copy" type="button" aria-label="Copy code">Copy</button>'
            f'<button class="save" type="button" data-file="{name}" '
            f'aria-label="Download code as {name}">Download</button></span></div>'
            f"{inner}{note}</div>\n"
        )

    def table_open(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        # Its tools before it, in a box whose last element is the table (the streaming
        # renderer appends rows into the innermost last element: its body).
        return TABLE_TOOLS + str(default_table_open(tokens, idx, options, env))

    def table_close(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        return str(default_table_close(tokens, idx, options, env)).rstrip("\n") + "</div>\n"

    def code_block(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        # Code reads left to right in a right-to-left answer too (direction.py).
        return str(default_code_block(tokens, idx, options, env)).replace(
            "<pre", '<pre dir="ltr"', 1
        )

    def link_open(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        tok = tokens[idx]
        if not _link_ok(str(tok.attrGet("href") or ""), schemes):
            # `[text]()`: CommonMark's empty destination never reaches validateLink, and
            # href="" would open this page again. Its text stays, as plain text.
            close = next(i for i in range(idx + 1, len(tokens)) if tokens[i].type == "link_close")
            tokens[close].tag = tok.tag = "span"
            tok.attrs = {}
            return str(renderer.renderToken(tokens, idx, options, env))
        tok.attrSet("target", "_blank")
        tok.attrSet("rel", "noopener noreferrer nofollow")
        if default_link_open is not None:
            return str(default_link_open(tokens, idx, options, env))
        return str(renderer.renderToken(tokens, idx, options, env))

    def image(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        tok = tokens[idx]
        src = str(tok.attrGet("src") or "")
        alt = renderer.renderInlineAsText(tok.children or [], options, env)
        if policy.image_allowed(src):
            return (
                f'<img src="{_html.escape(src)}" alt="{_html.escape(alt)}" loading="lazy" '
                'referrerpolicy="no-referrer">'
            )
        if urlsplit(src).scheme in ("http", "https"):
            return (
                f'<a class="image-link" href="{_html.escape(src)}" target="_blank" '
                f'rel="noopener noreferrer nofollow">🖼 {_html.escape(alt or "image")}</a>'
            )
        return _html.escape(alt)

    md.add_render_rule("fence", fence)
    md.add_render_rule("code_block", code_block)
    md.add_render_rule("link_open", link_open)
    md.add_render_rule("image", image)
    md.add_render_rule("table_open", table_open)
    md.add_render_rule("table_close", table_close)
    return md


# A table's tools (pysse/app/takeout.py): Copy as Markdown or TSV, Download as CSV.
TABLE_TOOLS = (
    '<div class="tablebox"><div class="table-tools" role="group" aria-label="Table">'
    '<button type="button" data-role="table-md" aria-label="Copy table as Markdown">Copy</button>'
    '<button type="button" data-role="table-tsv">Copy TSV</button>'
    '<button type="button" data-role="table-csv">Download CSV</button></div>'
)


def _rule_or_token(md: MarkdownIt, name: str) -> Any:
    renderer: Any = md.renderer
    rule = renderer.rules.get(name)
    if rule is not None:
        return rule
    return lambda tokens, idx, options, env: renderer.renderToken(tokens, idx, options, env)


_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def open_fence_line(src: str) -> int | None:
    """The line number of a top-level code fence left open at the end of ``src``, if any."""
    fence: tuple[str, int, int] | None = None  # (char, length, line)
    for no, line in enumerate(src.split("\n")):
        m = _FENCE_OPEN.match(line)
        if fence is None:
            if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                fence = (m.group(1)[0], len(m.group(1)), no)
        elif (
            m
            and m.group(1)[0] == fence[0]
            and len(m.group(1)) >= fence[1]
            and not m.group(2).strip()
        ):
            fence = None
    return fence[2] if fence else None


def render(src: str, md: MarkdownIt | None = None) -> str:
    """One-shot rendering of a whole answer, as the streaming renderer's final state."""
    md = md or make_markdown()
    if "\r" in src:  # as markdown-it normalizes, so that line numbers agree
        src = src.replace("\r\n", "\n").replace("\r", "\n")
    return str(md.render(src, {}))
