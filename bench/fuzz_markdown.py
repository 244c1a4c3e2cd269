"""Structure-aware fuzzing of streaming markdown: answers built from the constructs a model
(or an attacker steering one) writes: fences whose info string is any lexer alias pygments
knows, with bodies that make regular expressions backtrack; nested brackets and emphasis;
lists, quotes and tables nested in each other with lazy lines and odd indentation; very long
lines; CR, NUL, tabs and odd unicode.

Each answer is streamed through ``StreamingMarkdown`` in random deltas, one update per frame
within the frame budget (``render/budget.py``), and must equal the one-shot render, and emit
nothing unsafe. ``bench/fuzz.py`` runs it as one of its
``TARGETS``, with a per-input time budget: an input that takes longer (a slow lexer past the
allow-list, a quadratic loop) fails the run and is saved.
"""

from __future__ import annotations

import math
import random
import re
import time
from collections.abc import Callable
from functools import cache
from html.parser import HTMLParser

from pysse.render import StreamingMarkdown, Update, render
from pysse.render.budget import HIGHLIGHT_WEIGHT, WEIGHTS, cost

MAX_CHARS = 30_000  # an answer's size; nesting multiplies the generator's output
MAX_UPDATES = 1000  # frames while the answer arrives (see one())
# One update, CPU time in CPython: the frame budget holds most to a few ms; what it cannot
# slice (one long line that may still become a table header, settled at once when the next
# line decides; a long formula's conversion) measured up to 0.17 s; the quadratic cases
# this is for took 1.3 s per update and more.
FRAME_BUDGET = 1.0


@cache
def lexer_aliases() -> list[str]:
    """Every alias of every lexer pygments knows (~1,000), plus a few that are not."""
    try:
        from pygments.lexers import get_all_lexers
    except ImportError:  # pragma: no cover - pygments is optional
        return ["python", "zeek"]
    names = sorted({a for _, aliases, _, _ in get_all_lexers() for a in aliases})
    return [*names, "", "PYTHON", "python {.x}", "js`", "c++ title=x", "a b c", "\u202epy"]


# Bodies that made some lexers backtrack catastrophically (issue 16), and their kin.
HOSTILE_BODIES = [
    lambda r: "0" * r.choice([100, 700, 3000]) + "x",
    lambda r: "a" * r.choice([100, 400, 2000]) + "\n",
    lambda r: "execute " + "a" * r.choice([100, 390]) + "\n",
    lambda r: "/*" + " " * r.choice([100, 1000]) + "*",
    lambda r: '"' + "\\" * r.choice([99, 1000]),
    lambda r: "<" * r.choice([50, 500]) + "a",
    lambda r: "(" * r.choice([50, 500]) + "x" + ")" * r.choice([0, 50]),
    lambda r: "$" + "{" * r.choice([50, 500]),
    lambda r: "-" * r.choice([100, 1000]) + ">",
    lambda r: "".join(
        r.choice("0x.e+-_'\"`\\/*#{}()[]<>=: \t\n") for _ in range(r.randint(1, 300))
    ),
    lambda r: "def f(x):\n    return x\n" * r.randint(1, 40),
]
INLINE = [
    "word",
    "**bold",
    "**",
    "*",
    "_",
    "__x__",
    "`",
    "``",
    "~~",
    "[",
    "]",
    "](",
    "[a](https://e.example/x)",
    "![i](https://tracker.invalid/p.gif)",
    "[x](javascript:alert(1))",
    "<script>",
    "<img src=x onerror=alert(1)>",
    "&amp;",
    "&#106;avascript:",
    "\\",
    "|",
    "日本🙂",
    "\x00",
    "\t",
    "\r",
    "\u2028",
    "http://e.example/",
]
MARKERS = ["- ", "* ", "+ ", "1. ", "2) ", "10. ", "-", "> ", ">", "    ", "  ", "\t", "# ", "## "]


def inline(rnd: random.Random) -> str:
    kind = rnd.randrange(10)
    if kind == 0:
        return "[" * rnd.choice([10, 200, 5000]) + "]" * rnd.choice([0, 1, 10]) + "x"
    if kind == 1:
        return "*" * rnd.choice([3, 50, 1000]) + "x"
    if kind == 2:
        return " ".join(rnd.choice(INLINE) for _ in range(rnd.choice([5, 50, 500])))
    return " ".join(rnd.choice(INLINE) for _ in range(rnd.randint(1, 8)))


def fence(rnd: random.Random, indent: str) -> list[str]:
    ch = rnd.choice(["```", "~~~", "````"])
    info = rnd.choice(lexer_aliases())
    body = rnd.choice(HOSTILE_BODIES)(rnd).split("\n")
    lines = [indent + ch + info, *(indent + b for b in body)]
    if rnd.random() < 0.85:  # sometimes left open
        lines.append(indent + ch)
    return lines


def table(rnd: random.Random, indent: str) -> list[str]:
    cols = rnd.randint(1, 5)
    head = "|" + "|".join(f" h{i} " for i in range(cols)) + "|"
    delim = "|" + "|".join(rnd.choice(["---", ":--", "--:", ":-:"]) for _ in range(cols)) + "|"
    rows = [
        "|" + "|".join(inline(rnd) for _ in range(rnd.randint(0, cols + 2))) + "|"
        for _ in range(rnd.randint(0, 30))
    ]
    return [indent + line for line in (head, delim, *rows)]


