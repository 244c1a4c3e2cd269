"""Which model wrote an answer (issue #43): what its stream said (``ChatStream.model``), kept
with the message through storage and export/import; a hand-edited file's bad ``model`` is
refused naming the field, and read leniently from the store as nothing."""

from __future__ import annotations

import json

import pytest

from pysse.chats.conversation import Conversation, ImportError_
from pysse.chats.files import export_json, parse_import


def chat(model: str | None) -> Conversation:
    conv = Conversation("c1", tag="")
    user = conv.add_user("which model?")
    answer = conv.start_answer(user.id)
    conv.finish(answer.id, "This one.", "completed", format="openai-chat", model=model)
    return conv


def test_the_model_is_kept_through_the_store_and_a_file() -> None:
    conv = chat("gpt-4.1-2025-04-14")
    assert conv.messages["m2"].model == "gpt-4.1-2025-04-14"
    stored = Conversation.from_json(json.loads(json.dumps(conv.to_json())), strict=False)
    assert stored.messages["m2"].model == "gpt-4.1-2025-04-14" and not stored.dropped
    imported, _ = parse_import(export_json(conv, {}), set())
    assert imported.messages["m2"].model == "gpt-4.1-2025-04-14"


def test_an_answer_whose_stream_named_no_model_stores_none() -> None:
    conv = chat(None)
    assert conv.messages["m2"].model == "" and "model" not in conv.to_json()["messages"][1]
    conv.finish("m2", "This one.", "completed", model="later")  # (a continued piece says one)
    conv.finish("m2", "This one.", "completed")  # and one that says nothing keeps it
    assert conv.messages["m2"].model == "later"


@pytest.mark.parametrize(
    ("value", "names"),
    [(["gpt"], "message 1's 'model' must be text"), ("m" * 201, "'model' is longer than 200")],
)
def test_a_bad_model_is_refused_from_a_file_and_dropped_from_the_store(
    value: object, names: str
) -> None:
    doc = chat("ok").to_json()
    doc["messages"][1]["model"] = value
    with pytest.raises(ImportError_, match=names):
        parse_import(json.dumps(doc), set())
    lenient = Conversation.from_json(json.loads(json.dumps(doc)), strict=False)
    assert lenient.messages["m2"].text == "This one." and lenient.dropped


def test_a_model_is_one_line() -> None:
    doc = chat("ok").to_json()
    doc["messages"][1]["model"] = "gpt\n4.1\t mini"
    assert parse_import(json.dumps(doc), set())[0].messages["m2"].model == "gpt 4.1 mini"
