"""Chat events -> markdown blocks: render a growing answer incrementally, safely, and without
flashing half-typed syntax.

Why it is built this way (seed 002, "Painting a message that keeps growing"):

* **Settled blocks are rendered once.** The text is split into top-level blocks by
  markdown-it's own block parser, run over *complete lines only*. Every block that is followed
  by another block starting on a complete line can no longer change (CommonMark decides block
  structure line by line; link reference definitions, the one construct that reaches
  backwards, are disabled), so it is rendered once and handed out as settled HTML, to be
  appended to the DOM and never touched again. Only the last block, the *tail*, is re-rendered
  on each update, so total work is linear in the answer, not quadratic.
* **Hold-back.** Before the tail is rendered, syntax that is not yet meaningful is held back:
  a partial line that may become a fence, a heading, a list marker, a setext underline or a
  table row; a table header waiting for its delimiter row; a dangling ``**``/``_``/``~~``/
  backtick (closed in reverse order of opening, or held if nothing follows it); a link whose
  URL is still arriving (shown as its text); a partial HTML tag. Plain text passes at once.
* **Safe by default.** Model output is untrusted: raw HTML is escaped (``html=False``), links
  are allowed only for http, https and mailto and open with ``rel="noopener noreferrer
  nofollow"``, remote images are shown as links unless their host is allowed.
"""

from __future__ import annotations

import html as _html
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.rules_core import block as _core_block
from markdown_it.rules_core import normalize as _core_normalize
from markdown_it.rules_core.state_core import StateCore
from markdown_it.utils import OptionsDict

__all__ = ["MarkdownPolicy", "StreamingMarkdown", "Update", "make_markdown", "render"]

SAFE_SCHEMES = ("http", "https", "mailto")


@dataclass(frozen=True)
class MarkdownPolicy:
    """What model-written markdown may do. Everything risky is off by default."""

    image_hosts: frozenset[str] = frozenset()  # hosts whose images may load ("*" for any)
    link_schemes: tuple[str, ...] = SAFE_SCHEMES
    highlight: bool = True  # pygments for closed fences, when pygments is importable

    def image_allowed(self, url: str) -> bool:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            return False
        return "*" in self.image_hosts or (parts.hostname or "") in self.image_hosts


def _link_ok(url: str, schemes: tuple[str, ...]) -> bool:
    scheme = urlsplit(url.strip()).scheme.lower()
    return scheme in schemes


def _highlighter(enabled: bool) -> Callable[[str, str, str], str] | None:
    if not enabled:
        return None
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import get_lexer_by_name
        from pygments.util import ClassNotFound
    except ImportError:  # pragma: no cover - pygments is an optional dependency
        return None
    formatter = HtmlFormatter(nowrap=True, classprefix="hl-")

    def hl(code: str, lang: str, attrs: str) -> str:
        if not lang:
            return ""
        try:
            lexer = get_lexer_by_name(lang.split()[0], stripnl=False, ensurenl=False)
        except ClassNotFound:
            return ""
        return str(highlight(code, lexer, formatter))

    return hl


