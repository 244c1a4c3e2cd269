"""The frame budget (render/budget.py, issue 28): one ``update()`` does at most a budget's
worth of work and carries the rest to the next frame; the final state is still exact.

Work is counted, never timed: the cost units of text each update takes (``md.taken``), the
characters parsed (``rendered_chars`` + ``inlined_chars``), the number of updates. Every
stream goes through the model DOM (tests/dom_model.py, ``frames=True``: one update per frame
as the page does, then ``end()`` and the updates to the final one), which checks after each
update that the DOM equals ``md.html`` and that no settled node was removed or changed
except by a ``replaces`` op."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from dom_model import new_root, stream_into_dom
from hypothesis import given, settings
from hypothesis import strategies as st
from test_render_blocks import FRAGMENTS

from pysse.render import StreamingMarkdown, render
from pysse.render.budget import BUDGET, HIGHLIGHT_WEIGHT, WEIGHTS, Budget, cost, prefix_within
from pysse.render.dom import DomWriter
from pysse.server.demo import _long_answer
from pysse.server.shapes import SHAPES, shape

MATH = (Path(__file__).parent / "fixtures" / "answer_math.md").read_text()
TEXTS = {
    **{name: shape(name, 24) for name in SHAPES},
    "long": _long_answer(6000),
    "math": MATH,
    "brackets": "[" * 3000 + " and text after\n\nnext\n",
    "crlf": "line one\r\n\r\n- a\r\n- b\r\n\r\ntext\r",
}


def frames(text: str, cuts: list[int], budget: int | None, check_each: bool = True) -> object:
    out = stream_into_dom(
        text, cuts, md=StreamingMarkdown(budget=budget), check_each=check_each, frames=True
    )
    assert out.html == render(text)
    assert out.md._blocks.rescues == 0
    return out


def test_cost_and_prefix_within_agree() -> None:
    text = "plain [link](https://e.example) **b** `c`\n| a | b |\n$x$ \\(y\\)\n" * 5
    assert cost("") == 0 and cost("ab") == 2
    assert cost(text) == sum(WEIGHTS.get(c, 1) for c in text)
    for units in (0, 1, 5, 299, 300, 301, 1500, 10_000, 10**9):
        for start in (0, 3, 17):
            end = prefix_within(text, units, start)
            assert cost(text[start:end]) <= units
            if end < len(text):  # the longest such slice
                assert cost(text[start : end + 1]) > units


@pytest.mark.parametrize("name", TEXTS)
@pytest.mark.parametrize("budget", [3_000, 40_000])
@pytest.mark.parametrize("cuts", [[7], [10**9]], ids=["7", "firehose"])
def test_an_update_never_takes_more_than_its_budget_of_text(
    name: str, budget: int, cuts: list[int]
) -> None:
    text = TEXTS[name]
    out = frames(text, cuts, budget)
    assert max(out.taken) <= budget  # type: ignore[attr-defined]
    assert sum(out.taken) == cost(text)  # type: ignore[attr-defined]  # all of it, once


def _code_chars(text: str) -> int:
    parts = text.split("```")
    return sum(len(p) for p in parts[1::2])


@pytest.mark.parametrize("name", [*SHAPES, "long"])
@pytest.mark.parametrize("budget", [5_000, 40_000])
def test_a_firehose_reaches_the_final_state_in_ceil_n_over_budget_plus_k(
    name: str, budget: int
) -> None:
    """The whole answer in one append: ceil(cost / budget) updates (each takes more than
    the budget less the costliest character, which may not fit), plus its code's
    highlighting (``HIGHLIGHT_WEIGHT`` a character), plus a few to finish."""
    text = TEXTS[name] if name == "long" else shape(name, 60)
    out = frames(text, [len(text)], budget, check_each=False)
    taking = math.ceil(cost(text) / (budget - max(WEIGHTS.values())))
    highlighting = math.ceil(HIGHLIGHT_WEIGHT * _code_chars(text) / budget)
    assert out.updates <= taking + highlighting + 3  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", [*SHAPES, "brackets"])
def test_work_over_a_budgeted_stream_stays_linear(name: str) -> None:
    """Characters parsed per character of answer are the same at 4x the size, whether it
    streams in small deltas or arrives in one append."""

    def make(n: int) -> str:
        return "[" * (n * 60) + " text\n" if name == "brackets" else shape(name, n)

    for cuts in ([13], [10**9]):
        per_char = []
        for n in (20, 80):
            text = make(n)
            out = frames(text, cuts, 5_000, check_each=False)
            per_char.append(sum(out.work) / len(text))  # type: ignore[attr-defined]
        assert per_char[1] <= 1.25 * per_char[0] + 1, (cuts, per_char)


def test_an_update_never_costs_more_than_a_full_render() -> None:
    """40,000 ``[`` and then text, in one append: one update parsed the whole paragraph
    three times (1.7 s in CPython, a one-shot render 0.5 s). Now no update parses more than
    a small part of it, and all of them together stay within a few full renders."""
    text = "[" * 40_000 + " and then text" * 50 + "\n\nnext paragraph\n"
    out = frames(text, [len(text)], 40_000, check_each=False)
    # A one-shot render parses every character once in the block parser (a line costs it
    # little, however long) and once in the inline parser (a "[" costs it 1,500 plain ones).
    assert max(out.inline_work) <= len(text) / 20  # type: ignore[attr-defined]
    assert max(out.work) <= 1.1 * len(text)  # type: ignore[attr-defined]
    assert sum(out.inline_work) <= 4 * len(text)  # type: ignore[attr-defined]


def test_a_paragraph_arriving_mid_line_is_still_cut() -> None:
    """A multi-line paragraph whose text always ends mid-line (a budget's worth at a time)
    was never cut: a cut on the partial line is refused, and the search stopped there instead
    of looking before it, so each update parsed the whole paragraph again (quadratic)."""
    per_char = []
    for n in (100, 400):
        text = "Some words of prose, with a comma and more words here.\n" * n
        out = frames(text, [len(text)], 20_000, check_each=False)
        per_char.append(sum(out.work) / len(text))  # type: ignore[attr-defined]
    assert per_char[1] <= 1.25 * per_char[0], per_char


def test_a_list_turning_loose_is_replaced_once_and_nothing_else_is_removed() -> None:
    """A long list that turns loose is replaced by one op; until then the old list stays on
    screen unchanged, and nothing else is ever removed. (Its lines are parsed again in one
    pass: parsing a budget's worth of lines per pass could end a pass before a list's
    tightness was decided; see test_a_tight_list_stays_tight_whatever_the_budget_cuts.)"""
    items = "".join(f"- item {i} with *emphasis*\n" for i in range(200))
    text = items + "\n- the last item, after a blank line\n"
    md = StreamingMarkdown(budget=4_000)
    root = new_root()
    writer = DomWriter(root)
    for i in range(0, len(items), 24):
        writer.apply(md.feed(items[i : i + 24]))
    while md.busy:
        writer.apply(md.update())
    before = root.inner()
    assert '<li dir="auto">item 199 with' in before and "<p>" not in before
    writer.apply(md.feed(text[len(items) :]))
    frozen = 0
    while not (update := md.update()).ops:  # preparing the replacement: nothing changes
        writer.apply(update)
        assert root.inner() == before == md.html
        frozen += 1
    assert update.ops[0].replaces and update.ops[0].depth == 0  # then the list, at once
    writer.apply(update)
    while md.busy:
        writer.apply(md.update())
    md.end()
    while not (update := md.update()).final:
        writer.apply(update)
    writer.apply(update)
    assert root.inner() == md.html == render(text)
    assert md._blocks.replaced == 1


def test_end_finishes_in_slices_and_finish_does_it_at_once() -> None:
    text = _long_answer(8000)
    md = StreamingMarkdown(budget=3_000)
    md.append(text)
    md.end()
    assert md.busy
    updates = 0
    while not (update := md.update()).final:
        assert md.busy and not md.finished
        updates += 1
    assert updates > 10 and md.finished and not md.busy and update.tails == [""]
    assert md.html == render(text)
    assert md.update().final  # and so on
    # finish(): everything at once, from any state (also after end(), mid-way)
    for stop in (0, 1, 5, 20):
        md = StreamingMarkdown(budget=3_000)
        md.append(text)
        md.end()
        for _ in range(stop):
            md.update()
        assert md.finish().final and md.html == render(text) and not md.busy


def test_a_budget_smaller_than_one_character_still_gets_there() -> None:
    text = "[[a]] **b** and `c`\n\n- x\n- [ ] y\n"
    out = frames(text, [len(text)], 1)
    assert max(out.taken) <= max(WEIGHTS.values())  # type: ignore[attr-defined]


def test_budget_units() -> None:
    b = Budget(10)
    assert b.limited and b.room() == 10 and not b.exhausted()
    b.spend(12)
    assert b.room() == 0 and b.exhausted() and b.spent == 12
    unlimited = Budget(None)
    unlimited.spend(10**9)
    assert not unlimited.limited and unlimited.room() is None and not unlimited.exhausted()


@settings(max_examples=120, deadline=None)
@given(
    st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=14),
    st.lists(st.integers(min_value=1, max_value=200), min_size=1, max_size=6),
    st.sampled_from([1, 300, 2_500, 40_000]),
    st.booleans(),
)
def test_property_every_chunking_with_a_budget_ends_equal_to_a_one_shot_render(
    lines: list[str], cuts: list[int], budget: int, newline: bool
) -> None:
    """Random documents, random deltas, a random budget: every update applied to the model
    DOM (settled nodes never change), the final state equals a one-shot render, and no
    update takes more than its budget (or one character, when that costs more)."""
    text = "\n".join(lines) + ("\n" if newline else "")
    out = frames(text, cuts, budget)
    assert max(out.taken) <= max(budget, max(WEIGHTS.values()))  # type: ignore[attr-defined]


def test_finish_ends_even_when_the_safety_net_cannot_stop_the_rewinds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``finish()`` has no next update: if every pass rewinds (the safety net's too), it
    must still end with the final update, as before the budget; a budgeted update instead
    leaves the rest to the next one. (It returned a non-final update.)"""
    from pysse.render.blocks import structure

    real = structure._pass
    calls = []

    def always_rewinds(*args: object) -> bool:
        calls.append(1)
        real(*args)  # type: ignore[arg-type]
        return True

    md = StreamingMarkdown(budget=3_000)
    md.feed("- a\n- b\n\npara\n")
    monkeypatch.setattr(structure, "_pass", always_rewinds)
    assert not md.feed("more\n").final and md.busy  # the next update goes on
    update = md.finish()
    assert update.final and md.finished and not md.busy
    assert len(calls) > 2 * md._blocks.LOOP_LIMIT and md._blocks.rescues >= 2


@pytest.mark.parametrize("check_each", [False, True], ids=["work", "dom"])
def test_a_long_line_taken_a_budget_at_a_time_is_not_re_rendered_on_every_update(
    check_each: bool,
) -> None:
    """A firehose with a line of thousands of ``[`` (in a list item, found by the fuzzer):
    the budget takes ~26 of them per update, and each update rendered the partial line
    again as its tail, so the work grew with the line's square (34 s for a 30 KB answer,
    0.6 s without the budget). The tails now wait until the text taken pays for them: the
    work per character stays the same at 4x the line (and every update on the way keeps
    the model DOM equal to ``md.html``)."""
    per_char = []
    for n in (1000, 4000):
        text = f"- an item with words\n {'[' * n}{']' * 10}x\n * [a](https://e.example/x)\n\nend\n"
        out = frames(text, [len(text)], 40_000, check_each=check_each)
        per_char.append(sum(out.work) / len(text))  # type: ignore[attr-defined]
        assert out.updates >= cost(text) // 40_000  # type: ignore[attr-defined]
    assert per_char[1] <= 1.25 * per_char[0], per_char


def test_the_updates_of_a_long_job_do_not_parse_the_same_text_again() -> None:
    """After ``end()``, a provisionally cut paragraph is rendered whole over many updates
    (``WholeParagraph``). Each of them rendered the open paragraph's tails again, though
    nothing had changed: 25,000 characters inline-parsed per update, 31 s for this 30 KB
    answer the fuzzer made (0.6 s without the budget). And each passed over the same lines
    to go on with the job, block-parsing the open end (12,863 characters) twice: 5.5 M
    characters over the job's 212 updates (the fuzzer's per-update bound caught four parses
    in one). Now the job's updates inline-parse only the job's own text, and a pass that
    rendered nothing of its parse keeps it for the next pass over the same lines."""
    data = (Path(__file__).parent / "fixtures" / "fuzz_long_job_after_end.bin").read_bytes()
    text = data.decode("utf-8", "replace")
    md = StreamingMarkdown(budget=40_000)
    md.append(text)
    while md.busy:
        md.update()
    md.end()
    updates, inline, block = 0, md.inlined_chars, md.rendered_chars
    while not md.update().final:
        updates += 1
    assert updates > 20  # the whole render is spread over updates
    assert md.inlined_chars - inline <= 2 * len(text)
    assert md.rendered_chars - block <= 2 * len(text)
    assert md.html == render(text)


@pytest.mark.parametrize("step", [1, 7, 64])
@pytest.mark.parametrize("budget", [40_000, 100_000, 400_000])
def test_a_tight_list_stays_tight_whatever_the_budget_cuts(step: int, budget: int) -> None:
    """Found by the markdown fuzzer: a budget's worth of pending lines parsed per pass ended a
    pass where a nested list's tightness was not decided yet, and the streamed answer showed
    a tight list loose (``<li><p>``) where the one-shot render did not."""
    text = (Path(__file__).parent / "fixtures" / "fuzz_frontier_tight_list.md").read_text()
    assert streamed(text, step, budget) == render(text)


def streamed(text: str, step: int, budget: int = BUDGET) -> str:
    """``text`` fed ``step`` characters an update, then ended: the HTML it ends as."""
    md = StreamingMarkdown(budget=budget)
    for i in range(0, len(text), step):
        md.append(text[i : i + step])
        md.update()
    md.end()
    while not md.finished:
        md.update()
    return md.html


@pytest.mark.parametrize("step", [1, 2, 3, 4, 7])
def test_a_line_hold_back_changed_is_not_cut_into_the_paragraph(step: int) -> None:
    """Found by the markdown fuzzer: hold-back showed a list item's line ``* \\`` as ``*``
    (paragraph text), the paragraph was cut at that line's start, and the line became the
    paragraph's for good: the streamed answer lost the list the one-shot render has."""
    text = (Path(__file__).parent / "fixtures" / "fuzz_list_after_held_back_line.md").read_text()
    assert '<li dir="auto">\\</li>' in render(text)
    assert streamed(text, step) == render(text)


@pytest.mark.parametrize("span", [1, 4, 6])
def test_an_update_standing_for_several_frames_takes_that_many_budgets(span: int) -> None:
    """A page that renders every ``span`` frames (web/view.js's cadence) gives each update
    ``span`` frames' budget: it takes at most that, and as much as that while text waits."""
    text = TEXTS["long"]
    md = StreamingMarkdown(budget=5_000)
    md.append(text)
    taken = []
    while sum(taken) < cost(text):
        md.update(span)
        taken.append(md.taken)
    assert max(taken) <= 5_000 * span
    assert all(t > 5_000 * span - max(WEIGHTS.values()) for t in taken[:-1])


@pytest.mark.parametrize("every", [1, 4, 6])
def test_a_slower_cadence_keeps_up_with_a_stream_at_the_budgets_pace(every: int) -> None:
    """Text arrives at a budget's worth a frame; the page renders every ``every`` frames
    with that span. What waits untaken stays under two renders' worth however long the
    answer (at a span of one, a render every four frames fell a frame further behind each
    frame: the issue #41 bench's answer ended 8 s after its stream)."""
    budget = 4_000
    text = TEXTS["long"]
    md = StreamingMarkdown(budget=budget)
    sent = taken = 0
    behind = []
    for frame in range(1, 10_000):
        piece = text[sent : prefix_within(text, budget, sent)]
        if not piece:
            break
        md.append(piece)
        sent += len(piece)
        if frame % every == 0:
            md.update(every)
            taken += md.taken
            behind.append(cost(text[:sent]) - taken)
    assert max(behind) < 2 * budget * every
