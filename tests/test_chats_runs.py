"""A Python block's run kept with its answer (``pysse.chats.runs``): bounded where it enters,
stored and read back checked (a hand-edited file's bad run named), exported as text that
cannot break out of its fence (Markdown) or its element (HTML)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pysse.chats.conversation import Conversation
from pysse.chats.html_export import export_html
from pysse.chats.records import ImportError_
from pysse.chats.runs import MAX_RUN_TEXT, MAX_RUNS, RunOutput, kept_run, with_run


def chat_with_runs(*runs: RunOutput) -> tuple[Conversation, str]:
    c = Conversation("c1")
    user = c.add_user("run it")
    answer = c.start_answer(user.id)
    c.finish(answer.id, "```python\nprint(1)\n```\n\n```python\n1/0\n```\n", "completed")
    for r in runs:
        c.set_run(answer.id, r)
    return c, answer.id


def test_a_run_is_kept_read_back_and_replaced_by_the_next_of_its_block() -> None:
    c, mid = chat_with_runs(RunOutput(1, "Failed after 0.1 s.", "Traceback ...\n"))
    c.set_run(mid, RunOutput(0, "Done in 0.2 s.", "1\n"))
    c.set_run(mid, RunOutput(0, "Done in 0.1 s.", "1\n"))
    assert [r.block for r in c.messages[mid].runs] == [0, 1]
    assert c.messages[mid].runs[0].status == "Done in 0.1 s."
    back = Conversation.from_json(json.loads(json.dumps(c.to_json())), strict=True)
    assert back.messages[mid].runs == c.messages[mid].runs
    user = c.path()[0].id
    c.set_run(user, RunOutput(0, "Done.", "x"))  # a question has no runs
    assert c.messages[user].runs == ()


def test_what_the_view_reports_is_checked_and_bounded() -> None:
    assert kept_run(-1, "Done.", "") is None and kept_run(True, "Done.", "") is None
    assert kept_run(0, 5, "") is None and kept_run(0, "Done.", None) is None
    assert kept_run("0", "Done.", "") is None
    long = kept_run(2, "Done  in\n0.1 s." + "!" * 500, "x" * (MAX_RUN_TEXT + 5_000))
    assert long is not None and long.status.startswith("Done in 0.1 s.") and len(long.status) == 200
    assert long.text.endswith("\n[5,000 more characters not kept]\n")
    runs: tuple[RunOutput, ...] = ()
    for i in range(MAX_RUNS + 10):
        runs = with_run(runs, RunOutput(i, "Done.", ""))
    assert [r.block for r in runs] == list(range(MAX_RUNS))


@pytest.mark.parametrize(
    ("runs", "said"),
    [
        ("no", "message 1 'runs' must be a list of at most 20"),
        ([{"block": 0, "status": "Done.", "text": ""}] * 21, "must be a list of at most 20"),
        (["x"], "message 1 run 0 is not an object"),
        ([{"block": -1, "status": "", "text": ""}], "run 0 'block' must be a whole number"),
        ([{"block": 0, "status": 3, "text": ""}], "run 0 'status' must be text"),
        ([{"block": 0, "status": "", "text": "x" * 30_000}], "run 0 'text' must be text"),
        (
            [{"block": 0, "status": "", "text": ""}, {"block": 0, "status": "", "text": ""}],
            "run 1 'block' 0 is there twice",
        ),
    ],
)
def test_a_hand_edited_file_s_bad_run_is_refused_by_name(runs: object, said: str) -> None:
    c, _ = chat_with_runs(RunOutput(0, "Done.", "1\n"))
    doc = json.loads(json.dumps(c.to_json()))
    doc["messages"][1]["runs"] = runs
    with pytest.raises(ImportError_, match=said.replace("(", r"\(").replace(")", r"\)")):
        Conversation.from_json(doc, strict=True)
    lenient = Conversation.from_json(doc, strict=False)  # the store: the runs dropped, said
    assert lenient.path()[1].runs == () and lenient.dropped


@given(st.text(alphabet="`a\n~", max_size=60))
def test_the_markdown_export_fences_any_output(text: str) -> None:
    c, _ = chat_with_runs(RunOutput(0, "Done.", text))
    md = c.to_markdown()
    head = "Output of Python block 1 (Done.):\n\n"
    assert head in md
    fence = md.split(head, 1)[1].split("text\n", 1)[0]
    assert set(fence) == {"`"} and len(fence) >= 3
    assert fence not in text  # nothing in the output closes it


def test_the_html_export_holds_the_output_as_text() -> None:
    c, _ = chat_with_runs(RunOutput(0, "Done <b>now</b>.", "<script>alert(1)</script>\n"))
    page = export_html(c, "", lambda t: t)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>" not in page
    assert "Python block 1: Done &lt;b&gt;now&lt;/b&gt;." in page
