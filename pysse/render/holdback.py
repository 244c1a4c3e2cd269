"""Hold-back: the part of an unsettled markdown tail that is safe to show now.

Syntax that is not yet meaningful is held back rather than flashed: a partial line that may
become a fence, a heading, a list marker, a setext underline or a table row; a table header
waiting for its delimiter row; a dangling ``**``/``_``/``~~``/backtick (closed in reverse order
of opening, or held if nothing follows it); a link whose URL is still arriving (shown as its
text); a partial HTML tag; a task list checkbox being typed. Plain text passes at once. Code is
never touched: inside an open fence only a line that may be its closing fence waits, and the
text of a closed fence is not "closed" as if it were inline markup.

Math (``math.py`` has the syntax rules) is held until it closes, so raw LaTeX never flashes:
a display block (``$$``, ``\\[``, ``\\begin{env}``) from its opening line; an inline ``$x`` or
``\\(`` from its opener, while the open span stays on one line and under
``INLINE_MATH_HOLD`` characters. An opening ``$`` followed by a digit is most likely money
(``$5 and more``) and is shown at once; a trailing ``$`` or ``\\`` waits for the next character.
Inline markers inside a complete math span are not emphasis (``$a *b$``).

A cluster still arriving at the end of the tail (an emoji ZWJ sequence, half a flag) waits
until it is whole (``graphemes.py``).

What is shown never changes the blocks: hiding a ``[`` never changes a line's indentation,
and closers go at the end of the last line with text, never onto a blank line after it
(either turned a tight list loose for good); after a blank line nothing is closed.

Linear in the tail: every rule is a single left-to-right scan (no regular expression that can
backtrack), so a hostile tail (``[`` x 100,000, ``<a`` x 100,000 ...) costs what a plain one
of the same length does.
"""

from __future__ import annotations

from .cjk import flanking, is_cjk
from .graphemes import whole
from .math import BLOCK_OPEN

__all__ = ["INLINE_MATH_HOLD", "hold_back", "open_math_line"]

INLINE_MATH_HOLD = 300  # an open inline formula longer than this is shown as text

_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_SETEXT = frozenset("-=*_ ")
_TAG_START = frozenset("/!?")
_RUNS = frozenset("*_~`")  # markers whose meaning is their run's length


def _is_space(c: str) -> bool:
    return c == "" or c.isspace()


# -- block-level rules for the partial (last, incomplete) line ----------------------------------


def _indent(s: str, limit: int = 3) -> int:
    """Leading spaces, at most ``limit``."""
    i = 0
    while i < len(s) and i < limit and s[i] == " ":
        i += 1
    return i


def _lead(s: str) -> str:
    """The leading spaces and tabs (what decides a line's indentation)."""
    return s[: len(s) - len(s.lstrip(" \t"))]


def _run(s: str, i: int, chars: str | frozenset[str]) -> int:
    """The end of the run of ``chars`` starting at ``i``."""
    while i < len(s) and s[i] in chars:
        i += 1
    return i


def _may_become_block(line: str) -> bool:
    """A partial line that may still turn into block syntax, or is only a marker so far."""
    i = _indent(line)
    if i < len(line) and line[i] in "`~":
        j = _run(line, i, line[i])
        if j - i >= 3 or j == len(line):  # a fence line being typed, or a run that may grow
            return True
    if i < len(line) and line[i] == "#":  # a bare heading marker
        j = _run(line, i, "#")
        if j - i <= 6 and (j == len(line) or line[j:].isspace()):
            return True
    rest = line.lstrip()
    if rest and rest[0] in "-*+" and not rest[1:].strip():  # a lone list marker
        return True
    j = 0
    while j < len(rest) and j < 10 and rest[j].isdecimal():
        j += 1
    if 1 <= j <= 9:  # a number that may become an ordered list marker
        k = j + 1 if j < len(rest) and rest[j] in ".)" else j
        if not rest[k:].strip():
            return True
    if all(c in _SETEXT for c in line[i:]):  # setext / thematic break candidate (or spaces)
        return True
    if rest.startswith("|"):  # a table row still arriving
        return True
    if i < len(line) and line[i] == ">" and line[i + 1 :].strip() == "":  # lone quote marker
        return True
    if _checkbox_arriving(rest):
        return True
    t = line[i:]
    if t.startswith(("$$", "\\[", "\\begin{")):  # a display math opener
        return True
    return t[:1] == "\\" and "\\begin".startswith(t)  # ... or the start of one


