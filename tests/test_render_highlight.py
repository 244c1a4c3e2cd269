"""render/highlight.py: the model picks a fence's language, so highlighting is bounded (an
allow-list of lexers, a size cap, a token budget) and, in the streaming renderer, spread over
updates in slices; the output equals pygments' own and the one-shot render."""

from __future__ import annotations

import re
from typing import Any

import pygments
import pygments.lexers
import pytest
from dom_model import stream_into_dom
from pygments.formatters import HtmlFormatter

from pysse.render import StreamingMarkdown, render
from pysse.render import highlight as hl_mod
from pysse.render.budget import HIGHLIGHT_WEIGHT, Budget
from pysse.render.highlight import ALLOWED, HighlightJob, lexer_for

# Lexers that backtrack catastrophically on short bodies (issue 16 item 2): tens of seconds.
SLOW = {
    "zeek": "0" * 700 + "x",
    "mcfunction": "execute " + "a" * 390 + "\n",
}


@pytest.fixture(autouse=True)
def _fresh_memo() -> None:
    hl_mod._done.clear()


@pytest.fixture
def only_allowed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Fail at once (instead of freezing for a minute) if a lexer off the allow-list is used."""
    used: list[str] = []
    real = pygments.lexers.get_lexer_by_name

    def guarded(alias: str, **options: Any) -> Any:
        used.append(alias)
        if alias not in set(ALLOWED.values()):
            raise AssertionError(f"lexer {alias!r} is not on the allow-list")
        return real(alias, **options)

    monkeypatch.setattr(pygments.lexers, "get_lexer_by_name", guarded)
    return used


@pytest.mark.parametrize("lang", SLOW)
def test_slow_lexers_are_never_used_one_shot(lang: str, only_allowed: list[str]) -> None:
    src = f"```{lang}\n{SLOW[lang]}\n```\n"
    html = render(src)
    assert "hl-" not in html  # shown plain and escaped
    assert SLOW[lang].strip()[:50] in html
    assert lang not in only_allowed


@pytest.mark.parametrize("lang", SLOW)
def test_slow_lexers_are_never_used_streaming(lang: str, only_allowed: list[str]) -> None:
    src = f"Text\n\n```{lang} extra words\n{SLOW[lang]}\n```\n\nAfter.\n"
    out = stream_into_dom(src, [5, 1, 13])
    assert out.html == render(src)
    assert "hl-" not in out.html and lang not in only_allowed


@pytest.mark.parametrize("lang", SLOW)
def test_a_markdown_fence_never_highlights_the_fences_inside_it(
    lang: str, only_allowed: list[str]
) -> None:
    # Pygments' markdown lexer looks a nested fence's language up by name: any of its
    # ~500 lexers, the slow ones included (this froze the page for tens of seconds).
    src = f"~~~markdown\n```{lang}\n{SLOW[lang]}\n```\n~~~\n"
    html = render(src)
    assert "hl-" in html and SLOW[lang].strip()[:50] in html
    assert only_allowed == ["markdown"]


def test_allow_list_aliases_all_exist() -> None:
    for word in ALLOWED:
        assert lexer_for(word) is not None, word
    assert lexer_for("PYTHON {.class}") is not None  # first word, any case
    for word in ("", "zeek", "mcfunction", "nonexistent", "python3x"):
        assert lexer_for(word) is None, word


def test_highlighted_html_is_pygments_own() -> None:
    code = "def f(x):\n    return x * 2  # double\n\nclass A:\n    pass\n"
    lexer = pygments.lexers.get_lexer_by_name("python", stripnl=False, ensurenl=False)
    expected = pygments.highlight(code, lexer, HtmlFormatter(nowrap=True, classprefix="hl-"))
    assert HighlightJob(code, "py").run() == expected
    assert expected in render(f"```python\n{code}```\n")


def test_sliced_job_equals_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    code = "".join(f"def f_{i}(x):\n    return x + {i}\n" for i in range(200))
    whole = HighlightJob(code, "python").run()
    hl_mod._done.clear()
    job = HighlightJob(code, "python")
    steps = 1
    while not job.step(Budget(1)):  # a budget of one unit: one line per step
        steps += 1
    assert 400 <= steps <= 401 and job.html == whole and "hl-k" in whole
    # A budget of units (HIGHLIGHT_WEIGHT per character of code) is spent, and not exceeded
    # by more than the last line.
    hl_mod._done.clear()
    job, steps, longest = HighlightJob(code, "python"), 0, max(map(len, code.split("\n")))
    while True:
        budget = Budget(20 * HIGHLIGHT_WEIGHT)
        steps += 1
        done = job.step(budget)
        assert budget.spent <= (20 + longest + 1) * HIGHLIGHT_WEIGHT
        if done:
            break
    assert job.html == whole and steps >= len(code) // (20 + longest + 1)


def test_size_cap_and_token_budget_show_plain(monkeypatch: pytest.MonkeyPatch) -> None:
    big = "x = 1\n" * (hl_mod.MAX_CODE // 6 + 1)
    assert HighlightJob(big, "python").run() == ""
    assert "hl-" not in render(f"```python\n{big}```\n")
    monkeypatch.setattr(hl_mod, "MAX_TOKENS", 50)
    many = "a = b + c\n" * 40
    assert HighlightJob(many, "python").run() == ""
    assert 'class="language-python"' in render(f"```python\n{many}```\n")


def test_streaming_highlights_a_long_fence_in_slices() -> None:
    """A closed long fence is highlighted over several updates (never a whole pygments run in
    one), stays open meanwhile, and is replaced once by exactly the one-shot HTML."""
    code = "".join(f"def f_{i}(x):\n    return x * {i}\n" for i in range(300))
    src = f"Intro\n\n```python\n{code}```\n\nAfter the code.\n"
    budget = 4000
    md = StreamingMarkdown(budget=budget)
    md.append(src[: src.index("```\n\nAfter")])
    while md.busy:
        md.update()
    assert "hl-" not in md.html
    md.feed("```\n\nAfter")
    busy = 0
    while md.busy:
        assert "hl-" not in md.html and "codeblock incomplete" in md.html
        md.update()
        busy += 1
        assert busy < 1000
    line = max(map(len, code.split("\n"))) + 1  # a step may end one line past its budget
    assert busy >= len(code) * HIGHLIGHT_WEIGHT // (budget + line * HIGHLIGHT_WEIGHT)
    assert "hl-k" in md.html and "codeblock incomplete" not in md.html
    md.feed(" the code.\n")
    md.finish()
    hl_mod._done.clear()
    assert md.html == render(src)


@pytest.mark.parametrize("sliced", [False, True], ids=["finish", "end"])
def test_finishing_completes_a_sliced_highlight(sliced: bool) -> None:
    """``finish()`` highlights what is left at once; after ``end()`` the updates go on with
    it a budget's worth at a time, and the last one is final."""
    code = "".join(f"x_{i} = {i}\n" for i in range(400))
    src = f"```python\n{code}```\n\nMore\n"
    md = StreamingMarkdown(budget=4000)
    md.append(src[: src.index("```\n\nMore")])
    while md.busy:
        md.update()
    md.feed("```\n\nMore\n")  # the fence is closed
    assert md.busy
    if sliced:
        md.end()
        updates = 0  # before the highlighted fence is shown (then the rest, and final)
        while not (final := md.update()).final:
            assert md.busy
            updates += "hl-" not in md.html
        line = max(map(len, code.split("\n"))) + 1
        assert updates >= len(code) * HIGHLIGHT_WEIGHT // (4000 + line * HIGHLIGHT_WEIGHT)
    else:
        final = md.finish()
    assert final.final and not md.busy
    assert md.html == render(src) and len(re.findall("hl-", md.html)) > 400


def test_highlighting_off_by_policy() -> None:
    from pysse.render import MarkdownPolicy, make_markdown

    md = make_markdown(MarkdownPolicy(highlight=False))
    assert "hl-" not in render("```python\nx = 1\n```\n", md)
