"""The frame budget: how much work one ``StreamingMarkdown.update()`` may do, in *cost units*.

A page calls ``update()`` once per animation frame, on the main thread: at 4x CPU (a phone)
a frame has ~10 ms to spare, so an update must stay at a few ms however the text arrives
(24 characters a frame, or the whole answer in one append). Time cannot be the measure
(tests must be able to assert it, and a loaded machine would change the result), so work is
counted in units that track what it costs to parse and render, one unit being what a plain
character costs (~0.012 µs of CPython, ~2x that in Pyodide):

* markdown text: :func:`cost`, the characters weighted by :data:`WEIGHTS` (a line, a
  character at which markdown-it's inline parser tries its rules, a table cell, math),
  measured per character class (``python -m bench.bench_frames costs``); like
  ``paragraph.weight``, which decides when a paragraph is opened and cut, with the line
  and the other classes measured;
* code being highlighted: ``HIGHLIGHT_WEIGHT`` units per character (``highlight.py``).

``BUDGET`` is chosen from measurements (``docs/benchmarks.md``, "Frame budget"): the
per-update cost at the budget in CPython and in Pyodide, and the worst update over the
answer shapes.
"""

from __future__ import annotations

import re

__all__ = ["BUDGET", "HIGHLIGHT_WEIGHT", "WEIGHTS", "Budget", "cost", "prefix_within"]

BUDGET = 40_000  # units per update (see the module docstring and docs/benchmarks.md)

# Units per character, measured (CPython, markdown-it-py 4.3: ``python -m bench.bench_frames
# costs``): a plain character is ~0.012 µs. At each of markdown-it's inline rule characters
# the inline parser stops and tries every rule (~300 plain characters; emphasis delimiters
# are balanced afterwards, ~700-900); "[" runs the link rule and its label scan, and "(" a
# link's destination; a line runs the block rules and makes tokens (1,100-3,000: a
# paragraph's line, a list item, a table row); a table cell is parsed and rendered on its
# own (~1,000 per "|"); "$" opens math, whose conversion (latex2mathml) costs ~40 µs a
# formula and ~5 µs a character, and "\\" starts a TeX command.
WEIGHTS: dict[str, int] = {
    **dict.fromkeys("!#%&+-:<=>@]^`{}", 300),
    "*": 900,
    "_": 700,
    "~": 450,
    "[": 1500,
    "(": 400,
    "\\": 400,
    "$": 2000,
    "|": 1000,
    "\n": 2500,
}
HIGHLIGHT_WEIGHT = 300  # per character of code: pygments' python lexer and formatter

_COSTLY = re.compile("[" + re.escape("".join(WEIGHTS)) + "]")
_EXTRA = [(c, w - 1) for c, w in WEIGHTS.items()]


def cost(text: str) -> int:
    """What parsing and rendering ``text`` as markdown costs, in units."""
    return len(text) + sum(w * text.count(c) for c, w in _EXTRA)


def prefix_within(text: str, units: int, start: int = 0) -> int:
    """The end of the longest slice ``text[start:end]`` that costs at most ``units``.
    Linear in the slice (every character costs at least one unit, so it is at most ``units``
    long), with one Python step per costly character only."""
    if units <= 0:
        return start
    window_end = min(len(text), start + units)
    spent, pos = 0, start
    for m in _COSTLY.finditer(text, start, window_end):
        i = m.start()
        plain = i - pos
        if spent + plain >= units:
            return pos + (units - spent)
        spent += plain + WEIGHTS[text[i]]
        if spent > units:
            return i
        pos = i + 1
    return min(window_end, pos + (units - spent))


class Budget:
    """The units one update may still spend (``None``: no limit, as in ``finish()``)."""

    def __init__(self, units: int | None) -> None:
        self.left = units
        self.spent = 0

    @property
    def limited(self) -> bool:
        return self.left is not None

    def spend(self, units: int) -> None:
        self.spent += units
        if self.left is not None:
            self.left -= units

    def exhausted(self) -> bool:
        return self.left is not None and self.left <= 0

    def room(self) -> int | None:
        """Units left (at least 0), or None without a limit."""
        return None if self.left is None else max(0, self.left)
