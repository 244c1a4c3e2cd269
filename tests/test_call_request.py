"""call/request.py: the request body per format, the relay URL, the extra header lines."""

from __future__ import annotations

import pytest

from pysse.call.request import (
    advertised_format,
    body_format,
    build_body,
    check_relay_url,
    has_demo,
    needs_format_probe,
    parse_header_lines,
    relay_url,
)


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


def test_a_static_site_without_a_relay_has_nowhere_to_send() -> None:
    static = {"relay": "", "pyodide": "pyodide/", "wheels": []}
    assert relay_url("", "auto", static, "http://h") is None
    assert not has_demo(static) and has_demo({"demo": {"openai-chat": "/v1/chat/completions"}})
    assert relay_url("https://r.example/relay", "auto", static, "http://h") == (
        "https://r.example/relay"
    )


def test_body_format_prefers_what_the_relay_says_for_auto() -> None:
    assert body_format("anthropic", {"format": "gemini"}, "openai-chat") == "anthropic"
    assert body_format("auto", {"format": "gemini"}, "anthropic") == "anthropic"
    assert body_format("auto", {"format": "gemini"}) == "gemini"
    assert body_format("auto", {}) == "openai-chat"
    assert body_format("auto", {}, "bogus") == "openai-chat"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", None),
        ("/relay", None),
        ("http://127.0.0.1:8787/relay", None),
        ("https://relay.example", None),
        ("relay.example/relay", "must start with https://"),
        ("ftp://relay.example/", "must start with https://"),
        ("//relay.example/relay", "must start with https://"),
        ("http:///relay", "no host name"),
        ("http://r.example:80x/relay", "port is not a number"),
        ("http://r.example/relay?x=1", "?query"),
        ("http://r.example/ relay", "spaces"),
    ],
)
def test_relay_url_validation(text: str, problem: str | None) -> None:
    got = check_relay_url(text)
    assert (got is None) if problem is None else (problem in (got or "")), got


def test_header_lines() -> None:
    assert parse_header_lines("X-Relay-Secret: abc\nbad line\nX-A:1:2\n: x") == {
        "X-Relay-Secret": "abc",
        "X-A": "1:2",
    }


def test_unknown_format_is_a_value_error_naming_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="openai-chat, openai-responses, anthropic, gemini"):
        build_body("cohere", [("user", "hi")])


def test_the_page_asks_a_real_relay_for_its_format_only_when_it_must() -> None:
    assert needs_format_probe("auto", "http://r/relay", {})
    assert needs_format_probe("auto", "", {"relay": "http://r/relay"})
    assert not needs_format_probe("auto", "", {"demo": {}})  # the demo speaks every format
    assert not needs_format_probe("anthropic", "http://r/relay", {})
    assert not needs_format_probe("auto", "http://r/relay", {"format": "gemini"})
    assert advertised_format('{"relay": "pysse", "format": "anthropic"}') == "anthropic"
    assert advertised_format('{"relay": "other", "format": "anthropic"}') is None
    assert advertised_format('{"relay": "pysse", "format": "cohere"}') is None
    assert advertised_format("<html>") is None
