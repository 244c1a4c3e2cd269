"""chats/conversation.py: versions, branches, continue, and JSON round trips."""

from __future__ import annotations

import json

import pytest

from pysse.chats.conversation import Conversation, ImportError_


def chat() -> tuple[Conversation, dict[str, str]]:
    c = Conversation("c1")
    u1 = c.add_user("hi")
    a1 = c.start_answer(u1.id)
    c.finish(a1.id, "Hello!", "completed")
    u2 = c.add_user("tell me more")
    a2 = c.start_answer(u2.id)
    c.finish(a2.id, "More.", "completed")
    return c, {"u1": u1.id, "a1": a1.id, "u2": u2.id, "a2": a2.id}


def texts(c: Conversation) -> list[str]:
    return [m.text for m in c.path()]


def test_a_path_and_its_history() -> None:
    c, ids = chat()
    u2 = ids["u2"]
    assert texts(c) == ["hi", "Hello!", "tell me more", "More."]
    assert c.history(u2) == [("user", "hi"), ("assistant", "Hello!"), ("user", "tell me more")]
    assert c.title == "hi"


def test_regenerate_adds_a_version_replying_to_the_same_history() -> None:
    c, ids = chat()
    a1 = ids["a1"]
    v2 = c.regenerate(a1)
    assert c.history(v2.parent or "") == [("user", "hi")]
    assert c.versions(v2.id) == (2, 2) and c.versions(a1) == (1, 2)
    assert texts(c) == ["hi", ""]  # the later turns stay with version 1
    c.finish(v2.id, "Hi there.", "completed")
    assert c.step_version(v2.id, -1) == a1
    assert texts(c) == ["hi", "Hello!", "tell me more", "More."]
    assert c.step_version(a1, +5) == v2.id  # clamped


def test_edit_starts_a_branch_and_keeps_the_old_one() -> None:
    c, ids = chat()
    a1, u2 = ids["a1"], ids["u2"]
    e = c.edit(u2, "tell me less")
    answer = c.start_answer(e.id)
    assert c.history(e.id)[-1] == ("user", "tell me less")
    assert texts(c) == ["hi", "Hello!", "tell me less", ""]
    c.finish(answer.id, "Less.", "completed")
    c.select(u2)
    assert texts(c) == ["hi", "Hello!", "tell me more", "More."]
    with pytest.raises(ValueError):
        c.edit(a1, "no")


def test_continue_sends_the_partial_answer_and_joins_the_rest() -> None:
    c, ids = chat()
    a2 = ids["a2"]
    c.finish(a2, "More", "truncated", detail="truncated: the connection closed")
    history, prefix = c.continue_from(a2)
    assert history[-1] == ("assistant", "More") and prefix == "More"
    c.finish(a2, prefix + ". Done.", "completed")
    m = c.messages[a2]
    assert (m.text, m.state, m.pieces) == ("More. Done.", "completed", 2)


def test_empty_failed_answers_are_not_sent() -> None:
    c = Conversation("c")
    u = c.add_user("one")
    a = c.start_answer(u.id)
    c.finish(a.id, "", "error", detail="HTTP 500")
    u2 = c.add_user("two")
    assert c.history(u2.id) == [("user", "one"), ("user", "two")]


def test_json_round_trip_keeps_versions_branches_and_selection() -> None:
    c, ids = chat()
    a1 = ids["a1"]
    c.regenerate(a1)
    c.select(a1)
    back = Conversation.from_json(json.loads(json.dumps(c.to_json())))
    assert texts(back) == texts(c)
    assert back.versions(a1) == (1, 2)
    new = back.add_user("next")  # ids continue after the imported ones
    assert new.id not in c.messages


