"""Each chat remembers the endpoint and model chosen for it (the composer's picker, issue
#43): through the store, a file (a bad value refused naming the field, or dropped from the
store with a note) and two tabs (the later choice wins)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_chats_merge import Store

from pysse.chats.choice import Choice
from pysse.chats.conversation import Conversation, ImportError_
from pysse.chats.files import export_json, parse_import

PICK = Choice("https://r.test/relay", "anthropic", "claude-x")


def chat() -> Conversation:
    conv = Conversation("c1", tag="a")
    conv.add_user("hi")
    conv.choose(PICK)
    return conv


def test_the_choice_round_trips_through_the_store_and_a_file() -> None:
    conv = chat()
    assert conv.to_json()["choice"] == PICK.to_json()
    stored = Conversation.from_json(json.loads(json.dumps(conv.to_json())), strict=False)
    assert stored.choice == PICK and not stored.dropped
    imported, _ = parse_import(export_json(conv, {}), set())
    assert imported.choice == PICK
    assert "choice" not in Conversation("c2").to_json()  # (none chosen: none written)
    assert Conversation.from_json(Conversation("c2").to_json()).choice is None


@pytest.mark.parametrize(
    ("value", "names"),
    [
        ("gpt", "the chat's 'choice' must be an object"),
        ({"relay": 3, "format": "anthropic", "model": "m"}, "'choice' relay must be text"),
        ({"relay": "", "format": "nope", "model": "m"}, "'choice' format must be one of"),
        ({"relay": "", "format": "auto", "model": ["m"]}, "'choice' model must be"),
        ({"relay": "", "format": "auto", "model": "m" * 201}, "longer than 200"),
        ({"relay": "", "format": "auto", "model": "a\nb"}, "must be one line"),
        ({"relay": "x" * 2001, "format": "auto", "model": "m"}, "longer than 2,000"),
    ],
)
def test_a_bad_choice_is_refused_from_a_file_and_dropped_from_the_store(
    value: Any, names: str
) -> None:
    doc = chat().to_json()
    doc["choice"] = value
    with pytest.raises(ImportError_, match=names):
        parse_import(json.dumps(doc), set())
    lenient = Conversation.from_json(json.loads(json.dumps(doc)), strict=False)
    assert lenient.messages and lenient.dropped
    assert lenient.choice is None or len(lenient.choice.relay) <= 2000


def test_two_tabs_the_later_choice_wins() -> None:
    store = Store()
    a = chat()
    store.write(a)
    b = Conversation.from_json(store.body)
    b.stamp = a.stamp
    other = Choice("", "openai-chat", "gpt-y")
    b.choose(other)  # tab B picks another model and writes
    store.write(b)
    a.add_user("more")  # tab A, which did not choose since, writes: B's choice stays
    store.write(a)
    assert a.choice == other and store.body is not None
    assert store.body["choice"] == other.to_json()
    a.choose(PICK)  # now A chooses again: the later choice wins
    store.write(a)
    b.add_user("from b")
    store.write(b)
    assert b.choice == PICK and store.body["choice"] == PICK.to_json()
    assert len(b.messages) == 3  # (and nothing else was lost)
