"""render/diagrams.py and the fence rule: which fences the view may draw as diagrams (closed
``mermaid`` fences, within bounds), and a refused one's note; never an open fence, so never
while it still streams."""

from __future__ import annotations

import re

import pytest

from pysse.render import StreamingMarkdown, render
from pysse.render.diagrams import MAX_CHARS, MAX_EDGES, MAX_LINES, diagram_kind, refusal
from pysse.server.demo import DIAGRAM_ANSWER, answer_for

FLOW = "```mermaid\nflowchart LR\n  A[Start] --> B{Ok?}\n  B -->|yes| C\n```\n"


@pytest.mark.parametrize(
    ("info", "kind"),
    [
        ("mermaid", "mermaid"),
        ("Mermaid", "mermaid"),
        ("  MERMAID  title", "mermaid"),
        ("mermaidjs", None),
        ("python", None),
        ("", None),
        ("mer maid", None),
    ],
)
def test_which_info_strings_are_diagrams(info: str, kind: str | None) -> None:
    assert diagram_kind(info) == kind


def test_a_closed_mermaid_fence_is_marked_and_an_open_one_is_not() -> None:
    html = render(FLOW)
    assert html.count('data-diagram="mermaid"') == 1
    assert "diagram-note" not in html
    assert "A[Start] --&gt; B{Ok?}" in html  # the source is the code block's, escaped
    assert 'data-file="code.mmd"' in html
    assert "data-diagram" not in render(FLOW.removesuffix("```\n"))  # still open
    assert "data-diagram" not in render("```python\nx = 1\n```\n")


def test_a_fence_is_marked_only_once_it_closed_while_streaming() -> None:
    md = StreamingMarkdown()
    marked = []
    for i in range(0, len(FLOW), 3):
        md.feed(FLOW[i : i + 3])
        marked.append("data-diagram" in md.html)
    md.finish()
    assert marked[-1] and not any(marked[:-1])  # the last delta holds the closing fence
    assert md.html == render(FLOW)


def test_a_mermaid_fence_inside_a_list_is_marked_too() -> None:
    html = render("- a diagram:\n\n  ```mermaid\n  graph TD\n  A-->B\n  ```\n")
    assert 'data-diagram="mermaid"' in html


@pytest.mark.parametrize(
    ("source", "why"),
    [
        ("graph TD\n" + "A" * MAX_CHARS, r"^its source has 50,009 characters \(at most 50,000"),
        ("graph TD\n" + "x\n" * MAX_LINES, r"^its source has 2,002 lines \(at most 2,000"),
        ("graph TD\n" + "A-->B\n" * (MAX_EDGES + 1), r"^it has about 501 links \(at most 500"),
        ("sequenceDiagram\n" + "A->>B: hi\n" * (MAX_EDGES + 1), r"^it has about 501 links"),
    ],
)
def test_sources_over_the_bounds_are_refused_with_a_reason(source: str, why: str) -> None:
    assert re.search(why, refusal(source) or ""), refusal(source)
    html = render(f"```mermaid\n{source}\n```\n")
    assert "data-diagram" not in html  # the view never draws it
    assert '<p class="diagram-note" role="note">Not drawn: it' in html


def test_sources_within_the_bounds_are_drawn() -> None:
    assert refusal("graph TD\n" + "A-->B\n" * MAX_EDGES) is None
    assert refusal("graph TD\n  A[" + "x" * 1000 + "]\n") is None


def test_the_demo_has_a_diagram_and_a_broken_one() -> None:
    assert answer_for("/demo diagram") == DIAGRAM_ANSWER
    assert render(DIAGRAM_ANSWER).count('data-diagram="mermaid"') == 2
