"""Where text may be cut between two frames without splitting what a reader sees as one
character (a grapheme cluster): an emoji ZWJ sequence (👩‍💻), a flag (two regional
indicators), a letter and its combining marks (Arabic harakat, é as e + U+0301).

A cut in the middle shows a different picture for a frame (👩 then 👩‍💻, a lone letter
box for half a flag) or puts a mark on its own. Pyodide has no ``regex`` module (``\\X``), so
this is a small check of the cases that matter, not UAX #29: a cut is never placed before
an extender (a combining mark, ZWJ, a variation selector, a skin-tone modifier, an emoji
tag) nor after a ZWJ, nor between the two regional indicators of a flag.
"""

from __future__ import annotations

import unicodedata

__all__ = ["boundary", "extends", "whole"]

ZWJ = "\u200d"


def extends(c: str) -> bool:
    """Whether ``c`` belongs to the cluster before it (never starts one)."""
    o = ord(c)
    return (
        c == ZWJ
        or 0xFE00 <= o <= 0xFE0F  # variation selectors (U+FE0F: emoji presentation)
        or 0x1F3FB <= o <= 0x1F3FF  # skin-tone modifiers
        or 0xE0020 <= o <= 0xE007F  # emoji tag sequences (subdivision flags)
        or 0xE0100 <= o <= 0xE01EF  # variation selectors supplement
        or unicodedata.combining(c) != 0
        or unicodedata.category(c) in ("Mn", "Me", "Mc")
    )


def _ri(c: str) -> bool:
    return 0x1F1E6 <= ord(c) <= 0x1F1FF


def boundary(text: str, i: int) -> bool:
    """Whether a cut between ``text[:i]`` and ``text[i:]`` splits no cluster."""
    if i <= 0 or i >= len(text):
        return True
    if extends(text[i]) or text[i - 1] == ZWJ:
        return False
    if _ri(text[i]) and _ri(text[i - 1]):
        run = 0  # regional indicators pair from the start of their run
        while i - run - 1 >= 0 and _ri(text[i - run - 1]):
            run += 1
        return run % 2 == 0
    return True


def _pictographic(c: str) -> bool:
    """An emoji that a later skin tone, variation selector or ZWJ may still change (the
    emoji blocks; not ``regex``'s Extended_Pictographic, which Pyodide lacks)."""
    o = ord(c)
    return (0x1F000 <= o <= 0x1FAFF and not _ri(c)) or 0x2600 <= o <= 0x27BF


def whole(text: str) -> str:
    """``text`` without a cluster that may still be arriving at its end: a ZWJ sequence
    whose next part has not come, or an emoji that may still take one (the whole sequence
    waits), or the first half of a flag. A letter's combining marks are not waited for:
    a letter is shown, and its marks join it as they come."""
    end = len(text)
    run = 0
    while run < end and _ri(text[end - run - 1]):
        run += 1
    if run % 2:
        return text[: end - 1]  # half a flag
    start = _last_cluster(text)
    if start < end and (text[-1] == ZWJ or _pictographic(text[start])):
        return text[:start]
    return text


def _last_cluster(text: str) -> int:
    """Where the last cluster of ``text`` starts: its parts (a base and its extenders) joined
    by ZWJs, a trailing ZWJ included. One backward pass over that cluster only."""
    i = len(text)
    if i and text[i - 1] == ZWJ:
        i -= 1
    while i > 0:
        while i > 0 and extends(text[i - 1]) and text[i - 1] != ZWJ:
            i -= 1
        if i == 0:
            break
        i -= 1  # the part's base
        if i > 0 and text[i - 1] == ZWJ:
            i -= 1  # joined to the part before it
            continue
        break
    return i
