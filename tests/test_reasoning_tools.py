"""Reasoning and tool calls below the UI (issue #23): each format's recordings decode to the
same reasoning blocks and calls, every encoded stream survives being cut at any byte, the
encoders write what the recordings show, and a later turn sends reasoning back as each
provider requires."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fixtures_util import FIXTURES
from pysse import (
    Accumulator,
    ChatStream,
    Outcome,
    ReasoningBlock,
    ReasoningDelta,
    ToolCall,
    ToolCallDelta,
)
from pysse.providers import (
    PROVIDERS,
    BodyOptions,
    HiddenReasoning,
    Reasoning,
    Text,
    ToolUse,
    Turn,
    encode_parts,
)
from pysse.server import demo
from pysse.sse import SSEParser
from pysse.testing import Script

ANSWER = [
    Reasoning(["Two cities — ", "東京 🙂, Lisbon."], signature="c2lnbmVk"),
    HiddenReasoning("b3BhcXVl"),
    Text(["It is sunny ", "in both."]),
    ToolUse("get_weather", ['{"city": ', '"Lis', 'bon"}'], id="call_a"),
    ToolUse("get_weather", ['{"city": "東', '京", "note": "say \\"hi\\"\\n"}'], id="call_b"),
]
HIDDEN_FORMATS = {"openai-responses", "anthropic"}  # the others have no hidden reasoning


def whole(body: bytes, fmt: str = "auto") -> ChatStream:
    cs = ChatStream(fmt)  # type: ignore[arg-type]
    cs.feed(body)
    cs.close()
    return cs


def state(cs: ChatStream) -> tuple[Any, ...]:
    return (cs.text, cs.reasoning, cs.reasoning_blocks, cs.tool_calls, cs.outcome)


# -- the recordings ---------------------------------------------------------------------------


def test_anthropic_thinking_signature_and_redacted_blocks() -> None:
    cs = whole((FIXTURES / "anthropic_thinking_tools.sse").read_bytes())
    thinking, hidden = cs.reasoning_blocks
    assert thinking.index == 0 and thinking.text == cs.reasoning and not thinking.redacted
    assert thinking.signature.startswith("EqQBCgIYAh") and thinking.signature.endswith("sKmh")
    assert hidden == ReasoningBlock(1, "", "", True, hidden.data) and hidden.data.startswith("EmwK")
    assert [(c.index, c.id, c.parsed_arguments()) for c in cs.tool_calls] == [
        (3, "toolu_01A09q90qw90lq917835lq9", {"city": "Lisbon", "unit": "celsius"}),
        (4, "toolu_01B18z4lrp1xk28dmw0t7n2", {"city": "東京", "unit": "celsius"}),
    ]


def test_responses_summary_parts_become_paragraphs_and_encrypted_items_hidden() -> None:
    cs = whole((FIXTURES / "openai_responses_reasoning_tools.sse").read_bytes())
    summary, hidden = cs.reasoning_blocks
    assert (
        summary.text
        == "**Planning**\n\nLisbon and 東京: independent.\n\n**Answering**\n\nCall both."
    )
    assert hidden == ReasoningBlock(1, "", "", True, "gAAAAABor0A0q3Zk==")
    assert [c.name for c in cs.tool_calls] == ["get_weather", "get_weather"]


def test_responses_item_without_streamed_summary() -> None:
    """A reasoning item that ends with no summary shown is hidden reasoning; a server that
    sends the summary (or a call's arguments) only in ``output_item.done`` still counts."""
    events = [
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {"type": "reasoning", "summary": []},
        },
        {
            "type": "response.output_item.done",
            "output_index": 1,
            "item": {
                "type": "reasoning",
                "summary": [
                    {"type": "summary_text", "text": "A"},
                    {"type": "summary_text", "text": "B"},
                ],
            },
        },
        {
            "type": "response.output_item.added",
            "output_index": 2,
            "item": {"type": "function_call", "call_id": "c", "name": "f", "arguments": ""},
        },
        {
            "type": "response.output_item.done",
            "output_index": 2,
            "item": {"type": "function_call", "call_id": "c", "name": "f", "arguments": '{"x":1}'},
        },
        {"type": "response.completed", "response": {"status": "completed"}},
    ]
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
    cs = whole(body)
    assert cs.reasoning_blocks == (
        ReasoningBlock(0, "", "", True, ""),
        ReasoningBlock(1, "A\n\nB", "", False, ""),
    )
    assert cs.tool_calls == (ToolCall(2, "c", "f", '{"x":1}'),)


