"""call/diagnose.py: every failed request as words a person can act on."""

from __future__ import annotations

import json

from fake_upstream import EVENTS
from pysse.call.diagnose import (
    Probe,
    format_mismatch,
    http_failure,
    not_a_stream,
    setup_notice,
    stream_format,
    unreachable,
)
from pysse.providers import PROVIDERS, encode_answer

PAGE = "http://127.0.0.1:5000"
URL = "http://127.0.0.1:8787/relay"
HTTP_SERVER_501 = """<!DOCTYPE HTML>
<html lang="en"><head><meta charset="utf-8"><title>Error response</title></head>
<body><h1>Error response</h1><p>Error code: 501</p>
<p>Message: Unsupported method ('POST').</p></body></html>"""


def probe(**kw: object) -> Probe:
    return Probe.from_json(json.dumps(kw))


def test_html_error_bodies_become_their_title_never_markup() -> None:
    m = http_failure(501, HTTP_SERVER_501, "text/html", url=PAGE + "/v1/chat/completions")
    assert m.startswith("HTTP 501 Not Implemented: Error response")
    assert "Unsupported method ('POST')" in m
    assert "<" not in m and "does not look like a relay" in m
    assert http_failure(405, "Method Not Allowed", "text/plain", url=URL).startswith(
        "HTTP 405 Method Not Allowed —"
    )


def test_relay_errors_keep_the_providers_message() -> None:
    body = json.dumps({"error": {"message": "Invalid API key", "type": "auth"}})
    m = http_failure(401, body, "application/json", url=URL, from_relay=True)
    assert m == "HTTP 401 Unauthorized: Invalid API key"
    assert "(retry after 7 s)" in http_failure(429, "{}", "", url=URL, retry_after="7")


def test_not_a_stream_names_the_type_and_the_page() -> None:
    m = not_a_stream(200, "text/html; charset=utf-8", "<title>Home</title>", URL)
    assert "200 with text/html, not text/event-stream" in m and "(Home)" in m


def test_format_mismatch_both_ways() -> None:
    openai = b"".join(EVENTS)
    anthropic = b"".join(encode_answer(PROVIDERS["anthropic"], ["hi"]))
    assert stream_format(openai) == "openai-chat" and stream_format(anthropic) == "anthropic"
    assert format_mismatch("anthropic", stream_format(openai)) == (
        "this is an OpenAI Chat Completions stream but Format is Anthropic Messages: set Format "
        "to auto or OpenAI Chat Completions in Settings"
    )
    assert "Format is OpenAI Chat" in (format_mismatch("openai-chat", "anthropic") or "")
    assert format_mismatch("auto", "anthropic") is None
    assert format_mismatch("anthropic", "anthropic") is None
    assert format_mismatch("anthropic", None, advertised="gemini") is not None


def test_failed_to_fetch_is_diagnosed_from_the_probe() -> None:
    down = unreachable(URL, PAGE, {}, probe(reached=False, error="TypeError: Failed to fetch"))
    assert down.startswith(f"could not reach the relay at {URL}: the relay is not running")
    https = unreachable(URL, "https://chat.example", {}, probe(reached=False))
    assert "this page is https and the relay http" in https

    refused = {"error": {"type": "origin_not_allowed", "message": "..."}}
    origin = unreachable(
        URL, PAGE, {}, probe(reached=True, status=403, relay="1", text=json.dumps(refused))
    )
    assert origin == (
        f"the relay at {URL} does not allow the origin {PAGE}; start it with --allow-origin {PAGE}"
    )
    info = {"relay": "pysse", "allow_headers": ["content-type", "x-relay-secret"]}
    header = unreachable(
        URL,
        PAGE,
        {"content-type": "application/json", "accept": "text/event-stream", "X-Custom": "1"},
        probe(reached=True, status=200, relay="1", text=json.dumps(info)),
    )
    assert "refused the preflight: the request header x-custom is not allowed" in header
    assert "--allow-header x-custom" in header
    other = unreachable(URL, PAGE, {}, probe(reached=True, status=404, relay="", text="nope"))
    assert "not as a relay that allows this page" in other
    assert Probe.from_json("not json").reached is False


def test_setup_notice_says_what_to_run_and_where_the_url_goes() -> None:
    text = setup_notice(PAGE)
    assert "pip install 'pysse[relay]'" in text and f"--allow-origin {PAGE}" in text
    assert "Settings → Relay URL" in text and "build.py site DIR --relay URL" in text
