"""render/holdback.py: what of an unsettled tail is shown now. Math and task-list rules here;
the general rules are exercised through every prefix of real answers in
test_render_streaming.py."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pysse.render.graphemes import boundary
from pysse.render.holdback import INLINE_MATH_HOLD, hold_back, open_math_line


@pytest.mark.parametrize(
    ("tail", "shown"),
    [
        # an inline formula being written waits for its closing dollar
        ("Euler $e^{i", "Euler "),
        ("Euler $e^{i\\pi}$ is", "Euler $e^{i\\pi}$ is"),
        ("x \\(a+", "x "),
        ("x \\(a\\) y", "x \\(a\\) y"),
        ("inline double $$\\frac{a}", "inline double "),
        # a trailing "$" or "\" waits for the next character
        ("text $", "text "),
        ("text \\", "text "),
        # money is shown at once
        ("It costs $5 and more", "It costs $5 and more"),
        ("$5-$10 each", "$5-$10 each"),
        ("a $ b", "a $ b"),  # a space after the dollar: never math
        # emphasis inside a complete formula is not markup to close
        ("x $a *b$ c", "x $a *b$ c"),
        ("x $a *b$ *c", "x $a *b$ *c*"),
        # task list checkboxes being typed
        ("- [", ""),
        ("- [ ]", ""),
        ("1. [x", ""),
        ("- [x] done", "- [x] done"),
        # display math
        ("Intro\n\n$$\nx^2", "Intro\n"),
        ("Intro\n\n$$\nx^2\n", "Intro\n"),
        ("Intro\n\n$$\nx^2\n$$\n", "Intro\n\n$$\nx^2\n$$"),
        ("Intro\n\n\\[\n\\frac12\n", "Intro\n"),
        ("\\begin{align}\na &= b\n", ""),
        ("\\begin{ali", ""),
        ("$$", ""),
        # a code span's text ending in a run of other length: held, not joined to its closer
        # (shown as "`a```" it was three literal backticks)
        ("`a``", "`a`"),
        ("`a`` b", "`a`` b`"),
    ],
)
def test_math_and_task_list_hold_back(tail: str, shown: str) -> None:
    assert hold_back(tail) == shown


def test_a_floor_inside_a_run_of_markers_does_not_split_it() -> None:
    """A provisionally cut paragraph's floor (``tails.py``) may fall between two ``*`` of one
    run; the half before it taken as text left the other half an opener of its own, and the
    frame showed ``d*`` (a long CJK paragraph, cut provisionally, showed ``***``)."""
    tail = "x a**b**c d**"
    assert hold_back(tail, 4) == hold_back(tail, 3) == "x a**b**c d"


def test_an_open_formula_is_shown_as_text_once_it_is_long_or_spans_lines() -> None:
    long = "a $" + "x" * (INLINE_MATH_HOLD + 5)
    assert hold_back(long) == long
    assert hold_back("a $x +\ny") == "a $x +\ny"


def test_an_unclosed_display_block_is_text_after_a_blank_line() -> None:
    lines = ["Intro", "", "$$", "x", ""]
    assert open_math_line(lines[:4]) == 2
    assert open_math_line(lines) is None
    assert open_math_line(["$$x$$"]) is None
    assert open_math_line(["\\[ a \\]"]) is None
    assert open_math_line(["\\begin{align*}", "a", "\\end{align*}"]) is None
    assert open_math_line(["    $$"]) is None  # indented code


@pytest.mark.parametrize(
    "tail",
    [
        "a \\(x\n" * 20_000,  # openers that never close, on many lines
        "\\(" * 100_000,  # one line of them
        "cost $5 " * 20_000,  # money, every "$" an opener that is no formula
        "x $$y " * 20_000,  # inline display openers that never close
    ],
)
def test_hostile_runs_of_math_openers_are_shown_as_text(tail: str) -> None:
    # Each opener used to search to the end for its closer (quadratic: seconds at this size);
    # a search that found nothing is now remembered. Shown as text, all but what may still
    # become the last formula (at most INLINE_MATH_HOLD characters).
    shown = hold_back(tail)
    assert tail.startswith(shown)
    assert len(shown) >= len(tail.rstrip("\n")) - INLINE_MATH_HOLD


# -- grapheme clusters (graphemes.py) ----------------------------------------------------------

# Clusters of the kinds a cut could split, and plain ones (no markdown syntax: what hold-back
# shows of them is a prefix of what arrived).
CLUSTERS = [
    "a",
    "ب",
    " ",
    "e\u0301",  # e + a combining acute
    "بِ",  # beh + kasra
    "👩\u200d💻",
    "👨\u200d👩\u200d👧",
    "🏳\ufe0f\u200d🌈",
    "🇫🇷",
    "🇯🇵",
    "👍🏽",
    "❤\ufe0f",
    "😀",
]


@given(st.lists(st.sampled_from(CLUSTERS), max_size=10))
def test_the_visible_tail_never_ends_inside_a_cluster(parts: list[str]) -> None:
    """Whatever the network's cut, the tail shown ends between two clusters of the answer:
    a ZWJ sequence, an emoji that may still take a modifier and a flag wait whole. Only a
    letter is shown before its combining marks arrive (they then join it)."""
    text = "x " + "".join(parts)
    bounds = {2}
    for part in parts:
        bounds.add(max(bounds) + len(part))
    for k in range(2, len(text) + 1):
        shown = hold_back(text[:k])
        assert text.startswith(shown)
        end = len(shown)
        assert end in bounds or (end == k and unicodedata.combining(text[k])), (text[:k], shown)


def test_a_paragraph_is_never_cut_inside_a_cluster() -> None:
    assert not boundary("a \u0301b", 2)  # a mark after a space stays with it
    assert not boundary("🇫🇷🇯🇵", 1) and boundary("🇫🇷🇯🇵", 2) and not boundary("🇫🇷🇯🇵", 3)
    assert not boundary("👩\u200d💻", 1) and not boundary("👩\u200d💻", 2)
    assert boundary("ab", 1) and boundary("😀😀", 1)


def test_a_long_paragraph_is_cut_between_clusters() -> None:
    """A mark after a space belongs to the space: the paragraph's cut goes before that word."""
    from pysse.render import StreamingMarkdown
    from pysse.render.paragraph import find_cut

    md = StreamingMarkdown().md
    text = "word " * 80 + "\u0301tail and more"
    cut = find_cut(md, {}, text, len(text) - 9)
    assert cut > 0 and boundary(text, cut), (cut, text[cut - 2 : cut + 2])
