"""An answer's reasoning and tool calls kept with the chat (issue #23): stored with the
message, through storage and export/import JSON exactly (any text), an old file without them
still imports, a hostile file is refused with a message naming the field, and none of it
leaks into the answer's text, history, Markdown export or what is sent back, except
Anthropic's signed thinking blocks when thinking is on."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fixtures_util import FIXTURES
from pysse import ChatStream, ReasoningBlock, ToolCall
from pysse.app.message_view import kept_thought_label
from pysse.app.settings import coerce
from pysse.call.request import build_body, thinking_budget
from pysse.chats.conversation import Conversation, ImportError_
from pysse.chats.files import export_json, parse_import
from pysse.chats.message_extras import MAX_BLOCKS, join_tool_calls
from pysse.server.demo import XSS_ANSWER

FORMATS = ["openai-chat", "openai-responses", "anthropic", "gemini"]


def recorded() -> ChatStream:
    """A real Anthropic answer with a signed thinking block, a redacted one, two tool calls."""
    cs = ChatStream("anthropic")
    cs.feed((FIXTURES / "anthropic_thinking_tools.sse").read_bytes())
    cs.close()
    return cs


def chat_with(
    reasoning: tuple[ReasoningBlock, ...], calls: tuple[ToolCall, ...], text: str = "Sunny."
) -> Conversation:
    conv = Conversation("c1", tag="")  # (no tab tag: ids m1, m2)
    user = conv.add_user("weather?")
    answer = conv.start_answer(user.id)
    conv.finish(
        answer.id, text, "completed", reasoning=reasoning, thought_ms=12_345.0, tool_calls=calls
    )
    return conv


def round_trip(conv: Conversation) -> Conversation:
    got, _ = parse_import(export_json(conv, {}), set())
    return got


def test_a_recorded_answers_reasoning_and_calls_survive_export_and_import() -> None:
    cs = recorded()
    conv = chat_with(cs.reasoning_blocks, cs.tool_calls, cs.text)
    got = round_trip(conv).messages["m2"]
    assert got.reasoning == cs.reasoning_blocks  # text, signature, the redacted block's data
    assert got.reasoning_text == cs.reasoning
    assert got.tool_calls == cs.tool_calls  # id, name, arguments exactly
    assert got.thought_ms == 12_345.0
    # and through storage (the same JSON, as ChatStore writes it)
    stored = Conversation.from_json(json.loads(json.dumps(conv.to_json())))
    assert stored.messages["m2"].reasoning == cs.reasoning_blocks


text_st = st.text(st.characters(codec="utf-8"), max_size=200)
block_st = st.builds(
    ReasoningBlock,
    index=st.integers(0, 50),
    text=text_st,
    signature=text_st,
    redacted=st.booleans(),
    data=text_st,
)
call_st = st.builds(
    ToolCall,
    index=st.integers(0, 1000),
    id=st.none() | text_st.filter(bool),
    name=st.none() | text_st.filter(bool),
    arguments=text_st,
)


@settings(max_examples=150, deadline=None)
@given(
    blocks=st.lists(block_st, max_size=5),
    calls=st.lists(call_st, max_size=5, unique_by=lambda c: c.index),
    text=text_st,
)
def test_any_reasoning_and_tool_call_text_round_trips(
    blocks: list[ReasoningBlock], calls: list[ToolCall], text: str
) -> None:
    # a block's data is kept only for a redacted block (the only one that has any)
    blocks = [b if b.redacted else ReasoningBlock(b.index, b.text, b.signature) for b in blocks]
    conv = chat_with(tuple(blocks), tuple(calls), text)
    got = round_trip(conv).messages["m2"]
    assert got.reasoning == tuple(blocks)
    assert got.tool_calls == tuple(calls)
    assert got.text == text  # the reasoning never joins the answer's text
    assert got.thought_ms == (12_345.0 if blocks else None)


def test_an_old_file_without_reasoning_or_calls_still_imports() -> None:
    conv = chat_with((), ())
    doc = conv.to_json()
    assert "reasoning" not in doc["messages"][1] and "tool_calls" not in doc["messages"][1]
    got = round_trip(conv).messages["m2"]
    assert got.reasoning == () and got.tool_calls == () and got.thought_ms is None
    assert got.text == "Sunny."


def hostile(**fields: Any) -> str:
    doc = chat_with((), ()).to_json()
    doc["messages"][1].update(fields)
    return json.dumps(doc)


@pytest.mark.parametrize(
    ("fields", "names"),
    [
        ({"reasoning": "think"}, "message 1 'reasoning' must be a list"),
        ({"reasoning": [1]}, "message 1 'reasoning' item 0 is not an object"),
        ({"reasoning": [{"text": 5}]}, "message 1 reasoning block 0 'text' must be text"),
        ({"reasoning": [{"signature": []}]}, "reasoning block 0 'signature' must be text"),
        ({"tool_calls": {"name": "x"}}, "message 1 'tool_calls' must be a list"),
        ({"tool_calls": [{"arguments": {"a": 1}}]}, "tool call 0 'arguments' must be text"),
        ({"tool_calls": [{"name": 1}]}, "tool call 0 'name' must be text"),
        ({"tool_calls": [{}] * (MAX_BLOCKS + 1)}, f"a list of at most {MAX_BLOCKS}"),
    ],
)
def test_a_hostile_file_is_refused_naming_the_field(fields: dict[str, Any], names: str) -> None:
    with pytest.raises(ImportError_, match=names):
        parse_import(hostile(**fields), set())


def test_odd_but_harmless_values_are_read_safely() -> None:
    text = hostile(
        reasoning=[{"text": XSS_ANSWER, "index": -3, "redacted": "yes"}],
        tool_calls=[{"name": "<img src=x onerror=alert(1)>", "arguments": XSS_ANSWER, "id": None}],
    )
    got = parse_import(text, set())[0].messages["m2"]
    assert got.reasoning == (ReasoningBlock(0, XSS_ANSWER),)  # index 0, not redacted
    assert got.thought_ms is None
    with pytest.raises(ImportError_, match="message 1's 'thought_ms' must be a number"):
        parse_import(hostile(reasoning=[{"text": "t"}], thought_ms="12"), set())  # refused
    assert got.tool_calls == (ToolCall(0, None, "<img src=x onerror=alert(1)>", XSS_ANSWER),)


def test_a_continued_answer_with_calls_in_both_pieces_is_kept_whole() -> None:
    """Each piece's stream numbers its calls from 0: joined as they were, the saved chat
    repeated an index, and it could not be read back (the chat opened empty after a
    reload). The pieces' calls are numbered one after the other."""
    cs = recorded()  # two calls, indices 3 and 4 (their content blocks)
    again = recorded()
    calls = join_tool_calls(cs.tool_calls, again.tool_calls)
    assert [c.index for c in calls] == [3, 4, 8, 9]
    assert [c.id for c in calls] == [c.id for c in cs.tool_calls + again.tool_calls]
    got = round_trip(chat_with(cs.reasoning_blocks, calls, cs.text)).messages["m2"]
    assert got.tool_calls == calls
    assert join_tool_calls((), again.tool_calls) == again.tool_calls


