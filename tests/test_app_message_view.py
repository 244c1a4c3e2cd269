"""app/message_view.py: which actions a message offers, and the one announcement per answer."""

from __future__ import annotations

from pysse.app.message_view import actions, announcement, state_label


def test_a_finished_answer_offers_copy_regenerate_inspect() -> None:
    assert actions("assistant", "completed", busy=False, has_text=True, versions=1) == {
        "copy",
        "regenerate",
        "inspect",
    }


def test_continue_only_on_a_cut_answer_with_text() -> None:
    for state in ("truncated", "aborted", "error"):
        assert "continue" in actions("assistant", state, busy=False, has_text=True, versions=1)
    assert "continue" not in actions("assistant", "aborted", busy=False, has_text=False, versions=1)
    assert "continue" not in actions(
        "assistant", "completed", busy=False, has_text=True, versions=1
    )


def test_nothing_that_sends_while_the_chat_is_busy() -> None:
    got = actions("assistant", "truncated", busy=True, has_text=True, versions=2)
    assert got == {"copy", "inspect", "versions"}
    assert actions("user", "completed", busy=True, has_text=True, versions=2) == {"versions"}
    assert actions("user", "completed", busy=False, has_text=True, versions=1) == {"edit"}
    assert actions("assistant", "streaming", busy=True, has_text=True, versions=3) == {"inspect"}
    assert actions(
        "assistant", "completed", busy=False, has_text=True, versions=1, replay=True
    ) == {"inspect"}


def test_announcements() -> None:
    assert announcement("completed", "Done") == "Answer complete."
    assert announcement("aborted", "Stopped") == "Answer stopped."
    assert announcement("error", "Error: HTTP 401") == "Error: HTTP 401."
    assert state_label("truncated") == "Truncated"


def test_the_reasoning_summary_names_the_time_and_hidden_reasoning() -> None:
    from pysse.app.message_view import thinking_label, thought_label

    assert thinking_label(400) == "Thinking…"
    assert thinking_label(4_900) == "Thinking… 4 s"
    assert thought_label(12_400, hidden=False, chars=900) == "Thought for 12 s"
    assert thought_label(300, hidden=False, chars=10) == "Thought for less than a second"
    assert thought_label(5_000, hidden=True, chars=0) == "Reasoning hidden by the provider"
    assert (
        thought_label(5_000, hidden=True, chars=5)
        == "Thought for 5 s (partly hidden by the provider)"
    )
