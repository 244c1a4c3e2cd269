"""A chat as one self-contained web page (Export .html): the selected path's messages, each
answer rendered as the page renders it (``render``: the same sanitizing markdown), the page's
own styles inlined, a print stylesheet, and nothing else.

Self-contained and inert: no script at all, and a Content-Security-Policy that allows only the
inline styles and ``data:`` images, so the file opened from disk (``file://``) makes no
request, not even for an image an answer links to; a question's attached images are in it as
``data:`` URLs of their own bytes. The interactive tools (a table's Copy, a code block's
Download) are left out: there is nothing to run them.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from ..events import Citation, sources
from ..providers.attachments import IMAGE_TYPES, Attachment
from .conversation import Conversation
from .runs import runs_html

__all__ = ["CSP", "PRINT_CSS", "export_html"]

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'"

# The document's own layout and printing: white paper, code that wraps, no page break inside a
# code block or a table row, and each link's address after its text.
PRINT_CSS = """
html, body { height: auto !important; overflow: visible !important; display: block !important; }
.export { max-width: 52rem; margin: 0 auto; padding: 1rem; }
.export > header h1 { font-size: 1.4rem; }
.export > .msg + .msg { margin-top: .75rem; }
.export .msg > .who { font-size: .8rem; color: var(--muted); margin: 0 0 .3rem; }
.export .files { display: flex; flex-wrap: wrap; gap: .5rem; margin: 0 0 .4rem; }
.export .files figure { margin: 0; }
.export .files img { max-width: 100%; max-height: 16rem; border-radius: .4rem; }
.export .files pre { max-height: 20rem; overflow: auto; white-space: pre-wrap; }
@media print {
  :root { color-scheme: light; }
  body, .msg, .msg.user { background: #fff !important; color: #000 !important; }
  .export { max-width: none; padding: 0; }
  .msg { border-color: #999; break-inside: auto; }
  pre, .codeblock pre { white-space: pre-wrap; overflow: visible; }
  .codeblock, tr, img, math { break-inside: avoid; }
  .msg .content table { display: table; overflow: visible; }
  a[href^="http"]::after { content: " (" attr(href) ")"; font-size: .8em; }
}
"""

_TOOLS = (
    re.compile(r'<div class="table-tools" role="group" aria-label="Table">.*?</div>', re.S),
    re.compile(r'<span class="code-tools">.*?</span>', re.S),
)


def _without_tools(answer: str) -> str:
    for tools in _TOOLS:
        answer = tools.sub("", answer)
    return answer


def export_html(conv: Conversation, css: str, render: Callable[[str], str]) -> str:
    """The selected path as a web page; ``css`` the page's styles, ``render`` the answers'
    markdown renderer (``pysse.render.render``: its HTML is safe to embed as is)."""
    title = html.escape(conv.title or "Conversation")
    parts = [
        "<!doctype html>",
        '<html lang="en" data-theme="light"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta name="generator" content="pysse"><title>{title}</title>',
        f"<style>{_style(css)}\n{PRINT_CSS}</style></head>",
        f'<body><main class="export"><header><h1 dir="auto">{title}</h1></header>',
    ]
    for m in conv.path():
        if m.role == "user":
            body = f'<div class="content" dir="auto">{html.escape(m.text)}</div>'
            if m.attachments:
                body = _files(m.attachments) + body
            who, cls = "You", "msg user"
        else:
            body = f'<div class="content">{_without_tools(render(m.text))}</div>'
            body += runs_html(m.runs) + _sources(m.citations)
            note = "" if m.state == "completed" else f" ({html.escape(m.state)})"
            who, cls = f"Assistant{note}", "msg assistant"
        parts.append(f'<article class="{cls}"><p class="who">{who}</p>{body}</article>')
    parts.append("</main></body></html>\n")
    return "\n".join(parts)


def _files(files: tuple[Attachment, ...]) -> str:
    """A question's files, inside the page: each image as a ``data:`` URL of its own bytes
    (its type one of the four a model takes, its data checked base64 where it was made or
    read: the page still loads nothing), each text file folded under its name."""
    out = []
    for f in files:
        name = html.escape(f.name)
        if f.kind == "image" and f.media_type in IMAGE_TYPES:
            src = html.escape(f"data:{f.media_type};base64,{f.data}")
            out.append(f'<figure class="file"><img src="{src}" alt="{name}"></figure>')
        else:
            out.append(
                f'<details class="file"><summary dir="auto">{name}</summary>'
                f'<pre dir="auto">{html.escape(f.data)}</pre></details>'
            )
    return f'<div class="files">{"".join(out)}</div>'


def _sources(citations: tuple[Citation, ...]) -> str:
    """An answer's sources as the page shows them: a numbered list of http(s) links, each
    title as text and its host beside it."""
    items = [
        f'<li><a href="{html.escape(c.url)}" rel="noopener noreferrer nofollow" '
        f'target="_blank" dir="auto">{html.escape(c.title or c.host)}</a> '
        f'<span class="source-host" dir="ltr">{html.escape(c.host)}</span></li>'
        for c in sources(citations)
    ]
    if not items:
        return ""
    head = '<section class="sources" aria-label="Sources"><h3 class="sources-title">Sources</h3>'
    return f'{head}<ol class="sources-list">{"".join(items)}</ol></section>'


def _style(css: str) -> str:
    """``css`` safe inside a ``<style>`` element: it cannot end the element early."""
    return re.sub(r"(?i)</(style)", r"<\\/\1", css)
