"""Facts markdown-it computes and throws away, kept on its tokens for the streaming renderer.

The streaming renderer (``blocks/``) re-parses only the part of an answer that can still
change, so it needs a few things the parser knows but does not put in its output:

* where each list item's, block quote's and paragraph's *content* starts on its first line
  (to rebuild that container's opening line in a later, partial parse):
  ``meta["content_pos"]``;
* whether each list item is tight and whether it ends with a blank line, exactly as
  markdown-it's list rule decides it (``meta["tight"]``, ``meta["empty_end"]``), because a
  list's tightness depends on items that were settled long ago;
* whether a code fence was closed by a closing fence (``meta["closed"]``): an open fence is
  shown as incomplete and unhighlighted, wherever it is (top level or inside a container);
* for the inline rules that look ahead (code spans, emphasis, links, images), where their
  constructs start and end, but only when a parse asks for it with ``env[INLINE_KEY]``
  (``paragraph.py`` uses that to find where a long paragraph can be cut).

Each observer wraps one rule, calls it unchanged, and only writes token metadata or the
caller's ``env``: the HTML markdown-it renders is the same with or without them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import isWhiteSpace
from markdown_it.rules_block.state_block import StateBlock
from markdown_it.rules_inline.state_inline import StateInline
from mdit_py_plugins.dollarmath.index import is_escaped

from .labels import OPEN, install_label_scan, scan_label

__all__ = ["INLINE_KEY", "InlineFacts", "install"]

INLINE_KEY = "pysse.inline"
_MARK = "_pysse_observed"


class InlineFacts:
    """What the look-ahead inline rules did, in source positions of one inline parse.

    ``spans``: ``(start, end)`` of every code span, link and image, which a cut may not split.
    ``open_runs``: positions where a construct was left open and could still be closed by
    text that has not arrived yet: a backtick run without its closing run, a ``[`` whose
    label has no ``]`` yet (or whose ``](...)`` might still complete). Emphasis delimiters
    are read from the inline state itself (``paragraph.py``); ``delims`` maps a delimiter
    index to the position of its run.
    """

    def __init__(self) -> None:
        self.spans: list[tuple[int, int]] = []
        self.open_runs: list[int] = []
        self.delims: dict[int, int] = {}


def install(md: MarkdownIt) -> MarkdownIt:
    """Install the observers on ``md`` (once; later calls do nothing)."""
    if getattr(md, _MARK, False):
        return md
    _observe_containers(md)
    _observe_fence(md)
    _observe_inline(md)
    install_label_scan(md)
    setattr(md, _MARK, True)
    return md


# -- block level ----------------------------------------------------------------------------------


def _observe_containers(md: MarkdownIt) -> None:
    """Wrap the block tokenizer: list items and block quotes call it for their content, with
    the first line already shifted past the container's marker."""
    block: Any = md.block
    tokenize = block.tokenize

    def observed(state: StateBlock, start: int, end: int) -> None:
        owner = state.tokens[-1] if state.tokens else None
        if owner is None or owner.nesting != 1 or owner.type not in _CONTAINERS:
            tokenize(state, start, end)
            return
        owner.meta["content_pos"] = state.bMarks[start] + state.tShift[start]
        tokenize(state, start, end)
        if owner.type == "list_item_open":
            # What list_block reads right after this call (see markdown-it's rules_block/list).
            owner.meta["tight"] = state.tight
            owner.meta["empty_end"] = state.line - start > 1 and state.isEmpty(state.line - 1)

    block.tokenize = observed


_CONTAINERS = ("list_item_open", "blockquote_open")


def _replace(rules: Any, name: str, wrap: Any) -> None:
    """Wrap rule ``name`` in place, keeping the chains it terminates (``Ruler.at`` would
    reset them)."""
    rule = rules.__rules__[rules.__find__(name)]
    rules.at(name, wrap(rule.fn), {"alt": list(rule.alt)})


def _observe_fence(md: MarkdownIt) -> None:
    _replace(md.block.ruler, "fence", _wrap_fence)
    _replace(md.block.ruler, "paragraph", _wrap_paragraph)


