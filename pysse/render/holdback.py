"""Hold-back: the part of an unsettled markdown tail that is safe to show now.

Syntax that is not yet meaningful is held back rather than flashed: a partial line that may
become a fence, a heading, a list marker, a setext underline or a table row; a table header
waiting for its delimiter row; a dangling ``**``/``_``/``~~``/backtick (closed in reverse order
of opening, or held if nothing follows it); a link whose URL is still arriving (shown as its
text); a partial HTML tag. Plain text passes at once.
"""

from __future__ import annotations

import re

from .markdown import open_fence_line

__all__ = ["hold_back"]

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
