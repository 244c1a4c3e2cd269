"""Files attached to a question (issue #43, item 1): checked where they are made, written in
each format's own shape, accepted by the official SDKs, and described by the demo relay."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google.genai import types as gtypes
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image
from pydantic import TypeAdapter

from pysse import AttachmentError
from pysse.call.request import build_body
from pysse.providers import FORMATS, Attachment, Turn
from pysse.providers.attachments import MAX_IMAGE_BYTES, MAX_TEXT_CHARS
from pysse.server import demo
from pysse.server.app import create_app
from pysse.server.body import too_large
from pysse.server.demo_received import Received, describe, received_files
from pysse.testing import LiveServer

KEY = "sk-the-sdk-key"
FMTS = FORMATS[1:]


def png(width: int, height: int, fmt: str = "PNG") -> str:
    """An image of that size, in base64."""
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 90)).save(out, fmt)
    return base64.b64encode(out.getvalue()).decode()


IMAGE = Attachment.image("cat.png", "image/png", png(37, 21))
NOTES = Attachment.text("notes.md", "# Notes\n\nthree lines\nof text\n")
QUESTION = Turn("user", "What is in these files?", attachments=(IMAGE, NOTES))


def last_user_content(fmt: str, body: dict[str, Any]) -> Any:
    if fmt == "gemini":
        return body["contents"][-1]["parts"]
    return body["input" if fmt == "openai-responses" else "messages"][-1]["content"]


# -- made and checked --------------------------------------------------------------------


def test_an_image_of_a_type_no_model_takes_is_refused_by_name() -> None:
    with pytest.raises(AttachmentError, match=r"photo\.bmp: image/bmp .*PNG, JPEG, GIF or WebP"):
        Attachment.image("photo.bmp", "image/bmp", png(2, 2))


def test_data_that_is_not_base64_is_refused() -> None:
    with pytest.raises(AttachmentError, match=r"x\.png: .*not base64"):
        Attachment.image("x.png", "image/png", "not*base64!")


def test_a_too_large_image_or_text_is_refused_with_the_fix() -> None:
    big = base64.b64encode(b"\0" * (MAX_IMAGE_BYTES + 1)).decode()
    with pytest.raises(AttachmentError, match="scale it down"):
        Attachment.image("big.png", "image/png", big)
    with pytest.raises(AttachmentError, match="attach a part of it"):
        Attachment.text("big.txt", "x" * (MAX_TEXT_CHARS + 1))


@given(st.text(max_size=400))
def test_a_files_name_is_one_bounded_line(name: str) -> None:
    got = Attachment.text(name, "").name
    assert got and "\n" not in got and "\r" not in got and len(got) <= 200


# -- each format's shape -----------------------------------------------------------------

WANT: dict[str, list[dict[str, Any]]] = {
    "openai-chat": [
        {"type": "text", "text": QUESTION.text},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{IMAGE.data}"}},
        {"type": "text", "text": f"notes.md:\n\n{NOTES.data}"},
    ],
    "openai-responses": [
        {"type": "input_text", "text": QUESTION.text},
        {
            "type": "input_image",
            "image_url": f"data:image/png;base64,{IMAGE.data}",
            "detail": "auto",
        },
        {"type": "input_text", "text": f"notes.md:\n\n{NOTES.data}"},
    ],
    "anthropic": [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": IMAGE.data},
        },
        {"type": "text", "text": f"notes.md:\n\n{NOTES.data}"},
        {"type": "text", "text": QUESTION.text},
    ],
    "gemini": [
        {"inline_data": {"mime_type": "image/png", "data": IMAGE.data}},
        {"text": f"notes.md:\n\n{NOTES.data}"},
        {"text": QUESTION.text},
    ],
}


@pytest.mark.parametrize("fmt", FMTS)
def test_each_format_gets_its_own_shape_and_earlier_turns_stay_text(fmt: str) -> None:
    body = build_body(fmt, [("user", "hi"), ("assistant", "hello"), QUESTION])
    assert last_user_content(fmt, body) == WANT[fmt]
    plain = build_body(fmt, [("user", "hi"), ("assistant", "hello"), ("user", QUESTION.text)])
    text_only = last_user_content(fmt, plain)
    assert text_only in (QUESTION.text, [{"text": QUESTION.text}])  # no files: as before


def test_the_shapes_are_the_sdks_own_types() -> None:
    """Each part validates against the official SDK's request types (a wrong key or type
    name fails here, as the provider would refuse it with a 400)."""
    from anthropic.types import MessageParam
    from openai.types.chat import ChatCompletionUserMessageParam
    from openai.types.responses import EasyInputMessageParam

    for fmt, adapter in (
        ("openai-chat", TypeAdapter(ChatCompletionUserMessageParam)),
        ("openai-responses", TypeAdapter(EasyInputMessageParam)),
        ("anthropic", TypeAdapter(MessageParam)),
    ):
        msg = {"role": "user", "content": WANT[fmt]}
        # (content is an Iterable in their types: validated as it is read)
        assert list(adapter.validate_python(msg)["content"]) == WANT[fmt], fmt
        broken = {"role": "user", "content": [{"type": "picture", "data": IMAGE.data}]}
        with pytest.raises(ValueError):
            list(adapter.validate_python(broken)["content"])
    # Gemini's SDK types are pydantic models: the page's JSON parses into them, bytes and all
    content = gtypes.Content.model_validate_json(
        json.dumps({"role": "user", "parts": WANT["gemini"]})
    )
    parts = content.parts or []
    assert parts[0].inline_data is not None
    assert parts[0].inline_data.data == base64.b64decode(IMAGE.data)
    assert parts[0].inline_data.mime_type == "image/png"


# -- the demo relay says what it received -------------------------------------------------


@pytest.mark.parametrize("fmt", FMTS)
def test_the_demo_relay_reads_every_formats_files(fmt: str) -> None:
    jpeg = Attachment.image("p.jpg", "image/jpeg", png(640, 480, "JPEG"))
    body = build_body(fmt, [Turn("user", "look", attachments=(IMAGE, jpeg, NOTES))])
    got = received_files(body, fmt)
    size = len(base64.b64decode(IMAGE.data))
    assert got[0] == Received("image", "image/png", size, 37, 21)
    assert (got[1].media_type, got[1].width, got[1].height) == ("image/jpeg", 640, 480)
    assert got[2] == Received("text", "text/plain", len(f"notes.md:\n\n{NOTES.data}"))
    assert len(got) == 3
    assert received_files(build_body(fmt, [("user", "no files")]), fmt) == []


def test_an_unreadable_image_is_described_not_raised() -> None:
    body = {"messages": [{"role": "user", "content": [
        {"type": "text", "text": "q"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,@@"}},
        {"type": "image_url", "image_url": {"url": "https://example.org/cat.png"}},
    ]}]}  # fmt: skip
    got = received_files(body, "openai-chat")
    assert [(r.size, r.width) for r in got] == [(3, -1), (-1, -1)]
    assert "pixels unreadable" in describe(got)


@pytest.fixture(scope="module")
def demo_relay() -> Iterator[LiveServer]:
    with LiveServer(create_app(None, demo_pace=0.0)) as live:
        yield live


def _oa(base: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base + "/v1", api_key=KEY, max_retries=0)


def sent_by_sdk(fmt: str, base: str, message: Turn) -> str:
    """The demo relay's answer to ``message``, sent by the format's official SDK with the
    content pysse writes for it."""
    content = last_user_content(fmt, build_body(fmt, [message]))
    if fmt == "openai-chat":
        stream = _oa(base).chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": content}], stream=True
        )
        return "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    if fmt == "openai-responses":
        events = _oa(base).responses.create(
            model="gpt-test", input=[{"role": "user", "content": content}], stream=True
        )
        return "".join(e.delta for e in events if e.type == "response.output_text.delta")
    if fmt == "anthropic":
        client = anthropic.Anthropic(base_url=base, api_key=KEY, max_retries=0)
        with client.messages.stream(
            model="claude-test", max_tokens=1024, messages=[{"role": "user", "content": content}]
        ) as s:
            return "".join(s.text_stream)
    raw = httpx.post(  # Gemini's SDK takes bytes, not base64: the wire body as the page sends it
        f"{base}/v1beta/models/gemini-test:streamGenerateContent?alt=sse",
        json={"contents": [{"role": "user", "parts": content}]},
        headers={"x-goog-api-key": KEY},
    )
    chunks = [json.loads(line[5:]) for line in raw.text.splitlines() if line.startswith("data:")]
    return "".join(
        p.get("text", "") for c in chunks for p in c["candidates"][0]["content"]["parts"]
    )


@pytest.mark.parametrize("fmt", FMTS)
def test_each_sdk_sends_the_files_and_the_demo_relay_describes_them(
    demo_relay: LiveServer, fmt: str
) -> None:
    message = Turn("user", "/demo echo seen", attachments=(IMAGE, NOTES))
    answer = sent_by_sdk(fmt, demo_relay.url, message)
    size = len(base64.b64decode(IMAGE.data))
    assert answer.startswith("I received 2 files:"), answer[:200]
    assert f"image/png, {size:,} bytes, 37×21 px" in answer
    assert f"a text file, {len(NOTES.as_text()):,} characters" in answer


def test_the_demo_relay_without_files_answers_as_before() -> None:
    assert describe([]) == ""
    script = demo.plan("openai-chat", "/demo echo plain", pace=0)
    assert script.chat("openai-chat").text == "plain"


def test_a_body_over_the_limit_names_the_flag() -> None:
    assert "--max-body" in too_large(1000) and "1,000 bytes" in too_large(1000)