def test_a_streaming_answer_restored_is_truncated() -> None:
    c = Conversation("c")
    u = c.add_user("q")
    c.start_answer(u.id)
    back = Conversation.from_json(c.to_json())
    assert back.path()[-1].state == "truncated"


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda o: o.update(schema="x"), "not a pysse conversation"),
        (lambda o: o.update(version=9), "unsupported conversation version"),
        (lambda o: o.update(messages="x"), "'messages' must be a list"),
        (lambda o: o["messages"].append(5), "is not an object"),
        (lambda o: o["messages"][0].update(role="system"), "has role 'system'"),
        (lambda o: o["messages"][1].update(parent="zz"), "replies to 'zz'"),
        (lambda o: o["messages"][1].update(id=o["messages"][0]["id"]), "repeated id"),
        (lambda o: o["messages"][0].update(text=5), "'text' must be text"),
    ],
)
def test_bad_imports_say_what_is_wrong(mutate: object, message: str) -> None:
    c, _ = chat()
    obj = c.to_json()
    mutate(obj)  # type: ignore[operator]
    with pytest.raises(ImportError_, match=message):
        Conversation.from_json(obj)


def test_markdown_export() -> None:
    c, ids = chat()
    a2 = ids["a2"]
    c.finish(a2, "More", "truncated")
    md = c.to_markdown()
    assert md.startswith("# hi\n") and "## Assistant (truncated)\n\nMore" in md


def test_speed_answer_id_and_rename_round_trip() -> None:
    c, ids = chat()
    c.finish(ids["a2"], "More.", "completed", speed={"ttft_ms": 120.0}, relay_id="ans-9")
    c.rename("  My   chat  ")
    back = Conversation.from_json(json.loads(json.dumps(c.to_json())))
    msg = back.messages[ids["a2"]]
    assert msg.speed == {"ttft_ms": 120.0} and msg.answer_id == "ans-9"
    assert back.title == "My chat" and back.renamed
    back.rename("")
    assert back.title == "hi" and not back.renamed


def test_an_answer_in_flight_when_saved_comes_back_truncated() -> None:
    c, _ = chat()
    u = c.add_user("again")
    a = c.start_answer(u.id)
    c.finish(a.id, "Part", "streaming", relay_id="ans-1")
    back = Conversation.from_json(c.to_json())
    msg = back.messages[a.id]
    assert (msg.state, msg.text, msg.answer_id) == ("truncated", "Part", "ans-1")


def test_bad_numbers_in_a_file_are_refused_and_dropped_from_the_store() -> None:
    c, _ = chat()
    doc = c.to_json()
    doc["created"] = "yesterday"
    doc["messages"][0]["created"] = float("nan")
    with pytest.raises(ImportError_, match="message 0's 'created' must be a number"):
        Conversation.from_json(doc)
    back = Conversation.from_json(doc, strict=False)  # the store: read what can be read
    first = doc["messages"][0]["id"]
    assert back.created > 0 and back.messages[first].created == 0.0
    assert len(back.dropped) == 2 and "message 0's 'created'" in back.dropped[0]


RELAY = "https://relay.example/v1/chat/completions"


def in_flight_chat(**finish: object) -> tuple[Conversation, str]:
    c, _ = chat()
    u = c.add_user("again")
    a = c.start_answer(u.id)
    c.finish(a.id, "Part", "streaming", **finish)  # type: ignore[arg-type]
    return Conversation.from_json(json.loads(json.dumps(c.to_json()))), a.id


def test_an_answer_in_flight_with_an_id_can_be_reattached_to_its_relay() -> None:
    back, aid = in_flight_chat(relay_id="ans-1", url=RELAY)
    assert [m.id for m in back.reattachable(RELAY)] == [aid]
    assert back.messages[aid].url == RELAY


def test_only_the_pages_relay_is_asked_again() -> None:
    # a stored or imported URL must never make the page call a host the user did not choose
    back, _ = in_flight_chat(relay_id="ans-1", url="https://elsewhere.example/x")
    assert back.reattachable(RELAY) == []


def test_nothing_to_reattach_without_an_id_or_once_finished() -> None:
    back, _ = in_flight_chat(url=RELAY)
    assert back.reattachable(RELAY) == []
    back, aid = in_flight_chat(relay_id="ans-1", url=RELAY)
    back.finish(aid, "Part and more", "completed")
    assert back.reattachable(RELAY) == []


def test_a_continued_answer_is_not_reattached() -> None:
    back, aid = in_flight_chat(relay_id="ans-1", url=RELAY)
    back.messages[aid].pieces = 2  # its stream holds only the last piece
    assert back.reattachable(RELAY) == []