def _checkbox_arriving(rest: str) -> bool:
    """``- [``, ``1. [x`` ...: a task list checkbox being typed (``rest``: no indent)."""
    if rest[:1] in ("-", "*", "+"):
        j = 1
    else:
        j = 0
        while j < len(rest) and j < 10 and rest[j].isdecimal():
            j += 1
        if not 1 <= j <= 9 or j == len(rest) or rest[j] not in ".)":
            return False
        j += 1
    k = j
    while k < len(rest) and rest[k].isspace():
        k += 1
    if k == j or k == len(rest) or rest[k] != "[":
        return False
    box = rest[k + 1 :].rstrip()
    return box in ("", " ", "x", "X", "]", " ]", "x]", "X]")


def _delim_start(s: str) -> bool:
    """Whether ``s`` may be the start of a table's delimiter row (``|:--|``...)."""
    t = s.lstrip()
    i = 1 if t.startswith(":") else 0
    i = _run(t, i, "-")
    while i < len(t) and t[i].isspace():
        i += 1
    return i == len(t) or t[i] == "|"


def _inline_arriving(s: str) -> str:
    return _link_text_arriving(_link_url_arriving(_without_partial_tag(s)))


def _without_partial_tag(s: str) -> str:
    """Drop a trailing ``<tag...`` that has no ``>`` yet (or a lone ``<`` at the end)."""
    start = s.rfind(">") + 1
    i = s.find("<", start)
    while i != -1:
        if i + 1 == len(s) or (s[i + 1].isalpha() and s[i + 1].isascii()) or s[i + 1] in _TAG_START:
            return s[:i]
        i = s.find("<", i + 1)
    return s


def _link_url_arriving(s: str) -> str:
    """``[text](url-so-far`` at the end becomes ``text`` (the first ``[`` whose first ``]``
    is followed by ``(`` and no ``)`` after it)."""
    if "](" not in s:
        return s
    floor = s.rfind(")") + 1  # the "(" must come after the last ")"
    i = s.find("[")
    while i != -1:
        close = s.find("]", i + 1)
        if close == -1:
            return s
        if close + 1 < len(s) and s[close + 1] == "(" and close + 1 >= floor:
            start = i - 1 if i and s[i - 1] == "!" else i
            return s[:start] + s[i + 1 : close]
        i = s.find("[", close + 1)  # every [ before this ] shares this first ]
    return s


def _link_text_arriving(s: str) -> str:
    """``[text-so-far`` at the end becomes ``text-so-far`` (the first ``[`` after the last
    ``]``)."""
    i = s.find("[", s.rfind("]") + 1)
    if i == -1:
        return s
    start = i - 1 if i and s[i - 1] == "!" else i
    return s[:start] + s[i + 1 :]


# -- inline markers ----------------------------------------------------------------------------


