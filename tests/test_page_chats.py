"""page/chats.py: the chat list's order, ids, file names, and a checked import."""

from __future__ import annotations

import json

import pytest

from pysse.page.chats import (
    IMPORT_MAX,
    ChatSummary,
    export_filename,
    export_json,
    new_chat_id,
    parse_import,
    sort_chats,
)
from pysse.page.conversation import Conversation, ImportError_
from pysse.page.recording import Recording


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
