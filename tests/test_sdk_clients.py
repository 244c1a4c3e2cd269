"""The official SDKs as clients (issue #26): openai (sync, async, the chat and responses
stream helpers), anthropic (``messages.stream()``), google-genai (``generate_content_stream``,
v1 and v1beta) read every stream pysse writes, through the testing kit, the demo relay and
the reference relay, in every format: text, reasoning and tool calls alike. And each event
validates against the SDK's own types (the encoders are strict)."""

from __future__ import annotations

import json
import typing
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google import genai
from google.genai import errors as gerrors
from google.genai import types as gtypes

from pysse.providers import PROVIDERS, HiddenReasoning, Reasoning, Text, ToolUse, encode_parts
from pysse.server import demo
from pysse.server.app import create_app
from pysse.server.relay import RelayConfig, create_relay_app
from pysse.sse import SSEParser
from pysse.testing import LiveServer, Script, ScriptServer
from sdk_clients import CLIENTS, KEY, expected

CALLS = [ToolUse("get_weather", {"city": "Lisbon"}), ToolUse("get_weather", {"city": "東京"})]
CASES: dict[str, dict[str, Any]] = {
    "text": {},
    "reasoning": {"reasoning": "First, the **capital**. Then the rest."},
    "tools": {"tool_calls": CALLS},
    "cite": {"citations": demo.CITATIONS},
}
TEXT = 'Lisbon — Лиссабон, 東京 🙂, and "quotes"\nline two.'
PAIRS = [(fmt, c) for fmt, clients in CLIENTS.items() for c in clients]
IDS = [f"{fmt}-{c.__name__}" for fmt, c in PAIRS]


def script(fmt: str, case: str) -> Script:
    return Script.answer(TEXT, fmt, **CASES[case])  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def kit() -> Iterator[ScriptServer]:
    with ScriptServer() as server:
        yield server


@pytest.fixture(scope="module")
def demo_relay() -> Iterator[LiveServer]:
    with LiveServer(create_app(None, demo_pace=0.0)) as live:
        yield live


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize(("fmt", "client"), PAIRS, ids=IDS)
def test_the_sdks_read_the_kits_streams(
    kit: ScriptServer, fmt: str, client: Any, case: str
) -> None:
    s = script(fmt, case)
    kit.play(s)
    assert client(kit.url, "hi") == expected(s.chat(fmt))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "prompt", ["/demo echo Hello, SDK — 東京!", "/demo think", "/demo tools", "/demo cite"]
)
@pytest.mark.parametrize(("fmt", "client"), PAIRS, ids=IDS)
def test_the_sdks_read_the_demo_relay(
    demo_relay: LiveServer, fmt: str, client: Any, prompt: str
) -> None:
    got = client(demo_relay.url, prompt)
    want = expected(demo.plan(fmt, prompt, pace=0).chat(fmt))  # type: ignore[arg-type]
    assert got == want
    assert got.text and (got.reasoning if "think" in prompt else True)
    assert len(got.calls) == (3 if "tools" in prompt else 0)