# -- cut anywhere -------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(PROVIDERS))
def test_reasoning_and_tool_streams_cut_at_every_byte_read_the_same(name: str) -> None:
    body = b"".join(encode_parts(PROVIDERS[name], ANSWER))
    ref = whole(body, name)
    assert ref.outcome == Outcome.COMPLETED and ref.text == "It is sunny in both."
    assert ref.reasoning == "Two cities — 東京 🙂, Lisbon."
    assert [(c.name, c.parsed_arguments()) for c in ref.tool_calls] == [
        ("get_weather", {"city": "Lisbon"}),
        ("get_weather", {"city": "東京", "note": 'say "hi"\n'}),
    ]
    assert [b.redacted for b in ref.reasoning_blocks] == (
        [False, True] if name in HIDDEN_FORMATS else [False]
    )
    for cut in range(1, len(body)):
        cs = ChatStream("auto")
        cs.feed(body[:cut])
        cs.feed(body[cut:])
        cs.close()
        assert state(cs) == state(ref), cut
    one = ChatStream("auto")
    for i in range(len(body)):
        one.feed(body[i : i + 1])
    one.close()
    assert state(one) == state(ref)


def test_anthropic_blocks_keep_their_signature_and_data() -> None:
    cs = whole(b"".join(encode_parts(PROVIDERS["anthropic"], ANSWER)))
    assert cs.reasoning_blocks == (
        ReasoningBlock(0, "Two cities — 東京 🙂, Lisbon.", "c2lnbmVk"),
        ReasoningBlock(1, "", "", True, "b3BhcXVl"),
    )
    assert [c.id for c in cs.tool_calls] == ["call_a", "call_b"]


# -- what the encoders write, against the recordings -----------------------------------------


def kinds(body: bytes) -> list[tuple[str, frozenset[str]]]:
    """Each event as (its kind, the key paths of its payload)."""
    p = SSEParser()
    out = []
    for ev in [*p.feed(body), *p.close()]:
        if ev.data == "[DONE]":
            out.append(("[DONE]", frozenset()))
            continue
        obj = json.loads(ev.data)
        out.append((kind_of(obj), frozenset(paths(obj))))
    return out


def kind_of(obj: dict[str, Any]) -> str:
    if "candidates" in obj:  # gemini: what its parts are
        cand = obj["candidates"][0]
        parts = cand["content"]["parts"]
        what = {
            "functionCall" if "functionCall" in p else "thought" if p.get("thought") else "text"
            for p in parts
        }
        return "gemini:" + "+".join(sorted(what)) + (":finish" if "finishReason" in cand else "")
    if "choices" in obj:  # openai-chat: the delta's keys
        if not obj["choices"]:
            return "chat:usage"
        choice = obj["choices"][0]
        keys = {k for k, v in choice["delta"].items() if v not in (None, "") or k == "role"}
        return "chat:" + "+".join(sorted(keys)) + (":finish" if choice["finish_reason"] else "")
    sub = next(
        (
            obj[k].get("type")
            for k in ("delta", "content_block", "item")
            if isinstance(obj.get(k), dict)
        ),
        None,
    )
    return obj["type"] + (f":{sub}" if sub else "")


def paths(value: Any, prefix: str = "") -> set[str]:
    """Every key path of a payload (a tool call's arguments are the model's, not the API's)."""
    if isinstance(value, dict) and not prefix.endswith((".args", ".input")):
        out = {prefix} if prefix else set()
        for k, v in value.items():
            out |= paths(v, f"{prefix}.{k}")
        return out
    if isinstance(value, list):
        return {prefix}.union(*(paths(v, prefix + "[]") for v in value))
    return {prefix}


RECORDED = {
    "anthropic": ("anthropic_thinking_tools.sse", ANSWER[:1] + ANSWER[1:2] + ANSWER[2:]),
    "openai-responses": ("openai_responses_reasoning_tools.sse", ANSWER),
    "openai-chat": ("openai_chat_reasoning_tools.sse", [ANSWER[0], ANSWER[2], *ANSWER[3:]]),
    "gemini": ("gemini_thinking_tools.sse", [ANSWER[0], ANSWER[2], *ANSWER[3:]]),
}


@pytest.mark.parametrize("name", list(RECORDED))
def test_encoders_write_the_events_and_fields_the_recordings_show(name: str) -> None:
    """The same kinds of events, first seen in the same order, and no field the real API
    does not send (the recordings may send more: optional fields)."""
    fixture, parts = RECORDED[name]
    recorded = kinds((FIXTURES / fixture).read_bytes())
    ours = kinds(b"".join(encode_parts(PROVIDERS[name], parts)))
    if name == "openai-chat":  # the recording has OpenRouter's and vLLM's reasoning keys too
        same = {"chat:reasoning+reasoning_content": "chat:reasoning_content"}
        same["chat:reasoning"] = "chat:reasoning_content"
        recorded = [(same.get(k, k), p) for k, p in recorded]
    first = lambda seq: list(dict.fromkeys(k for k, _ in seq))  # noqa: E731
    assert first(ours) == first(recorded)
    for kind in set(first(ours)):
        mine = set().union(*(p for k, p in ours if k == kind))
        real = set().union(*(p for k, p in recorded if k == kind))
        assert mine <= real, (kind, mine - real)


# -- the accumulator -----------------------------------------------------------------------