def _wrap_paragraph(paragraph: Any) -> Any:
    def observed(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        n = len(state.tokens)
        pos = state.bMarks[start] + state.tShift[start]
        ok = bool(paragraph(state, start, end, silent))
        if ok and len(state.tokens) > n:
            state.tokens[n].meta["content_pos"] = pos
        return ok

    return observed


def _wrap_fence(fence: Any) -> Any:

    def observed(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        ok = bool(fence(state, start, end, silent))
        if ok and not silent:
            tok = state.tokens[-1]
            last = state.line - 1
            tok.meta["closed"] = last > start and _closes(state, last, tok.markup)
        return ok

    return observed


def _closes(state: StateBlock, line: int, markup: str) -> bool:
    """Whether ``line`` is a closing fence for ``markup`` (the fence rule's own test)."""
    if state.sCount[line] - state.blkIndent >= 4:
        return False
    pos = state.bMarks[line] + state.tShift[line]
    end = state.eMarks[line]
    if pos >= end or state.src[pos] != markup[0]:
        return False
    after = state.skipCharsStr(pos, markup[0])
    return after - pos >= len(markup) and state.skipSpaces(after) >= end


# -- inline level ---------------------------------------------------------------------------------


def _observe_inline(md: MarkdownIt) -> None:
    rules: Any = md.inline.ruler
    for name, wrap in (
        ("backticks", _wrap_backticks),
        ("link", _wrap_link),
        ("image", _wrap_link),
        ("emphasis", _wrap_delims),
        ("strikethrough", _wrap_delims),
        ("math_inline", _wrap_math),  # $…$ and $$…$$ (math.py)
        ("math_inline_paren", _wrap_math),  # \\(…\\)
    ):
        if rules.__find__(name) >= 0:
            _replace(rules, name, wrap)


Rule = Any  # (state: StateInline, silent: bool) -> bool


def _facts(state: StateInline, silent: bool) -> InlineFacts | None:
    """The facts to record into, for a top-level (not inside a link label) real parse."""
    if silent or state.posMax != len(state.src):
        return None
    facts = state.env.get(INLINE_KEY)
    return facts if isinstance(facts, InlineFacts) else None


def _wrap_backticks(rule: Rule) -> Rule:
    def observed(state: StateInline, silent: bool) -> bool:
        facts = _facts(state, silent)
        if facts is None:
            return bool(rule(state, silent))
        start, n = state.pos, len(state.tokens)
        ok = bool(rule(state, silent))
        if ok:
            if len(state.tokens) > n and state.tokens[-1].type == "code_inline":
                facts.spans.append((start, state.pos))
            else:  # a run without a closing run: a later one may close it
                facts.open_runs.append(start)
        return ok

    return observed


def _wrap_span(may_open: Callable[[StateInline, int], bool]) -> Callable[[Rule], Rule]:
    """Observe a rule that makes one span (a link, an image, a formula): where it is, or,
    when it failed, whether more text could still make it one (an open run)."""

    def wrap(rule: Rule) -> Rule:
        def observed(state: StateInline, silent: bool) -> bool:
            facts = _facts(state, silent)
            if facts is None:
                return bool(rule(state, silent))
            start = state.pos
            ok = bool(rule(state, silent))
            if ok:
                facts.spans.append((start, state.pos))
            elif may_open(state, start):
                facts.open_runs.append(start)
            return ok

        return observed

    return wrap


def _may_become_link(state: StateInline, start: int) -> bool:
    """A ``[`` (or ``![``) that did not make a link: could more text still make it one?

    Not if its label is closed by a ``]`` that is not followed by ``(`` (that would be a
    reference link, and references are disabled), nor if a link's label holds a complete
    link (links do not nest). Yes if no ``]`` closes it yet; conservatively yes if a ``](``
    follows (its destination may still be arriving).
    """
    src = state.src
    image = src.startswith("![", start)
    if image:
        start += 1
    elif not src.startswith("[", start):
        return False
    end = _label_end(state, start, nested=image)
    if end is None:
        return True
    return end >= 0 and (end + 1 >= len(src) or src[end + 1] == "(")


def _label_end(state: StateInline, start: int, nested: bool) -> int | None:
    """markdown-it's label scan from ``start`` (a ``[``), telling its two failures apart:
    ``None`` when the text ends before the label does, -1 when a link is inside a link's
    label (``labels.py``, which remembers each label's outcome for the parse)."""
    end = scan_label(state, start, links_allowed=nested)
    return None if end == OPEN else end


def _may_open_math(state: StateInline, start: int) -> bool:
    """An opener whose formula did not parse: could more text still close it?

    ``\\(`` yes (no ``\\)`` follows it yet). A ``$`` (math.py's Pandoc rule) not if a space
    follows it or a digit precedes it, nor if the first ``$`` after it is there and is not
    the last character (the rule's decision is then made); otherwise yes.
    """
    src = state.src
    if src.startswith("\\(", start):
        return True
    if not src.startswith("$", start):
        return False
    after = src[start + 1 : start + 2]
    if not after or after == "$":  # the end, or $$ (conservatively open)
        return True
    if isWhiteSpace(ord(after)) or (start > 0 and src[start - 1].isdigit()):
        return False
    end = src.find("$", start + 1)
    while end > 0 and is_escaped(state, end):  # the rule's own test
        end = src.find("$", end + 1)
    return end < 0 or end + 1 >= len(src)


_wrap_link = _wrap_span(_may_become_link)
_wrap_math = _wrap_span(_may_open_math)


def _wrap_delims(rule: Rule) -> Rule:
    def observed(state: StateInline, silent: bool) -> bool:
        facts = _facts(state, silent)
        if facts is None:
            return bool(rule(state, silent))
        start, n = state.pos, len(state.delimiters)
        ok = bool(rule(state, silent))
        if ok:
            for i in range(n, len(state.delimiters)):
                facts.delims[i] = start
        return ok

    return observed