def make_markdown(policy: MarkdownPolicy | None = None) -> MarkdownIt:
    """A markdown-it instance with the safe configuration used everywhere in pysse."""
    policy = policy or MarkdownPolicy()
    md = MarkdownIt("js-default", {"html": False, "linkify": False, "typographer": False})
    md.disable("reference")  # would let a later line change an earlier, settled block
    schemes = policy.link_schemes
    md.validateLink = lambda url: _link_ok(url, schemes)  # type: ignore[method-assign]
    hl = _highlighter(policy.highlight)
    renderer: Any = md.renderer
    default_fence = renderer.rules["fence"]
    default_link_open = renderer.rules.get("link_open")
    plain_options = OptionsDict(cast(Any, {**md.options, "highlight": None}))
    hl_options = OptionsDict(cast(Any, {**md.options, "highlight": hl}))

    def fence(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        tok = tokens[idx]
        open_fence = env.get("open_fence_line") == (tok.map[0] if tok.map else None)
        use = plain_options if open_fence or hl is None else hl_options
        inner = default_fence(tokens, idx, use, env)
        cls = "codeblock incomplete" if open_fence else "codeblock"
        return (
            f'<div class="{cls}"><button class="copy" type="button" '
            f'aria-label="Copy code">Copy</button>{inner}</div>\n'
        )

    def link_open(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        tok = tokens[idx]
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
    md.add_render_rule("link_open", link_open)
    md.add_render_rule("image", image)
    return md


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
    return str(md.render(src, {"open_fence_line": open_fence_line(src)}))


# -- hold-back ---------------------------------------------------------------------------------

_HOLD_PARTIAL_LINE = re.compile(
    r"""^(?:
        \ {0,3}(?:`{3,}|~{3,}).*          # a fence line being typed (or its info string)
      | \ {0,3}(?:`{1,2}|~{1,2})          # ... or a run that may grow into one
      | \ {0,3}\#{1,6}\s*                 # a bare heading marker
      | \s*(?:[-*+]|\d{1,9}[.)]?)\s*      # a lone list marker, or a number that may become one
      | \ {0,3}[-=*_\ ]+                  # setext underline / thematic break candidates
      | \s*\|.*                           # a table row still arriving
      | \ {0,3}>\s*                       # a lone quote marker
    )$""",
    re.VERBOSE,
)
_DELIM_START = re.compile(r"^ {0,3}\|?\s*:?-*\s*(\|.*)?$")
_LINK_URL_ARRIVING = re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*$")
_LINK_TEXT_ARRIVING = re.compile(r"!?\[([^\]\n]*)$")
_PARTIAL_TAG = re.compile(r"<[A-Za-z/!?][^>\n]*$|<$")
_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def _is_space(c: str) -> bool:
    return c == "" or c.isspace()


def _close_inline(s: str) -> str:
    """Close dangling inline markers at the end of ``s`` (reverse order of opening), or hold
    them back when nothing follows them yet."""
    stack: list[tuple[str, int]] = []  # (marker, position)
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == "`":
            j = i
            while j < n and s[j] == "`":
                j += 1
            run = s[i:j]
            close = s.find(run, j)
            while close != -1 and (s[close + len(run) : close + len(run) + 1] == "`"):
                close = s.find(run, close + len(run) + 1)
            if close == -1:
                if j == n:
                    return _close_stack(s[:i], stack)  # a bare trailing backtick run: hold it
                return _close_stack(s + run, stack)  # close the code span first
            i = close + len(run)
            continue
        if c in "*_~":
            j = i
            while j < n and s[j] == c:
                j += 1
            run = s[i:j]
            if j == n:
                return _close_stack(s[:i], stack)  # a marker with nothing after it: hold it
            if c == "~" and len(run) != 2:
                i = j
                continue
            prev = s[i - 1] if i else ""
            nxt = s[j]
            left = not _is_space(nxt) and (nxt not in _PUNCT or _is_space(prev) or prev in _PUNCT)
            right = not _is_space(prev) and (prev not in _PUNCT or _is_space(nxt) or nxt in _PUNCT)
            # Only "clean" openers count: not inside a word (snake_case, 2*3).
            clean_open = left and (_is_space(prev) or prev in _PUNCT)
            match = next((k for k in range(len(stack) - 1, -1, -1) if stack[k][0] == run), None)
            if right and match is not None:
                del stack[match:]
            elif clean_open:
                stack.append((run, i))
            i = j
            continue
        i += 1
    return _close_stack(s, stack)


def _close_stack(s: str, stack: list[tuple[str, int]]) -> str:
    if not stack:
        return s
    body = s.rstrip()
    # An opener with nothing after it yet is held back instead of closed.
    while stack and stack[-1][1] + len(stack[-1][0]) >= len(body):
        _, pos = stack.pop()
        body = body[:pos].rstrip()
    return body + "".join(m for m, _ in reversed(stack))


def hold_back(tail: str) -> str:
    """The part of the unsettled tail that is safe to show now (see module docstring)."""
    if not tail:
        return tail
    lines = tail.split("\n")
    partial = lines.pop()  # "" when the tail ends with a line end
    fence_line = open_fence_line("\n".join(lines))
    if fence_line is not None:
        m = re.match(r"^ {0,3}(`+|~+)", partial)
        if m:
            partial = ""  # may be the closing fence
        return "\n".join([*lines, partial]) if partial else "\n".join(lines) + "\n"
    if partial and _HOLD_PARTIAL_LINE.match(partial):
        partial = ""
    if partial and "|" in partial and lines and "|" in lines[-1]:
        partial = ""  # a table row is shown only when complete
    # A complete line with pipes that does not continue a table may be a table header: it
    # waits for the next line, which decides (a delimiter row makes it a table).
    if (
        lines
        and "|" in lines[-1]
        and not (len(lines) >= 2 and "|" in lines[-2])
        and (not partial or _DELIM_START.match(partial))
    ):
        lines.pop()
        partial = ""
    if partial:
        partial = _PARTIAL_TAG.sub("", partial)
        partial = _LINK_URL_ARRIVING.sub(lambda m: m.group(1), partial)
        partial = _LINK_TEXT_ARRIVING.sub(lambda m: m.group(1), partial)
    body = "\n".join([*lines, partial]) if partial else "\n".join(lines)
    # Inline markers: only within the last block (after the last blank line), not in code.
    cut = body.rfind("\n\n")
    head, last = (body[: cut + 2], body[cut + 2 :]) if cut >= 0 else ("", body)
    if last and not last.startswith("    ") and not last.startswith("\t"):
        last = _close_inline(last)
    return head + last


# -- the streaming renderer --------------------------------------------------------------------


@dataclass
class Update:
    """What changed: ``settled`` blocks to append (HTML, in order, never to change again) and
    the new ``tail`` HTML that replaces the previous tail. ``final`` after ``finish()``."""

    settled: list[str] = field(default_factory=list)
    tail: str = ""
    final: bool = False


class StreamingMarkdown:
    """Incremental, safe markdown for a growing answer.

    ``append(delta)`` is O(len(delta)) and renders nothing; ``update()`` renders what changed
    since the last update (call it at most once per frame); ``feed(delta)`` does both.
    """

    def __init__(self, policy: MarkdownPolicy | None = None, md: MarkdownIt | None = None) -> None:
        self.policy = policy or MarkdownPolicy()
        self.md = md or make_markdown(self.policy)
        self._settled: list[str] = []
        self._settled_src: list[str] = []
        self._tail_src = ""  # unsettled source, starts at a block boundary
        self._new: list[str] = []
        self._tail_html = ""
        self._checked_upto = -1  # length of tail_src's complete lines at the last settle check
        self.renders = 0  # markdown-it render calls (for benchmarks and tests)
        self.rendered_chars = 0
        self.finished = False

    @property
    def text(self) -> str:
        return "".join(self._settled_src) + self._tail_src + "".join(self._new)

    @property
    def html(self) -> str:
        """Everything that should be on screen now."""
        return "".join(self._settled) + self._tail_html

    @property
    def settled_blocks(self) -> list[str]:
        return list(self._settled)

    def append(self, delta: str) -> None:
        if delta:
            self._new.append(delta)

    def feed(self, delta: str) -> Update:
        self.append(delta)
        return self.update()

    def update(self) -> Update:
        if self.finished:
            return Update(final=True, tail=self._tail_html)
        if self._new:
            self._take_new()
        elif self._checked_upto >= 0 and self.renders:
            return Update(tail=self._tail_html)
        settled = self._settle()
        shown = hold_back(self._tail_src)
        self._tail_html = self._render(shown)
        return Update(settled=settled, tail=self._tail_html)

    def finish(self) -> Update:
        """End of stream: render the tail as CommonMark would (an open fence stays code)."""
        if self._new:
            self._take_new()
        self.finished = True
        settled = self._settle()
        self._tail_html = self._render(self._tail_src)
        return Update(settled=settled, tail=self._tail_html, final=True)

    # -- internals -----------------------------------------------------------------------------

    def _take_new(self) -> None:
        """Move appended deltas into the tail, with line ends normalized as markdown-it does
        (CRLF and CR become LF), so line numbers here and in markdown-it agree. A CR at the
        very end waits: the next delta may start with its LF."""
        src = self._tail_src + "".join(self._new)
        self._new.clear()
        if "\r" in src:
            keep_cr = src.endswith("\r")
            src = src.replace("\r\n", "\n")
            src = (src[:-1].replace("\r", "\n") + "\r") if keep_cr else src.replace("\r", "\n")
        self._tail_src = src

    def _render(self, src: str) -> str:
        if not src:
            return ""
        self.renders += 1
        self.rendered_chars += len(src)
        return render(src, self.md)

    def _settle(self) -> list[str]:
        """Move every block that can no longer change out of the tail, rendering it once."""
        src = self._tail_src
        complete = src[: src.rfind("\n") + 1]
        if len(complete) == self._checked_upto:
            return []
        self._checked_upto = len(complete)
        if not complete:
            return []
        state = StateCore(complete, self.md, {})
        _core_normalize(state)
        _core_block(state)
        starts = [t.map[0] for t in state.tokens if t.level == 0 and t.nesting in (0, 1) and t.map]
        if len(starts) < 2:
            return []
        last_start = starts[-1]
        # Char offset of line `last_start` in src.
        offset = 0
        for _ in range(last_start):
            offset = src.index("\n", offset) + 1
        segment = src[:offset]
        html = self._render(segment)
        self._settled.append(html)
        self._settled_src.append(segment)
        self._tail_src = src[offset:]
        self._checked_upto = -1
        return [html]
