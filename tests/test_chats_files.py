"""chats/files.py: the chat list's order, ids, file names, and a checked import."""

from __future__ import annotations

import json

import pytest

from pysse.chats.conversation import Conversation, ImportError_
from pysse.chats.files import (
    IMPORT_MAX,
    ChatSummary,
    conversation_json_steps,
    export_filename,
    export_json,
    new_chat_id,
    parse_import,
    parse_import_steps,
    sort_chats,
)
from pysse.chats.recording import Recording


def conv() -> Conversation:
    c = Conversation("c1")
    u = c.add_user("What is SSE?")
    a = c.start_answer(u.id)
    c.finish(a.id, "Server-Sent Events.", "completed")
    return c


def test_summaries_sort_newest_first_and_survive_damage() -> None:
    rows = [ChatSummary("a", "A", 1.0), ChatSummary("b", "", 3.0), ChatSummary("c", "C", 2.0)]
    assert [r.id for r in sort_chats(rows)] == ["b", "c", "a"]
    assert rows[1].label == "New chat"
    s = ChatSummary.of(conv())
    assert ChatSummary.from_json(s.to_json()) == s
    assert ChatSummary.from_json({"title": "no id"}) is None
    assert ChatSummary.from_json({"id": "x", "updated": "soon"}) == ChatSummary("x", "", 0.0)


def test_ids_and_file_names() -> None:
    assert new_chat_id(1.0) != new_chat_id(1.0)
    assert new_chat_id(1.0) < new_chat_id(2.0)
    assert export_filename('What is "SSE"? / <b>', "md") == "What-is-SSE-b.md"
    assert export_filename("///", "json") == "chat.json"


def test_export_then_import_gives_the_same_chat_under_a_free_id() -> None:
    c = conv()
    a = c.path()[1].id
    text = export_json(c, {a: Recording([(1.0, b"data: x\n\n")])})
    back, recs = parse_import(text, taken={"c1"})
    assert back.id != "c1" and [m.text for m in back.path()] == [m.text for m in c.path()]
    assert recs[a].raw() == b"data: x\n\n"
    same, _ = parse_import(text, taken=set())
    assert same.id == "c1"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("not json", "not a JSON file"),
        ("[" * 500 + "]" * 500, "not a JSON file"),
        (json.dumps({"schema": "other"}), "not a pysse conversation"),
        (json.dumps({**conv().to_json(), "recordings": {"nope": {}}}), "not in the conversation"),
        (" " * (IMPORT_MAX + 1), "larger than"),
    ],
)
def test_import_says_what_is_wrong(text: str, why: str) -> None:
    with pytest.raises(ImportError_, match=why):
        parse_import(text, set())


def test_a_long_chat_imports_in_steps_with_the_same_result() -> None:
    c = Conversation("c9")
    for i in range(60):
        u = c.add_user(f"q{i} [a](https://e.example/{i})")
        a = c.start_answer(u.id)
        c.finish(a.id, f"answer {i} with [a link](https://e.example/{i}) " * 40, "completed")
    text = export_json(c, {})
    steps = parse_import_steps(text, set())
    pauses = 0
    while True:
        try:
            next(steps)
            pauses += 1
        except StopIteration as done:
            back, _ = done.value
            break
    assert pauses >= len(text) // (1 << 16) // 2  # a turn for the page about every 64 KB
    assert back.to_json() == parse_import(text, set())[0].to_json()


def test_a_chat_is_encoded_in_steps_as_it_was_when_asked() -> None:
    c = Conversation("c8")
    for i in range(40):
        u = c.add_user(f"q{i}")
        c.finish(c.start_answer(u.id).id, f"answer {i} " * 50, "completed")
    before = Conversation.from_json(c.to_json()).to_json()
    steps = conversation_json_steps(c, every=8)
    next(steps)  # begun: the content is fixed from here
    c.add_user("typed after the save began")
    pauses = 1
    while True:
        try:
            next(steps)
            pauses += 1
        except StopIteration as done:
            text = done.value
            break
    assert pauses >= 80 // 8 - 1  # 80 messages, a pause every 8
    back = Conversation.from_json(json.loads(text))
    assert back.to_json() == before  # 80 messages: not the one added after it began
