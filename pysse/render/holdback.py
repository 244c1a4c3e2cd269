"""Hold-back: the part of an unsettled markdown tail that is safe to show now.

Syntax that is not yet meaningful is held back rather than flashed: a partial line that may
become a fence, a heading, a list marker, a setext underline or a table row; a table header
waiting for its delimiter row; a dangling ``**``/``_``/``~~``/backtick (closed in reverse order
of opening, or held if nothing follows it); a link whose URL is still arriving (shown as its
text); a partial HTML tag; a task list checkbox being typed. Plain text passes at once.

Math (``math.py`` has the syntax rules) is held until it closes, so raw LaTeX never flashes:
a display block (``$$``, ``\\[``, ``\\begin{env}``) from its opening line; an inline ``$x`` or
``\\(`` from its opener, while the open span stays on one line and under
``INLINE_MATH_HOLD`` characters. An opening ``$`` followed by a digit is most likely money
(``$5 and more``) and is shown at once; a trailing ``$`` or ``\\`` waits for the next character.
Inline markers inside a complete math span are not emphasis (``$a *b$``).
"""

from __future__ import annotations

import re

from .markdown import open_fence_line
from .math import BLOCK_OPEN

__all__ = ["INLINE_MATH_HOLD", "hold_back", "open_math_line"]

INLINE_MATH_HOLD = 300  # an open inline formula longer than this is shown as text

_HOLD_PARTIAL_LINE = re.compile(
    r"""^(?:
        \ {0,3}(?:`{3,}|~{3,}).*          # a fence line being typed (or its info string)
      | \ {0,3}(?:`{1,2}|~{1,2})          # ... or a run that may grow into one
      | \ {0,3}\#{1,6}\s*                 # a bare heading marker
      | \s*(?:[-*+]|\d{1,9}[.)]?)\s*      # a lone list marker, or a number that may become one
      | \ {0,3}[-=*_\ ]+                  # setext underline / thematic break candidates
      | \s*\|.*                           # a table row still arriving
      | \ {0,3}>\s*                       # a lone quote marker
      | \s*(?:[-*+]|\d{1,9}[.)])\s+\[[\ xX]?\]?\s*   # a task list checkbox being typed
      | \ {0,3}(?:\$\$|\\\[|\\begin\{).*     # a display math opener
      | \ {0,3}\\(?:b|be|beg|begi|begin)?   # ... or the start of one
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
            if i + 1 == n:
                return _close_stack(s[:i], stack)  # may become \( : wait for the next char
            if s[i + 1] == "(":
                close = s.find("\\)", i + 2)
                if close != -1:
                    i = close + 2  # a complete \(…\): its content is not markup
                    continue
                if _hold_math(s, i):
                    return _close_stack(s[:i], stack)
            i += 2
            continue
        if c == "$":
            end = _math_end(s, i)
            if end is _HOLD:
                return _close_stack(s[:i], stack)
            i = end if isinstance(end, int) else i + 1
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


_HOLD = object()


def _hold_math(s: str, i: int) -> bool:
    """Hold an open inline formula starting at ``i``: while it is on one line and short."""
    return "\n" not in s[i:] and len(s) - i <= INLINE_MATH_HOLD


def _math_end(s: str, i: int) -> int | object | None:
    """At a ``$`` (``s[i]``), as dollarmath decides (``math.py``): the index after a complete
    inline formula, ``_HOLD`` to hold back from ``i``, or None when this ``$`` is text."""
    n = len(s)
    double = s.startswith("$$", i)
    start = i + (2 if double else 1)
    if start >= n:
        return _HOLD  # "$" or "$$" at the very end: math, money or nothing yet
    if i and s[i - 1].isdigit():
        return None
    if not double and s[start].isspace():
        return None
    j = start
    while True:
        j = s.find("$$" if double else "$", j)
        if j == -1:
            # Open: money ("$5 and"), shown; a formula being written, held.
            if not double and s[start].isdigit():
                return None
            return _HOLD if _hold_math(s, i) else None
        if s[j - 1] != "\\":
            break
        j += 1
    if double:
        return j + 2
    if s[j - 1].isspace() or (j + 1 < n and s[j + 1].isdigit()):
        return None
    return j + 1


def _close_stack(s: str, stack: list[tuple[str, int]]) -> str:
    if not stack:
        return s
    body = s.rstrip()
    # An opener with nothing after it yet is held back instead of closed.
    while stack and stack[-1][1] + len(stack[-1][0]) >= len(body):
        _, pos = stack.pop()
        body = body[:pos].rstrip()
    return body + "".join(m for m, _ in reversed(stack))


_CLOSER = {"$$": "$$", "\\[": "\\]"}


def open_math_line(lines: list[str]) -> int | None:
    """The index of a display math block (``$$``, ``\\[``, ``\\begin{env}``) left open at the
    end of ``lines`` (complete lines), if any. A blank line ends an unclosed one: from there
    on it is text (``math.py``)."""
    open_at: int | None = None
    closer = ""
    for no, line in enumerate(lines):
        if open_at is not None:
            ended = closer in line if closer == "\\]" else line.rstrip().endswith(closer)
            if ended or not line.strip():  # closed; or a blank line: unclosed, so text
                open_at = None
            continue
        m = BLOCK_OPEN.match(line.lstrip(" ") if len(line) - len(line.lstrip(" ")) < 4 else "")
        if not m:
            continue
        opener = m.group()
        closer = _CLOSER.get(opener, "\\end" + opener[len("\\begin") :])
        rest = line.lstrip(" ")[len(opener) :]
        if closer == "\\]":
            done = closer in rest
        else:
            done = rest.rstrip().endswith(closer) and len(rest.strip()) > len(closer) - 1
        if not done:
            open_at = no
    return open_at


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
    math_line = open_math_line(lines)
    if math_line is not None:  # a display formula still arriving: shown once it closes
        lines, partial = lines[:math_line], ""
        if not lines:
            return ""
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