def test_a_repeated_call_index_is_numbered_after_the_others() -> None:
    # (a continued answer saved before join_tool_calls): every call is kept, none hidden
    text = hostile(tool_calls=[{"index": 1, "name": "a"}, {"index": 1, "name": "b"}, {"name": "c"}])
    got = parse_import(text, set())[0].messages["m2"].tool_calls
    assert [(c.index, c.name) for c in got] == [(1, "a"), (2, "b"), (3, "c")]


def test_a_user_message_never_carries_reasoning() -> None:
    doc = chat_with((), ()).to_json()
    doc["messages"][0]["reasoning"] = [{"text": "sneaky"}]
    doc["messages"][0]["tool_calls"] = [{"name": "x"}]
    got = Conversation.from_json(doc).messages["m1"]
    assert got.reasoning == () and got.tool_calls == ()
    assert "reasoning" not in got.to_json()


def test_reasoning_stays_out_of_text_history_and_markdown() -> None:
    cs = recorded()
    conv = chat_with(cs.reasoning_blocks, cs.tool_calls, cs.text)
    user = conv.add_user("and tomorrow?")
    thought = cs.reasoning_blocks[0].text
    assert thought and all(thought not in t for _, t in conv.history(user.id))
    assert thought not in conv.to_markdown()
    assert str(cs.tool_calls[0].id) not in conv.to_markdown()


