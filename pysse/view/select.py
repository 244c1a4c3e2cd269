"""CSS selectors for the page's model DOM (``dom.py``): the subset the page's Python uses.

Compound selectors (``tag``, ``#id``, ``.class``, ``[attr]``, ``[attr=value]`` with the value
bare or quoted) joined by descendant (space) or child (``>``) combinators, and selector lists
(``a, b``). Anything else is refused when the selector is compiled, so a selector the model
cannot match fails loudly in CPython tests instead of matching nothing in the page.

A compiled selector is matched right to left, as browsers do: the last compound against the
element, then its combinator walks up the ancestors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Protocol

__all__ = ["Matchable", "Selector", "SelectorError", "compile_selector"]


class SelectorError(ValueError):
    """A selector outside the supported subset (the message quotes it)."""


class Matchable(Protocol):
    """What matching needs of an element."""

    @property
    def tag(self) -> str: ...
    @property
    def attrs(self) -> dict[str, str]: ...
    @property
    def parent_element(self) -> Matchable | None: ...


@dataclass(frozen=True)
class _Compound:
    tag: str | None = None
    attrs: tuple[tuple[str, str | None], ...] = ()  # (name, value or None for presence)
    classes: tuple[str, ...] = ()

    def matches(self, el: Matchable) -> bool:
        if self.tag is not None and el.tag != self.tag:
            return False
        attrs = el.attrs
        for name, value in self.attrs:
            got = attrs.get(name)
            if got is None or (value is not None and got != value):
                return False
        if self.classes:
            have = attrs.get("class", "").split()
            if any(c not in have for c in self.classes):
                return False
        return True


@dataclass(frozen=True)
class _Complex:
    """Compounds left to right, with the combinator before each (the first's is "")."""

    parts: tuple[tuple[str, _Compound], ...] = field(default_factory=tuple)

    def matches(self, el: Matchable) -> bool:
        return self._match_at(el, len(self.parts) - 1)

    def _match_at(self, el: Matchable, i: int) -> bool:
        combinator, compound = self.parts[i]
        if not compound.matches(el):
            return False
        if i == 0:
            return True
        up = el.parent_element
        if combinator == ">":
            return up is not None and self._match_at(up, i - 1)
        while up is not None:  # descendant: any ancestor
            if self._match_at(up, i - 1):
                return True
            up = up.parent_element
        return False


@dataclass(frozen=True)
class Selector:
    """A compiled selector list: ``matches(el)`` if any of its selectors does."""

    text: str
    options: tuple[_Complex, ...]

    def matches(self, el: Matchable) -> bool:
        return any(o.matches(el) for o in self.options)


_TOKEN = re.compile(
    r"""\s*(?:
      (?P<comb>>)
    | (?P<tag>[a-zA-Z][a-zA-Z0-9-]*|\*)
    | \#(?P<id>[\w-]+)
    | \.(?P<cls>[\w-]+)
    | \[\s*(?P<attr>[\w-]+)\s*(?:=\s*(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<bare>[\w-]+)))?\s*\]
    )""",
    re.VERBOSE,
)


def _compile_one(text: str) -> _Complex:
    parts: list[tuple[str, _Compound]] = []
    combinator = ""
    tag: str | None = None
    attrs: list[tuple[str, str | None]] = []
    classes: list[str] = []
    pos = 0
    pending = False  # a compound is being built

    def close() -> None:
        nonlocal tag, attrs, classes, pending, combinator
        if pending:
            parts.append((combinator, _Compound(tag, tuple(attrs), tuple(classes))))
        tag, attrs, classes, pending, combinator = None, [], [], False, " "

    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise SelectorError(f"unsupported selector {text!r} (at {text[pos:]!r})")
        gap = m.group(0)[: len(m.group(0)) - len(m.group(0).lstrip())]
        if gap and pending and not m.group("comb"):
            close()  # whitespace between compounds: a descendant combinator
        if m.group("comb"):
            close()
            combinator = ">"
        elif m.group("tag"):
            if pending:
                raise SelectorError(f"unsupported selector {text!r}: a tag inside a compound")
            tag = None if m.group("tag") == "*" else m.group("tag").lower()
            pending = True
        elif m.group("id"):
            attrs.append(("id", m.group("id")))
            pending = True
        elif m.group("cls"):
            classes.append(m.group("cls"))
            pending = True
        else:
            value = m.group("dq") if m.group("dq") is not None else m.group("sq")
            if value is None:
                value = m.group("bare")
            attrs.append((m.group("attr"), value))
            pending = True
        pos = m.end()
    close()
    if not parts:
        raise SelectorError(f"empty selector {text!r}")
    return _Complex(tuple(parts))


@lru_cache(maxsize=512)
def compile_selector(text: str) -> Selector:
    """``text`` compiled (cached: the page uses a few dozen selectors, over and over)."""
    return Selector(text, tuple(_compile_one(part) for part in _split_list(text)))


def _split_list(text: str) -> list[str]:
    """A selector list split at its top-level commas (never inside quotes or brackets)."""
    out, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return out
