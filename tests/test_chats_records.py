"""Every value a chat record brings in is checked where it enters (issue #40): property tests
with generated hostile JSON in every field of a stored or imported chat, and of a list row."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pysse.app.settings import DEFAULTS, load_settings
from pysse.app.site import read_site
from pysse.call.request import relay_url
from pysse.call.speed import SpeedMeter
from pysse.chats.conversation import Conversation, ImportError_
from pysse.chats.files import ChatSummary, parse_import

HOSTILE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**400), max_value=10**400)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30)
    | st.sampled_from(["m1", "", "x" * 5000, "c/1", "a'b", "javascript:alert(1)"]),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
CHAT_FIELDS = ["id", "title", "renamed", "created", "updated", "selected"]
MESSAGE_FIELDS = [
    "id", "role", "text", "parent", "state", "detail", "format", "usage", "created", "pieces",
    "speed", "answer_id", "url", "reasoning", "thought_ms", "tool_calls",
]  # fmt: skip


def valid_doc() -> dict[str, Any]:
    conv = Conversation("c1", tag="")
    user = conv.add_user("hi")
    answer = conv.start_answer(user.id)
    conv.finish(answer.id, "Hello", "completed", speed={"ttft_ms": 12.0, "tokens_per_s": 3.0})
    return json.loads(json.dumps(conv.to_json()))


def readable(conv: Conversation) -> None:
    """What the page does with a chat it read: show it, list it, store it again."""
    json.dumps(conv.to_json(), allow_nan=False)
    ChatSummary.from_json(ChatSummary.of(conv).to_json())
    for msg in conv:
        view = SpeedMeter.from_summary(msg.speed)
        if view is not None:
            assert view.text is not None
        assert 0 <= len(msg.id) <= 64 and "/" not in msg.id and "'" not in msg.id


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["chat", "message 0", "message 1"]),
    st.sampled_from(CHAT_FIELDS + MESSAGE_FIELDS),
    HOSTILE,
)
def test_any_value_in_any_field_is_read_or_refused_in_one_sentence(
    where: str, field: str, value: Any
) -> None:
    doc = valid_doc()
    target = doc if where == "chat" else doc["messages"][int(where[-1])]
    if where == "chat" and field not in CHAT_FIELDS:
        return
    target[field] = value
    try:
        strict = Conversation.from_json(doc)
    except ImportError_ as exc:
        sentence = str(exc)
        assert sentence and "\n" not in sentence and len(sentence) < 300
    else:
        readable(strict)
    lenient = Conversation.from_json(doc, strict=False)  # the store: never refused here
    readable(lenient)
    assert all(isinstance(d, str) and len(d) < 400 for d in lenient.dropped)


@settings(max_examples=200, deadline=None)
@given(HOSTILE)
def test_a_list_row_of_anything_is_a_row_or_skipped(value: Any) -> None:
    row = ChatSummary.from_json(value)
    if row is not None:
        assert row.updated == row.updated and abs(row.updated) < 1e12 and len(row.id) <= 64


def test_the_issues_401_digit_speed_is_refused_naming_the_field() -> None:
    doc = valid_doc()
    doc["messages"][1]["speed"]["ttft_ms"] = 10**400
    with pytest.raises(ImportError_, match=r"message 1's speed\.ttft_ms must be a number"):
        parse_import(json.dumps(doc), set())
    kept = Conversation.from_json(doc, strict=False)
    assert kept.messages["m2"].speed == {"ttft_ms": None, "tokens_per_s": 3.0}
    assert kept.dropped == ["message 1's speed.ttft_ms must be a number from 0 to 1e+09"]


@pytest.mark.parametrize("bad", ["a/b", "a'b", "", "x" * 65, 7])
def test_ids_that_would_break_a_storage_key_or_a_selector_are_refused(bad: Any) -> None:
    doc = valid_doc()
    doc["messages"][0]["id"] = bad
    with pytest.raises(ImportError_, match="'id' must be an id"):
        Conversation.from_json(doc)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["relay", "format", "demo", "wheels", "first", "x"]), HOSTILE)
)
def test_site_json_keeps_only_values_of_the_type_the_page_reads(raw: dict[str, Any]) -> None:
    site = read_site(raw)
    assert set(site) <= {"relay", "format", "demo", "wheels", "first"}
    load_settings(None, site)  # what the page does with it first: never raises
    if "relay" in site:
        assert isinstance(site["relay"], str)
    if isinstance(site.get("demo"), dict):
        relay_url("", "auto", site, "http://page.test")


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(sorted(DEFAULTS)), HOSTILE))
def test_stored_settings_of_anything_are_settings(stored: dict[str, Any]) -> None:
    s = load_settings(json.dumps(stored, default=str), {})
    for key, default in DEFAULTS.items():
        assert isinstance(s[key], type(default))
    assert 1 <= s["idle_s"] <= 86_400 and len(s["system"]) <= 100_000


def test_a_site_json_that_is_not_an_object_is_no_site() -> None:
    assert read_site([1, 2]) == {} and read_site({"relay": 5, "format": "x"}) == {}