def _sdk_sources(fmt: str, base: str) -> list[str]:
    """The cited URLs each SDK's own accumulator kept from ``/demo cite``."""
    ask = [{"role": "user", "content": "/demo cite"}]
    if fmt == "openai-responses":
        oa = openai.OpenAI(base_url=base + "/v1", api_key=KEY, max_retries=0)
        with oa.responses.stream(model="gpt-test", input="/demo cite") as stream:
            for _ in stream:
                pass
            final = stream.get_final_response()
        parts = [p for item in final.output if item.type == "message" for p in item.content]
        return [a.url for p in parts if p.type == "output_text" for a in p.annotations]
    if fmt == "anthropic":
        client = anthropic.Anthropic(base_url=base, api_key=KEY, max_retries=0)
        with client.messages.stream(model="claude-test", max_tokens=99, messages=ask) as s:
            for _ in s:
                pass
            message = s.get_final_message()
        blocks = [b for b in message.content if b.type == "text"]
        return [c.url for b in blocks for c in b.citations or [] if hasattr(c, "url")]
    if fmt == "openai-chat":
        oa = openai.OpenAI(base_url=base + "/v1", api_key=KEY, max_retries=0)
        chunks = oa.chat.completions.create(model="gpt-test", messages=ask, stream=True)  # type: ignore[arg-type]
        notes = [
            (c.choices[0].delta.model_extra or {}).get("annotations") for c in chunks if c.choices
        ]
        return [n["url_citation"]["url"] for ns in notes if ns for n in ns]
    options = gtypes.HttpOptions(base_url=base)
    client_g = genai.Client(api_key=KEY, http_options=options)
    urls = []
    for chunk in client_g.models.generate_content_stream(
        model="gemini-test", contents="/demo cite"
    ):
        for cand in chunk.candidates or []:
            meta = cand.grounding_metadata
            urls += [c.web.uri for c in (meta.grounding_chunks if meta else None) or [] if c.web]
    return [u for u in urls if u]


@pytest.mark.parametrize("fmt", list(CLIENTS))
def test_each_sdk_keeps_the_citations_of_demo_cite(demo_relay: LiveServer, fmt: str) -> None:
    urls = _sdk_sources(fmt, demo_relay.url)
    assert set(urls) == {c.url for c in demo.CITATIONS}, fmt


@pytest.mark.parametrize("fmt", list(CLIENTS))
def test_the_sdks_read_the_reference_relay_with_a_scripted_upstream(
    kit: ScriptServer, fmt: str
) -> None:
    base = kit.url + ("/v1beta" if fmt == "gemini" else "/v1")
    cfg = RelayConfig(upstream=base, format=fmt, api_key="the-relays-key", allow_origins=[])
    with LiveServer(create_relay_app(cfg)) as relay:
        for client in CLIENTS[fmt]:
            for case in CASES:
                s = script(fmt, case)
                kit.play(s)
                assert client(relay.url, "hi") == expected(s.chat(fmt)), (client, case)  # type: ignore[arg-type]
                sent = kit.last_request
                assert KEY not in json.dumps(dict(sent.headers)) and "the-relays-key" in json.dumps(
                    dict(sent.headers)
                )


# -- errors the SDKs surface -----------------------------------------------------------------


def test_a_provider_error_mid_stream_reaches_each_sdk_with_its_message(kit: ScriptServer) -> None:
    import sdk_clients as c

    def failing(fmt: str) -> None:
        kit.play(Script.answer(TEXT, fmt, error_after=3, error_message="Overloaded (scripted)."))  # type: ignore[arg-type]

    failing("openai-chat")
    with pytest.raises(openai.APIError, match="Overloaded"):
        c.chat_create(kit.url, "hi")
    failing("anthropic")
    with pytest.raises(anthropic.APIStatusError, match="Overloaded"):
        c.anthropic_stream(kit.url, "hi")
    failing("openai-responses")
    with c._oa(kit.url).responses.create(model="m", input="hi", stream=True) as stream:
        errors = [e for e in stream if e.type == "error"]
    assert [e.message for e in errors] == ["Overloaded (scripted)."]
    failing("gemini")
    with pytest.raises(gerrors.APIError, match="Overloaded"):
        c.gemini_stream(kit.url, "hi")


@pytest.mark.parametrize("status", [401, 429, 500])
def test_the_kits_http_errors_are_the_sdks_own_errors(kit: ScriptServer, status: int) -> None:
    import sdk_clients as c

    expect = {
        "openai-chat": (c.chat_create, openai.APIStatusError),
        "openai-responses": (c.responses_stream, openai.APIStatusError),
        "anthropic": (c.anthropic_stream, anthropic.APIStatusError),
        "gemini": (c.gemini_stream, gerrors.APIError),
    }
    for fmt, (client, error) in expect.items():
        kit.play(Script.http_error(status, f"Scripted {status} — 東京.", format=fmt))  # type: ignore[arg-type]
        with pytest.raises(error, match=f"Scripted {status}") as got:
            client(kit.url, "hi")
        code = getattr(got.value, "status_code", None) or getattr(got.value, "code", None)
        assert code == status, fmt