def _close_inline(s: str) -> str:
    """Close dangling inline markers at the end of ``s`` (reverse order of opening), or hold
    them back when nothing follows them yet."""
    stack: list[tuple[str, int]] = []  # (marker, position)
    where: dict[str, list[int]] = {}  # marker -> its indexes in ``stack``, for O(1) matching
    math = _MathScan(s)
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c == "\\":
            if i + 1 == n:
                return _close_stack(s[:i], stack)  # may become \( : wait for the next char
            if s[i + 1] == "(":
                close = math.paren_close(i + 2)
                if close != -1:
                    i = close + 2  # a complete \(…\): its content is not markup
                    continue
                if math.hold(i):
                    return _close_stack(s[:i], stack)
            i += 2
            continue
        if c == "$":
            end = math.end(i)
            if end is _HOLD:
                return _close_stack(s[:i], stack)
            i = end if isinstance(end, int) else i + 1
            continue
        if c == "`":
            j = _run(s, i, "`")
            run = s[i:j]
            close = s.find(run, j)
            while close != -1 and (s[close + len(run) : close + len(run) + 1] == "`"):
                close = s.find(run, close + len(run) + 1)
            if close == -1:
                if j == n:
                    return _close_stack(s[:i], stack)  # a bare trailing backtick run: hold it
                # Close the code span first; a run of another length at the end is its text,
                # held until more follows (the closer would join it: `a`` shown `a```).
                end = len(s.rstrip("`"))
                return _close_stack(s[:end] + run, stack)
            i = close + len(run)
            continue
        if c in "*_~":
            j = _run(s, i, c)
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
            if is_cjk(prev or " ") or is_cjk(nxt):  # CJK puts no space between words (cjk.py)
                clean_open, right = flanking(s, i, j, c != "_")
            at = where.get(run)
            if right and at:
                cut = at[-1]  # the innermost opener of this kind; everything above it goes
                for marker, _ in stack[cut:]:
                    where[marker].pop()
                del stack[cut:]
            elif clean_open:
                where.setdefault(run, []).append(len(stack))
                stack.append((run, i))
            i = j
            continue
        i += 1
    return _close_stack(s, stack)


_HOLD = object()


class _MathScan:
    """Where inline math in ``s`` closes, as dollarmath and texmath decide (``math.py``), in
    O(len(s)) over a whole scan: a search that found no closer is remembered, so a hostile
    run of openers (``\\(`` x 100,000) does not search to the end once per opener."""

    def __init__(self, s: str) -> None:
        self.s = s
        self.no_paren_from = len(s) + 1  # no "\\)" at or after this index
        self.no_closer_from = {"$": len(s) + 1, "$$": len(s) + 1}
        self.last_newline = s.rfind("\n")

    def _find(self, what: str, start: int, none_from: int) -> int:
        return -1 if start >= none_from else self.s.find(what, start)

    def paren_close(self, start: int) -> int:
        at = self._find("\\)", start, self.no_paren_from)
        if at == -1:
            self.no_paren_from = min(self.no_paren_from, start)
        return at

    def hold(self, i: int) -> bool:
        """Hold an open formula starting at ``i``: while it is on one line and short."""
        return self.last_newline < i and len(self.s) - i <= INLINE_MATH_HOLD

    def end(self, i: int) -> int | object | None:
        """At a ``$`` (``s[i]``): the index after a complete inline formula, ``_HOLD`` to
        hold back from ``i``, or None when this ``$`` is text."""
        s, n = self.s, len(self.s)
        double = s.startswith("$$", i)
        start = i + (2 if double else 1)
        if start >= n:
            return _HOLD  # "$" or "$$" at the very end: math, money or nothing yet
        if i and s[i - 1].isdigit():
            return None
        if not double and s[start].isspace():
            return None
        marker = "$$" if double else "$"
        j = start
        while True:
            j = self._find(marker, j, self.no_closer_from[marker])
            if j == -1:
                self.no_closer_from[marker] = min(self.no_closer_from[marker], start)
                # Open: money ("$5 and"), shown; a formula being written, held.
                if not double and s[start].isdigit():
                    return None
                return _HOLD if self.hold(i) else None
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


# -- the whole tail ------------------------------------------------------------------------------


def _fences(lines: list[str]) -> tuple[int | None, int]:
    """The line of a top-level fence left open at the end (or None), and the last line that
    closed one (-1 if none)."""
    fence: tuple[str, int, int] | None = None  # (char, length, line)
    closed = -1
    for no, line in enumerate(lines):
        i = _indent(line)
        if i == len(line) or line[i] not in "`~":
            continue
        j = _run(line, i, line[i])
        if j - i < 3:
            continue
        if fence is None:
            if not (line[i] == "`" and "`" in line[j:]):
                fence = (line[i], j - i, no)
        elif line[i] == fence[0] and j - i >= fence[1] and not line[j:].strip():
            fence = None
            closed = no
    return (fence[2] if fence else None), closed


