"""Emphasis next to Chinese, Japanese and Korean text: ``**“强调”**后`` is strong, as its writer
means it.

CommonMark decides whether a ``*`` run may open or close emphasis from the characters on its
two sides, and treats full-width punctuation (``“”「」：。``) like ASCII punctuation: a closing
``**`` after ``”`` and before ``后`` is not "right-flanking", so ``**“强调”**后`` stays literal
asterisks. Chinese and Japanese put no spaces between words, so that case is everywhere. The
CommonMark "CJK-friendly" amendment (https://github.com/tats-u/markdown-cjk-friendly, by a
CommonMark contributor) fixes it: when the character on either side is CJK, a ``*`` or ``~``
run may open or close as if that character were punctuation. Text without CJK next to a run
parses exactly as before; ``_`` is unchanged (it is used inside identifiers).

This is a port of that project's markdown-it plugin (``markdown-it-cjk-friendly``, MIT), not
a dependency on a Python one: ``mdit-py-cjk-friendly`` 0.3.0, the only one on PyPI, requires
``markdown-it-py<4`` (pip refuses it beside the 4.3 the page ships), replaces
``StateInline.scanDelims`` on the class, and applies its own simplified rule (to ``_`` too).

How it is wired: ``StateInline`` has slots (no method of one's own per instance) and is made
in three places (markdown-it's parser, ``paragraph.find_cuts``, ``sliced.SlicedInline``);
replacing ``scanDelims`` on the class would change every markdown-it in the process. Instead
the ``emphasis`` and ``strikethrough`` rules are wrapped, and the delimiters a rule has
just pushed get the CJK-friendly ``open``/``close``. Every parse of the same ``md`` (the
streaming renderer's pieces and tail, the one-shot render) sees the same flanking.

Which characters are CJK (``is_cjk``), as the plugin has it: East Asian Width F, H or W that
is not an emoji (W covers emoji too), Hangul jamo of width N; an ambiguous-width character
(``“”‘’``, ``…``) is not, except a quotation mark followed by the standardized variation
selector U+FE01 that asks for its full-width form. A non-emoji variation selector after a
character is looked through (``葛󠄀`` with an ideographic variation selector is CJK).
"""

from __future__ import annotations

import unicodedata
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import isMdAsciiPunct, isPunctChar, isWhiteSpace

__all__ = ["flanking", "install_cjk", "is_cjk"]

# Emoji_Presentation (Unicode emoji-data) among the BMP's wide symbols; in U+1F000-U+1FAFF every
# wide character is one, except in the enclosed ideographic supplement, where only these are.
_EMOJI_BMP = frozenset(
    [
        *(0x231A, 0x231B, 0x23E9, 0x23EA, 0x23EB, 0x23EC, 0x23F0, 0x23F3, 0x25FD, 0x25FE),
        *(0x2614, 0x2615, *range(0x2648, 0x2654), 0x267F, 0x2693, 0x26A1, 0x26AA, 0x26AB),
        *(0x26BD, 0x26BE, 0x26C4, 0x26C5, 0x26CE, 0x26D4, 0x26EA, 0x26F2, 0x26F3, 0x26F5),
        *(0x26FA, 0x26FD, 0x2705, 0x270A, 0x270B, 0x2728, 0x274C, 0x274E, 0x2753, 0x2754),
        *(0x2755, 0x2757, 0x2795, 0x2796, 0x2797, 0x27B0, 0x27BF, 0x2B1B, 0x2B1C, 0x2B50),
        0x2B55,
    ]
)
_EMOJI_ENCLOSED = frozenset(
    [
        0x1F201,
        0x1F21A,
        0x1F22F,
        *range(0x1F232, 0x1F237),
        0x1F238,
        0x1F239,
        0x1F23A,
        0x1F250,
        0x1F251,
    ]
)
_QUOTES = frozenset("‘’“”")


