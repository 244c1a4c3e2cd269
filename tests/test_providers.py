"""providers/: the registry, and each format's encoder read back by its own decoder (and by
``auto``) exactly, at every chunking. Decoding itself is tested against hand-written fixtures
in test_chat.py, never against these encoders."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from pysse import ChatStream, Outcome
from pysse.providers import (
    FORMATS,
    PROVIDERS,
    Format,
    detect_format,
    encode_answer,
    error_message,
    get_provider,
)
from pysse.sse import SSEParser

TEXT = 'Hello — 東京 🙂\nline two, with "quotes" and \\ backslashes\r\n and a tab\t.'


def deltas(seed: int = 1) -> list[str]:
    rnd = random.Random(seed)
    out, i = [], 0
    while i < len(TEXT):
        n = rnd.randint(1, 6)
        out.append(TEXT[i : i + n])
        i += n
    return out


def test_the_registry_names_every_format_once() -> None:
    assert FORMATS[0] == "auto"
    assert list(FORMATS[1:]) == list(PROVIDERS)
    assert all(p.name == name and p.label for name, p in PROVIDERS.items())


def test_unknown_format_names_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="expected one of openai-chat, openai-responses"):
        get_provider("cohere")


@pytest.mark.parametrize("name", list(PROVIDERS))
@pytest.mark.parametrize("fmt", ["auto", "own"])
def test_encoder_round_trips_through_chatstream_at_every_chunking(name: str, fmt: str) -> None:
    body = b"".join(encode_answer(PROVIDERS[name], deltas()))
    use: Format = "auto" if fmt == "auto" else name  # type: ignore[assignment]
    for size in (1, 2, 7, 64, len(body)):
        cs = ChatStream(use)
        for i in range(0, len(body), size):
            cs.feed(body[i : i + size])
        cs.close()
        assert cs.text == TEXT, (name, size)
        assert cs.outcome == Outcome.COMPLETED
        assert cs.detected_format == name
        assert cs.usage is not None and cs.usage.output_tokens


@pytest.mark.parametrize("name", list(PROVIDERS))
def test_encoder_faults_decode_as_documented(name: str) -> None:
    provider = PROVIDERS[name]
    dropped = ChatStream(name)  # type: ignore[arg-type]
    dropped.feed(b"".join(encode_answer(provider, deltas(), terminal=False)))
    dropped.close()
    assert dropped.outcome == Outcome.TRUNCATED and dropped.text == TEXT
    err = ChatStream(name)  # type: ignore[arg-type]
    err.feed(b"".join(encode_answer(provider, deltas(), error_at=3, error_message="boom")))
    assert err.outcome == Outcome.ERROR and err.error is not None
    assert err.error.message == "boom" and err.text == "".join(deltas()[:3])
    bad = ChatStream(name)  # type: ignore[arg-type]
    bad.feed(b"".join(encode_answer(provider, deltas(), malformed_at=2)))
    assert bad.outcome == Outcome.ERROR and bad.error is not None
    assert bad.error.kind == "malformed"


@pytest.mark.parametrize("name", list(PROVIDERS))
@pytest.mark.parametrize("status", [401, 429, 500, 503])
def test_http_error_bodies_carry_the_message(name: str, status: int) -> None:
    body = PROVIDERS[name].encode_http_error(status, "Rate limit — slow down")
    assert error_message(body.decode()) == "Rate limit — slow down"
    assert isinstance(json.loads(body)["error"], dict)


@pytest.mark.parametrize("name", list(PROVIDERS))
def test_each_format_is_detected_from_its_own_events(name: str) -> None:
    body = b"".join(encode_answer(PROVIDERS[name], deltas()))
    found = {
        detect_format(ev, None if ev.data == "[DONE]" else _obj(ev.data)) for ev in _events(body)
    }
    assert found - {None} == {name}


def _events(body: bytes) -> list[object]:
    p = SSEParser()
    return [*p.feed(body), *p.close()]


def _obj(data: str) -> dict[str, object] | None:
    import json

    loaded = json.loads(data)
    return loaded if isinstance(loaded, dict) else None


def test_upstream_urls() -> None:
    chat, gemini = PROVIDERS["openai-chat"], PROVIDERS["gemini"]
    assert chat.upstream_url("https://api.x/v1/", "m") == "https://api.x/v1/chat/completions"
    assert chat.upstream_url("https://api.x/v1/chat/completions", "m").count("/chat/") == 1
    assert (
        gemini.upstream_url("https://g.x/v1beta", "gemini-pro")
        == "https://g.x/v1beta/models/gemini-pro:streamGenerateContent?alt=sse"
    )
    assert gemini.upstream_url("https://g.x/v1beta", "").endswith(
        f"/models/{gemini.default_model}:streamGenerateContent?alt=sse"
    )
    full = "https://g.x/v1beta/models/a:streamGenerateContent?alt=sse"
    assert gemini.upstream_url(full, "b") == full


def test_auth_headers_per_format() -> None:
    assert PROVIDERS["openai-chat"].auth_headers("k") == {"authorization": "Bearer k"}
    assert PROVIDERS["anthropic"].auth_headers("k")["x-api-key"] == "k"
    assert PROVIDERS["gemini"].auth_headers("k") == {"x-goog-api-key": "k"}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('{"error": {"message": "Invalid key", "type": "auth"}}', "Invalid key"),
        ('{"error": "plain"}', "plain"),
        ('{"message": "top level"}', "top level"),
        ("  just text \n", "just text"),
        ('["not", "an", "object"]', '["not", "an", "object"]'),
    ],
)
def test_error_message_from_any_error_body(body: str, message: str) -> None:
    assert error_message(body) == message


# -- the model that writes the answer ------------------------------------------------------


@pytest.mark.parametrize("fmt", ["openai-chat", "openai-responses", "anthropic", "gemini"])
def test_the_stream_names_the_model_that_writes_the_answer(fmt: str) -> None:
    from pysse.providers import encode_answer, get_provider

    cs = ChatStream(fmt)
    for event in encode_answer(get_provider(fmt), ["hel", "lo"]):  # reports the model "demo"
        cs.feed(event)
    assert cs.model == "demo"
    assert ChatStream(fmt).model is None  # nothing said yet


@pytest.mark.parametrize(
    ("fmt", "payload", "want"),
    [
        ("openai-chat", {"model": "x" * 5000, "choices": []}, "x" * 200),
        ("openai-chat", {"model": 42, "choices": []}, None),
        ("openai-chat", {"model": "  gpt\n4.1  ", "choices": []}, "gpt 4.1"),
        ("openai-responses", {"type": "response.created", "response": {"model": "o4"}}, "o4"),
        ("anthropic", {"type": "message_start", "message": {"model": ["no"]}}, None),
        ("gemini", {"candidates": [], "modelVersion": "gemini-2.5-pro"}, "gemini-2.5-pro"),
    ],
)
def test_a_reported_model_is_a_bounded_line_or_nothing(
    fmt: str, payload: dict[str, object], want: str | None
) -> None:
    cs = ChatStream(fmt)
    cs.feed(f"data: {json.dumps(payload)}\n\n".encode())
    assert cs.model == want
    if want is not None:  # the first mention counts
        later = dict(payload, model="other", modelVersion="other")
        cs.feed(f"data: {json.dumps(later)}\n\n".encode())
        assert cs.model == want


@pytest.mark.parametrize(
    ("fixture", "fmt"),
    [
        ("openai_chat_text.sse", "openai-chat"),
        ("openai_responses_text.sse", "openai-responses"),
        ("anthropic_text.sse", "anthropic"),
        ("gemini_text.sse", "gemini"),
    ],
)
def test_each_captured_stream_names_its_model(fixture: str, fmt: str) -> None:
    raw = (Path(__file__).parent / "fixtures" / fixture).read_bytes()
    for name in (fmt, "auto"):
        cs = ChatStream(name)
        cs.feed(raw)
        model = cs.model
        assert model and model != "demo" and model in raw.decode(), (fixture, name, model)