# -- the paths SDKs call ---------------------------------------------------------------------


def test_gemini_generate_content_is_a_clear_400_and_unknown_paths_json_404s(
    demo_relay: LiveServer, kit: ScriptServer
) -> None:
    from google import genai

    cfg = RelayConfig(upstream=kit.url + "/v1beta", format="gemini", api_key="k", allow_origins=[])
    with LiveServer(create_relay_app(cfg)) as relay:
        for base in (demo_relay.url, relay.url):
            client = genai.Client(api_key=KEY, http_options=gtypes.HttpOptions(base_url=base))
            with pytest.raises(gerrors.ClientError, match="generate_content_stream") as err:
                client.models.generate_content(model="gemini-test", contents="hi")
            assert err.value.code == 400
            for path in ("/v1/nothing", "/v1beta/models/x:countTokens"):
                resp = httpx.post(base + path, json={})
                assert (
                    resp.status_code == 404 and resp.headers["content-type"] == "application/json"
                )
                assert "/v1/models/MODEL:streamGenerateContent" in resp.json()["error"]["message"]
        wrong = httpx.put(relay.url + "/v1beta/models/x:streamGenerateContent")
        assert wrong.status_code == 405 and wrong.json()["error"]["type"] == "method_not_allowed"
        other = httpx.get(relay.url + "/v1/messages")  # another format's path: never a bare 405
        assert (
            other.status_code == 404
            and "POST to /v1/models/MODEL" in other.json()["error"]["message"]
        )
    assert httpx.put(demo_relay.url + "/v1/messages").status_code == 405


# -- strict encoders: every event is one the SDK's own types accept --------------------------

ANSWERS = {
    "text": [Text(["Hi ", "there"])],
    "reasoning": [Reasoning(["Let me ", "think."]), HiddenReasoning(), Text(["Done."])],
    "tools": [Text(["Checking."]), *CALLS],
    "tools-first": [*CALLS, Text(["Then text."])],
    "cite": [Text(["Cited ", "text."], demo.CITATIONS), Text(["Cited again."], demo.CITATIONS)],
}


def _by_type(union: Any) -> Any:
    """Validate an event with the SDK class its ``type`` names (the unions' members)."""
    members = typing.get_args(typing.get_args(union)[0]) or typing.get_args(union)
    classes = {typing.get_args(m.model_fields["type"].annotation)[0]: m for m in members}

    def validate(obj: dict[str, Any]) -> None:
        classes[obj["type"]].model_validate(obj)

    return validate


def _validators() -> dict[str, Any]:
    from anthropic.types import RawMessageStreamEvent
    from openai.types.chat import ChatCompletionChunk
    from openai.types.responses import ResponseStreamEvent

    messages = _by_type(RawMessageStreamEvent)
    return {
        "openai-chat": ChatCompletionChunk.model_validate,
        "openai-responses": _by_type(ResponseStreamEvent),
        "anthropic": lambda obj: None if obj["type"] == "ping" else messages(obj),
        "gemini": gtypes.GenerateContentResponse.model_validate,  # extra="forbid": no made-up keys
    }


@pytest.mark.parametrize("answer", list(ANSWERS))
@pytest.mark.parametrize("fmt", list(PROVIDERS))
def test_every_encoded_event_validates_against_the_sdks_types(fmt: str, answer: str) -> None:
    validate = _validators()[fmt]
    body = b"".join(encode_parts(PROVIDERS[fmt], ANSWERS[answer]))
    parser = SSEParser()
    events = [*parser.feed(body), *parser.close()]
    assert events and not any(e.event == "message" and e.data.startswith(":") for e in events)
    for ev in events:
        if ev.data != "[DONE]":
            validate(json.loads(ev.data))
    assert b"\n:" not in body and not body.startswith(
        b":"
    )  # no comments: google-genai fails on them