def test_anthropic_gets_its_signed_thinking_back_when_thinking_is_on() -> None:
    cs = recorded()
    conv = chat_with(cs.reasoning_blocks, cs.tool_calls, cs.text)
    conv = round_trip(conv)  # as after a reload or an import
    user = conv.add_user("and tomorrow?")
    body = build_body("anthropic", conv.turns(user.id), thinking=2048)
    signed, hidden = cs.reasoning_blocks
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["max_tokens"] > 2048  # the budget must stay below max_tokens
    assert body["messages"][1] == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": signed.text, "signature": signed.signature},
            {"type": "redacted_thinking", "data": hidden.data},
            {"type": "text", "text": cs.text},
        ],
    }
    assert body["messages"][0] == {"role": "user", "content": "weather?"}
    off = build_body("anthropic", conv.turns(user.id))  # thinking off: text only
    assert off["messages"][1] == {"role": "assistant", "content": cs.text}
    assert "thinking" not in off


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "anthropic"])
def test_the_other_formats_never_send_reasoning_back(fmt: str) -> None:
    cs = recorded()
    conv = chat_with(cs.reasoning_blocks, cs.tool_calls, cs.text)
    user = conv.add_user("and tomorrow?")
    sent = json.dumps(build_body(fmt, conv.turns(user.id), thinking=2048))
    assert cs.reasoning_blocks[0].signature not in sent
    assert cs.reasoning_blocks[0].text[:40] not in sent
    assert build_body(fmt, conv.turns(user.id)) == build_body(fmt, conv.history(user.id))


def test_turns_match_history_with_the_reasoning_beside() -> None:
    cs = recorded()
    conv = chat_with(cs.reasoning_blocks, (), cs.text)
    empty = conv.start_answer(conv.add_user("again").id)  # an empty failed answer: left out
    conv.finish(empty.id, "", "error")
    user = conv.add_user("third")
    assert [(t.role, t.text) for t in conv.turns(user.id)] == conv.history(user.id)
    assert [t.reasoning for t in conv.turns(user.id)] == [(), cs.reasoning_blocks, (), ()]


def test_finish_keeps_the_reasoning_a_later_save_does_not_name() -> None:
    cs = recorded()
    conv = chat_with(cs.reasoning_blocks, cs.tool_calls)
    conv.finish("m2", "Sunny. More.", "completed")  # e.g. a continuation without reasoning
    msg = conv.messages["m2"]
    assert msg.reasoning == cs.reasoning_blocks and msg.tool_calls == cs.tool_calls


def test_the_thinking_setting_is_a_budget_of_zero_or_more() -> None:
    assert coerce("thinking", "4096") == 4096
    assert coerce("thinking", "") == 0 and coerce("thinking", "-5") == 0
    assert coerce("thinking", "lots") == 0
    assert coerce("thinking", "1e12") == 128_000


def test_a_restored_answers_summary_line() -> None:
    assert kept_thought_label(12_300, False, 10) == "Thought for 12 s"
    assert kept_thought_label(None, False, 10) == "Reasoning"  # imported: no duration
    assert kept_thought_label(None, True, 0) == "Reasoning hidden by the provider"
    assert kept_thought_label(None, True, 3) == "Reasoning (partly hidden by the provider)"


def test_continue_asks_anthropic_for_no_thinking() -> None:
    """Anthropic refuses a prefill (Continue's partial answer) while thinking is on."""
    assert thinking_budget("anthropic", 2048, continuing=True) == 0
    assert thinking_budget("anthropic", 2048, continuing=False) == 2048
    assert thinking_budget("gemini", 2048, continuing=True) == 2048
    assert thinking_budget("openai-chat", -1, continuing=False) == 0