def test_interleaved_fragments_land_in_their_own_call_and_empty_deltas_in_none() -> None:
    acc = Accumulator()
    for ev in [
        ToolCallDelta(0, "a", "f"),
        ToolCallDelta(1, "b", "g"),
        ToolCallDelta(0, arguments='{"x":'),
        ToolCallDelta(1, arguments="{}"),
        ToolCallDelta(0, arguments="1}"),
        ToolCallDelta(0),
        ReasoningDelta(""),
        ReasoningDelta("r", 5),
    ]:
        acc.add(ev)
    assert acc.tool_calls == (ToolCall(0, "a", "f", '{"x":1}'), ToolCall(1, "b", "g", "{}"))
    assert acc.reasoning_blocks == (ReasoningBlock(5, "r"),)


def test_parsed_arguments_refuse_incomplete_and_too_deep_json() -> None:
    assert ToolCall(0).parsed_arguments() == {}
    with pytest.raises(ValueError):
        ToolCall(0, arguments='{"x": ').parsed_arguments()
    with pytest.raises(ValueError, match="nest"):
        ToolCall(0, arguments="[" * 5000 + "]" * 5000).parsed_arguments()


# -- sending reasoning back ------------------------------------------------------------------

BLOCKS = (
    ReasoningBlock(0, "think", "sig"),
    ReasoningBlock(1, "", "", True, "opaque"),
    ReasoningBlock(2, "unsigned"),
)
HISTORY = [("user", "hi"), Turn("assistant", "hello", BLOCKS), ("user", "and now?")]


def test_anthropic_sends_thinking_blocks_back_before_the_text_when_thinking_is_on() -> None:
    body = PROVIDERS["anthropic"].build_body(HISTORY, BodyOptions(max_tokens=4096, thinking=2048))
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["messages"][1] == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "think", "signature": "sig"},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "text", "text": "hello"},
        ],
    }
    assert body["messages"][0] == {"role": "user", "content": "hi"}
    off = PROVIDERS["anthropic"].build_body(HISTORY, BodyOptions())
    assert off["messages"][1] == {"role": "assistant", "content": "hello"} and "thinking" not in off


@pytest.mark.parametrize("name", ["openai-chat", "openai-responses", "gemini"])
def test_the_other_formats_drop_reasoning_and_keep_the_text_form(name: str) -> None:
    build = PROVIDERS[name].build_body
    plain = [("user", "hi"), ("assistant", "hello"), ("user", "and now?")]
    assert build(HISTORY, BodyOptions(thinking=1024)) == build(plain, BodyOptions(thinking=1024))
    assert "think" not in json.dumps(build(HISTORY, BodyOptions()))


def test_thinking_asks_each_format_for_reasoning() -> None:
    on = BodyOptions(thinking=1024)
    assert PROVIDERS["gemini"].build_body([("user", "x")], on)["generationConfig"] == {
        "thinkingConfig": {"includeThoughts": True, "thinkingBudget": 1024}
    }
    assert PROVIDERS["openai-responses"].build_body([("user", "x")], on)["reasoning"] == {
        "summary": "auto"
    }
    assert "generationConfig" not in PROVIDERS["gemini"].build_body([("user", "x")], BodyOptions())


# -- the kit and the demo ------------------------------------------------------------------


@pytest.mark.parametrize("name", list(PROVIDERS))
def test_the_kit_scripts_reasoning_and_tool_calls(name: str) -> None:
    cs = Script.answer(
        "Done.",
        name,
        reasoning="Let me see.",
        tool_calls=[ToolUse("f", {"a": 1})],  # type: ignore[arg-type]
    ).chat()
    assert (cs.text, cs.reasoning, cs.outcome) == ("Done.", "Let me see.", Outcome.COMPLETED)
    assert [(c.name, c.parsed_arguments()) for c in cs.tool_calls] == [("f", {"a": 1})]


@pytest.mark.parametrize("name", list(PROVIDERS))
def test_demo_think_and_tools_in_every_format(name: str) -> None:
    think = demo.plan(name, "/demo think", pace=0).chat(name)  # type: ignore[arg-type]
    assert think.reasoning.startswith("**Reading the question**") and "20 times" in think.text
    assert think.reasoning not in think.text and think.outcome == Outcome.COMPLETED
    tools = demo.plan(name, "/demo tools", pace=0).chat(name)  # type: ignore[arg-type]
    assert [c.parsed_arguments() for c in tools.tool_calls] == [
        {"query": 'SSE "Last-Event-ID" reconnect', "limit": 3, "sections": ["spec", "faq"]},
        {"city": "Lisbon", "unit": "celsius"},
        {"city": "東京", "unit": "celsius"},
    ]
    assert tools.text.startswith("Those were three **tool calls**")
    assert "/demo think" in demo.answer_for("/demo help") and "/demo tools" in demo.answer_for(
        "/demo help"
    )


def test_demo_think_reasons_for_a_few_seconds_at_the_usual_pace() -> None:
    """Counted from the script, not timed: the delays of the writes sent before the first
    answer text add up to seconds."""
    script = demo.plan("openai-chat", "/demo think", pace=1.0)
    first_text = script.body.index(b'{"content": "')
    before, sent = 0.0, 0
    for w in script.writes:
        if sent >= first_text:
            break
        before += w.delay
        sent += len(w.data)
    assert 2.0 < before < 15.0, before
