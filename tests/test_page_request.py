"""page/request.py: the request body per format, the relay URL, the extra header lines."""

from __future__ import annotations

import pytest

from pysse.page.request import build_body, parse_header_lines, relay_url


def test_bodies_per_format() -> None:
    msgs = [("user", "hi"), ("assistant", "hello"), ("user", "more")]
    oc = build_body("openai-chat", msgs, system="be brief")
    assert oc["messages"][0] == {"role": "system", "content": "be brief"}
    assert oc["stream"] is True and oc["stream_options"] == {"include_usage": True}
    assert build_body("auto", msgs)["messages"][-1] == {"role": "user", "content": "more"}
    an = build_body("anthropic", msgs, system="s", model="m")
    assert an["system"] == "s" and an["model"] == "m" and an["max_tokens"] > 0
    rs = build_body("openai-responses", msgs, system="s")
    assert rs["instructions"] == "s" and rs["input"][1]["role"] == "assistant"
    gm = build_body("gemini", msgs, system="s")
    assert [c["role"] for c in gm["contents"]] == ["user", "model", "user"]
    assert gm["systemInstruction"] == {"parts": [{"text": "s"}]}


def test_relay_url_resolution() -> None:
    site = {"relay": "", "demo": {"anthropic": "/v1/messages"}}
    assert (
        relay_url("https://mine.example/chat", "anthropic", site, "http://h")
        == "https://mine.example/chat"
    )
    assert relay_url("", "anthropic", site, "http://h/") == "http://h/v1/messages"
    assert relay_url("", "anthropic", {**site, "relay": "/relay"}, "http://h") == "/relay"


def test_header_lines() -> None:
    assert parse_header_lines("X-Relay-Secret: abc\nbad line\nX-A:1:2\n: x") == {
        "X-Relay-Secret": "abc",
        "X-A": "1:2",
    }


def test_unknown_format_is_a_value_error_naming_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="openai-chat, openai-responses, anthropic, gemini"):
        build_body("cohere", [("user", "hi")])