def _emoji(uc: int) -> bool:
    """Whether a wide character is an emoji (Emoji_Presentation), not CJK."""
    if 0x1F200 <= uc <= 0x1F2FF:
        return uc in _EMOJI_ENCLOSED
    return uc in _EMOJI_BMP or 0x1F000 <= uc <= 0x1FAFF


def _cjk_base(ch: str) -> bool | None:
    """True or False; None for an ambiguous-width character (the caller decides)."""
    uc = ord(ch)
    if uc < 0x1100:
        return False
    width = unicodedata.east_asian_width(ch)
    if width in ("F", "H"):
        return True
    if width == "W":
        return not _emoji(uc)
    if width == "A":
        return None
    if width == "N":  # Hangul jamo the table leaves neutral (jungseong, jongseong)
        return 0x1160 <= uc <= 0x11FF or 0xD7B0 <= uc <= 0xD7FF
    return False


def is_cjk(ch: str) -> bool:
    """Whether the character ``ch`` is CJK for emphasis flanking (see the module docstring)."""
    return bool(_cjk_base(ch))


def _previous_cjk(ch: str) -> bool:
    base = _cjk_base(ch)
    return base if base is not None else 0xE0100 <= ord(ch) <= 0xE01EF  # an ideographic VS


def _general_vs(ch: str) -> bool:
    return 0xFE00 <= ord(ch) <= 0xFE0E  # variation selectors, not the emoji one (U+FE0F)


def _punct(ch: str) -> bool:
    return isMdAsciiPunct(ord(ch)) or isPunctChar(ch)


def flanking(
    src: str, start: int, end: int, can_split_word: bool, limit: int | None = None
) -> tuple[bool, bool]:
    """``(can_open, can_close)`` for the run of delimiters ``src[start:end]`` in text that ends
    at ``limit`` (``len(src)`` unless given): ``StateInline.scanDelims`` with the CJK-friendly
    rule (``can_split_word``: the marker is ``*`` or ``~``)."""
    last = src[start - 1] if start > 0 else " "
    last_main = last
    two_back: str | None = None
    if _general_vs(last):
        two_back = src[start - 2] if start > 1 else " "
        if unicodedata.category(two_back) != "Zs":
            last_main = two_back
    nxt = src[end] if end < (len(src) if limit is None else limit) else " "
    last_space = isWhiteSpace(ord(last_main))
    next_space = isWhiteSpace(ord(nxt))
    if last_space or next_space:
        return not next_space, not last_space
    last_punct = _punct(last_main)
    next_punct = _punct(nxt)
    left, right = last_punct, next_punct  # `_`: opens only after, closes only before one
    if can_split_word:  # `*` and `~`
        if two_back is not None:
            base = _cjk_base(two_back)
            previous = base if base is not None else last == "\ufe01" and two_back in _QUOTES
        else:
            previous = _previous_cjk(last)
        either = bool(_cjk_base(nxt)) or previous
        left = left or either or not next_punct
        right = right or either or not last_punct
    return left, right


def _wrap(rule: Any) -> Any:
    def cjk_friendly(state: Any, silent: bool) -> bool:
        start, n = state.pos, len(state.delimiters)
        ok = bool(rule(state, silent))
        if ok and len(state.delimiters) > n:
            marker = state.src[start]
            end = state.pos  # the rule consumed the whole run
            can_open, can_close = flanking(state.src, start, end, marker != "_", state.posMax)
            for d in state.delimiters[n:]:
                d.open, d.close = can_open, can_close
        return ok

    return cjk_friendly


def install_cjk(md: MarkdownIt) -> None:
    """Wrap ``md``'s emphasis and strikethrough rules with the CJK-friendly flanking."""
    rules: Any = md.inline.ruler
    for name in ("emphasis", "strikethrough"):
        at = rules.__find__(name)
        if at >= 0:
            rule = rules.__rules__[at]
            rules.at(name, _wrap(rule.fn), {"alt": list(rule.alt)})