_CLOSER = {"$$": "$$", "\\[": "\\]"}


def open_math_line(lines: list[str]) -> int | None:
    """The index of a display math block (``$$``, ``\\[``, ``\\begin{env}``) left open at the
    end of ``lines`` (complete lines), if any. A blank line ends an unclosed one: from there
    on it is text (``math.py``). Linear: one anchored match per line."""
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


def hold_back(tail: str, floor: int = 0) -> str:
    """The part of the unsettled tail that is safe to show now (see module docstring).

    ``floor``: inline syntax before this position is taken as it stands, a construct still
    open there staying open (literal text). A provisionally cut paragraph (``paragraph.py``)
    passes one, so a stray ``[`` or ``**`` does not keep everything after it from settling."""
    if not tail:
        return tail
    while 0 < floor < len(tail) and tail[floor] in _RUNS and tail[floor - 1] == tail[floor]:
        floor -= 1  # not inside a run of markers: half a ``**`` taken as text showed ``***``
    lines = tail.split("\n")
    partial = lines.pop()  # "" when the tail ends with a line end
    offset = len(tail) - len(partial)  # where the partial line starts
    # A ZWJ sequence or a flag still arriving waits whole (graphemes.py): shown cut, it would
    # be another picture for a frame.
    partial = whole(partial)
    fence_line, closed = _fences(lines)
    if fence_line is not None:
        i = _indent(partial)
        if i < len(partial) and partial[i] in "`~":
            partial = ""  # may be the closing fence
        return "\n".join([*lines, partial]) if partial else "\n".join(lines) + "\n"
    math_line = open_math_line(lines)
    if math_line is not None:  # a display formula still arriving: shown once it closes
        lines, partial = lines[:math_line], ""
        if not lines:
            return ""
    # (and one whose end is only inline markers, which the closers below would hold: "- ~"
    # shown as "-" is a paragraph's text, and a list item once "~~" comes)
    if partial and (_may_become_block(partial) or _may_become_block(partial.rstrip("*_~"))):
        partial = ""
    if partial and "|" in partial and lines and "|" in lines[-1]:
        partial = ""  # a table row is shown only when complete
    # A complete line with pipes that does not continue a table may be a table header: it
    # waits for the next line, which decides (a delimiter row makes it a table).
    if (
        lines
        and "|" in lines[-1]
        and not (len(lines) >= 2 and "|" in lines[-2])
        and (not partial or _delim_start(partial))
    ):
        lines.pop()
        partial = ""
    if partial:
        keep = max(0, floor - offset)
        shown = partial[:keep] + _inline_arriving(partial[keep:])
        # Not when that changes the line's indentation ("[  x" shown as "  x" would be a
        # continuation of a list item, and make its list loose for good).
        if _lead(shown) == _lead(partial) or not shown.strip():
            partial = shown
    body = "\n".join([*lines, partial]) if partial else "\n".join(lines)
    # Inline markers: only within the last block (after the last blank line, which may be
    # the last complete line, or hold spaces), not in code.
    cut, at = -1, 0
    for line in lines:
        if not line.strip(" \t"):
            cut = at + len(line) - 1  # head ends with this line's line feed
        at += len(line) + 1
    if closed >= 0:  # nor in the text of a fence closed before it
        cut = max(cut, sum(len(line) + 1 for line in lines[: closed + 1]) - 2)
    cut = max(cut, min(floor, len(body)) - 2)
    head, last = (body[: cut + 2], body[cut + 2 :]) if cut >= 0 else ("", body)
    if last and not last.startswith("    ") and not last.startswith("\t"):
        # Closers go at the end of the last line with text: appended to the line after it
        # they would make that line text (a list item's continuation, its list loose).
        end = last.find("\n", len(last.rstrip(" \t\n")))
        end = len(last) if end < 0 else end
        last = _close_inline(last[:end]) + last[end:]
    return head + last
