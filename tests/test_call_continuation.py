"""call/continuation.py: a continuation joins its partial answer with no repeat and no gap."""

from __future__ import annotations

import pytest

from pysse.call.continuation import LOOKAHEAD, MIN_OVERLAP, Joiner, overlap
from pysse.providers import CONTINUE_INSTRUCTION, get_provider


def join(before: str, deltas: list[str]) -> str:
    j = Joiner(before)
    return j.base + "".join(j.feed(d) for d in deltas) + j.close()


@pytest.mark.parametrize(
    ("before", "cont", "joined"),
    [
        ("Hello wor", "ld, and more.", "Hello world, and more."),  # mid-word: no space added
        ("One.\n\n", "Two.", "One.\n\nTwo."),  # the whitespace the model did not see comes back
        ("One.\n\n", "\n\nTwo.", "One.\n\nTwo."),  # its own whitespace wins
        ("One. ", " Two.", "One. Two."),
        # a model that restates the last words: the repeat is dropped
        (
            "The quick brown fox jumps",
            "brown fox jumps over the dog.",
            "The quick brown fox jumps over the dog.",
        ),
        ("The quick brown fox jumps ", " fox jumps over it.", "The quick brown fox jumps over it."),
        # a short coincidence is not a repeat
        ("I saw the", "the end.", "I saw thethe end."),
        ("", "Fresh start.", "Fresh start."),
        ("Partial", "", "Partial"),
    ],
)
def test_joins_seamlessly_at_any_chunking(before: str, cont: str, joined: str) -> None:
    for size in (1, 3, len(cont) or 1):
        deltas = [cont[i : i + size] for i in range(0, len(cont), size)]
        assert join(before, deltas) == joined, size


def test_a_continuation_that_is_not_a_repeat_shows_at_once() -> None:
    j = Joiner("Some text about rivers.")
    assert j.feed("Meanwhile") == "Meanwhile"  # not found in the partial answer: no waiting
    j2 = Joiner("Some text about rivers.")
    assert j2.feed("text") == ""  # could be a repeat: held
    assert j2.feed(" about rivers. More") == " More"


def test_holding_is_bounded() -> None:
    before = "ab " * 200
    j = Joiner(before)
    out = j.feed("ab " * (LOOKAHEAD // 3 + 1))
    assert j.decided and out == " "  # a repeat of the end, then its own space
    assert j.feed("new") == "new"
    assert overlap("x" * 5, "x" * 5) == (5 if MIN_OVERLAP <= 5 else 0)


def test_each_format_asks_in_its_own_way() -> None:
    history = [
        ("user", "Tell me"),
    ]
    anthropic = get_provider("anthropic").continue_messages(history, "Once upon \n")
    assert anthropic == [("user", "Tell me"), ("assistant", "Once upon")]
    for name in ("openai-chat", "openai-responses", "gemini"):
        msgs = get_provider(name).continue_messages(history, "Once upon \n")
        assert msgs == [
            ("user", "Tell me"),
            ("assistant", "Once upon"),
            ("user", CONTINUE_INSTRUCTION),
        ]
