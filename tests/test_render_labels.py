"""render/labels.py: the remembering link-label scan gives exactly what markdown-it's own
``parseLinkLabel`` gives (HTML, and the open/nested distinction observe.py reads), on random
bracket-heavy text including nesting past ``maxNesting``; and a paragraph of brackets costs
about what any other paragraph of special characters does (counted in skipToken calls, not
timed)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import markdown_it.helpers
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it.rules_inline.state_inline import StateInline

from pysse.render import observe
from pysse.render.labels import NESTED, OPEN
from pysse.render.markdown import make_markdown
from pysse.render.observe import INLINE_KEY, InlineFacts


def stock_scan(state: StateInline, start: int, links_allowed: bool) -> int:
    """markdown-it's parseLinkLabel loop, unchanged but for telling its failures apart."""
    old, level = state.pos, 1
    state.pos = start + 1
    try:
        while state.pos < state.posMax:
            marker = state.src[state.pos]
            if marker == "]":
                level -= 1
                if level == 0:
                    return state.pos
            prev = state.pos
            state.md.inline.skipToken(state)
            if marker == "[":
                if prev == state.pos - 1:
                    level += 1
                elif not links_allowed:
                    return NESTED
        return OPEN
    finally:
        state.pos = old


@contextmanager
def stock() -> Iterator[None]:
    """markdown-it's own helpers, and the stock loop for the observer."""
    with mock.patch.object(observe, "scan_label", stock_scan):
        yield


def parse(md: object, text: str) -> tuple[str, list[int], list[tuple[int, int]]]:
    facts = InlineFacts()
    env = {INLINE_KEY: facts}
    html = md.render(text, env)  # type: ignore[attr-defined]
    return html, facts.open_runs, facts.spans


OURS = make_markdown()
STOCK = make_markdown()
STOCK.helpers = markdown_it.helpers  # type: ignore[assignment]

PIECES = st.sampled_from(
    [
        *("[", "]", "![", "](", ")", "(", "a", " ", "`", "*", "\\[", "<http://x.example>", "\n"),
        *("[a](https://x.example)", "![i](https://x.example/p)", "[x]", "](u)", "$", "\\("),
    ]
)
BRACKETS = st.builds(
    lambda n, tail: "[" * n + tail, st.integers(90, 130), st.sampled_from(["", "]", "](u)", "a]"])
)
TEXT = st.lists(st.one_of(PIECES, BRACKETS), max_size=60).map("".join)


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_same_as_markdown_it(text: str) -> None:
    ours = parse(OURS, text)
    with stock():
        expected = parse(STOCK, text)
    assert ours == expected


def test_nesting_past_the_limit_and_each_failure() -> None:
    for text in [
        "[" * 101 + "foo]()",  # markdown-it's documented quirk at maxNesting + 1
        "[" * 150 + "]" * 150 + "(u)",
        "![" + "[a](u)" * 3 + "](v)",  # an image label may hold links
        "[a [b](u) c](v)",  # a link's may not
        "[" * 3000 + "x" + "]" * 10,
        "![" * 2000,
    ]:
        ours = parse(OURS, text)
        with stock():
            assert ours == parse(STOCK, text), text[:40]


def _skips(md: object, text: str) -> int:
    """How many times markdown-it's skipToken runs while rendering ``text``."""
    inline: Any = md.inline  # type: ignore[attr-defined]
    calls = 0
    skip = type(inline).skipToken

    def counted(state: StateInline) -> None:
        nonlocal calls
        calls += 1
        skip(inline, state)

    inline.skipToken = counted
    try:
        md.render(text)  # type: ignore[attr-defined]
    finally:
        del inline.skipToken
    return calls


def test_a_bracket_costs_a_constant() -> None:
    """markdown-it walks each unclosed ``[`` down to maxNesting (~100 steps per bracket);
    ours steps over what it has seen: a few steps per bracket, the same at 4x the length."""
    for unit in ["[", "![", "[a", "[*"]:
        small, big = _skips(OURS, unit * 1000), _skips(OURS, unit * 4000)
        assert big <= 4 * small * 1.05 + 50, (unit, small, big)
        assert big <= 4 * 4000, (unit, big)
        with stock():
            assert _skips(STOCK, unit * 4000) > 10 * big, unit