def block(rnd: random.Random, depth: int = 0) -> list[str]:
    indent = rnd.choice(["", "", "", " ", "   ", "  " * depth])
    kind = rnd.randrange(8)
    if kind == 0:
        return fence(rnd, indent)
    if kind == 1:
        return table(rnd, indent)
    if kind in (2, 3) and depth < 3:  # a container: list item or quote, with children
        marker = rnd.choice(MARKERS)
        out = []
        for _ in range(rnd.randint(1, 6)):
            kids = [line for _ in range(rnd.randint(1, 3)) for line in block(rnd, depth + 1)]
            pad = " " * len(marker) if rnd.random() < 0.8 else ""  # else: lazy lines
            out += [marker + kids[0], *(pad + k for k in kids[1:])]
            if rnd.random() < 0.3:
                out.append("")
        return out
    if kind == 4:
        return [indent + rnd.choice(["---", "===", "***", "", "   ", ">"])]
    return [indent + inline(rnd) for _ in range(rnd.randint(1, 4))]


def generate(rnd: random.Random, pool: list[bytes] | None = None) -> bytes:
    lines: list[str] = []
    for _ in range(rnd.randint(1, 8)):
        lines += block(rnd)
        if rnd.random() < 0.5:
            lines.append("")
    text = "\n".join(lines)[:MAX_CHARS] + rnd.choice(["", "\n", "\r\n"])
    return text.encode("utf-8", "surrogatepass")


def _within_a_frame(budget: float | None, call: Callable[[], Update]) -> Update:
    """One render must not freeze the page: a stall would show as one slow update. CPU time
    of this process, so that other jobs on a shared machine do not count. (No budget: the
    test suite, where a loaded machine must not fail a correct render; the work counts
    below still hold it to the budget.)"""
    t = time.process_time()
    update = call()
    took = time.process_time() - t
    assert budget is None or took < budget, (
        f"one update took {took:.2f} s (frame budget {budget} s)"
    )
    return update


class _Tags(HTMLParser):
    """Raises on an unsafe element or attribute (model output is never raw HTML)."""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        assert tag not in ("script", "iframe", "object", "embed", "style", "img"), tag
        for name, value in attrs:
            assert not name.startswith("on"), (tag, name)
            if name in ("href", "src"):
                assert re.match(r"(https?:|mailto:)", value or ""), (tag, name, value)


def one(data: bytes, rnd: random.Random, frame_budget: float | None = FRAME_BUDGET) -> None:
    """Stream ``data`` in random deltas as the page does (one ``update()`` per frame, within
    the frame budget, then ``end()`` and the updates to the final one): each update takes at
    most its budget of text and parses at most what a one-shot render does; the final state
    equals the one-shot render and holds nothing unsafe. ``frame_budget``: seconds of CPU an
    update may take (None: not timed)."""
    text = data.decode("utf-8", "replace")
    md = StreamingMarkdown()
    budget = md.budget
    assert budget is not None
    # The page renders once per animation frame, whatever the deltas: an answer of n
    # characters arrives in at most about a thousand frames (a 30 KB answer streams for 15 s
    # or more); the updates after it are the ones the budget needs to take the rest.
    step = max(rnd.choice([1, 7, 64, 999]), len(text) // MAX_UPDATES)
    frames = 0
    # A one-shot render parses each character once in the inline parser (the cost: a "["
    # costs it 1,500 plain characters) and once in the block parser (cheap: per line). An
    # update block-parses the open end twice (to settle, and for the tails), which a
    # block that cannot be cut makes as long as the whole (a tight list item's paragraph),
    # and once more where a provisionally cut paragraph ends: it is parsed whole, from its
    # first line, to check its pieces (``WholeParagraph``; the job's later passes reuse the
    # settle parse they stopped on, which made four, found by this fuzzer).
    # It inline-parses an open paragraph's tail twice too (to look for a cut, then to show
    # it), and hold-back may double that tail (closers for an open run of 900 "*": found
    # by this fuzzer on a 1 KB answer): up to four times the text in one update.
    size = len(text) + 1_000
    # Frames for the deltas; then to take the text, each a budget less the costliest
    # character; as much again for a paragraph cut provisionally (rendered whole once more
    # when it ends); the highlighting; a few to finish.
    need = (
        len(text) // step
        + 2 * math.ceil(cost(text) / (budget - max(WEIGHTS.values())))
        + math.ceil(HIGHLIGHT_WEIGHT * len(text) / budget)
        + 5
    )

    def frame(call: Callable[[], Update]) -> Update:
        nonlocal frames
        frames += 1
        assert frames <= need, f"not final after {need} updates"
        block, inline = md.rendered_chars, md.inlined_chars
        update = _within_a_frame(frame_budget, call)
        assert md.taken <= max(budget, max(WEIGHTS.values())), "took more than its budget"
        assert md.inlined_chars - inline <= 4 * size, "inline-parsed more than 4 full renders"
        assert md.rendered_chars - block <= 3 * size, "block-parsed more than three renders"
        return update

    for i in range(0, len(text), step):
        frame(lambda i=i: md.feed(text[i : i + step]))  # type: ignore[misc]
    while md.busy:
        frame(md.update)
    md.end()
    while not frame(md.update).final:
        pass
    html = render(text)
    assert md.html == html, "streaming markdown differs from the one-shot render"
    _Tags().feed(html)


if __name__ == "__main__":
    import os
    import sys

    rnd = random.Random(int(os.environ.get("PYSSE_FUZZ_SEED", "0")))
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 30.0
    t0, n, worst = time.monotonic(), 0, 0.0
    while time.monotonic() - t0 < seconds:
        data = generate(rnd)
        t = time.monotonic()
        one(data, rnd)
        worst = max(worst, time.monotonic() - t)
        n += 1
    print(f"fuzz_markdown: {n} cases in {seconds:.0f} s, slowest {worst:.2f} s")
