"""The official SDKs as clients (issue #26), each call as its users write it, reduced to one
shape so every server (the kit, the demo relay, the reference relay) is checked the same way.

The SDKs are real and pinned (the test extra): a missing one is a failure, not a skip.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anthropic
import openai
from google import genai
from google.genai import types as gtypes

from pysse import ChatStream

KEY = "sk-the-sdk-key"
HI = [{"role": "user", "content": "hi"}]


@dataclass
class Got:
    """What an SDK made of a stream: its accumulated text, reasoning, calls and ending."""

    text: str
    reasoning: str = ""
    calls: list[tuple[str, Any]] = field(default_factory=list)
    stop: str | None = None
    output_tokens: int | None = None


def expected(cs: ChatStream) -> Got:
    """The same, as pysse read the stream."""
    calls = [(c.name or "", c.parsed_arguments()) for c in cs.tool_calls]
    out = cs.usage.output_tokens if cs.usage else None
    return Got(cs.text, cs.reasoning, calls, cs.finish_reason, out)


def _oa(base: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base + "/v1", api_key=KEY, max_retries=0)


def chat_create(base: str, prompt: str) -> Got:
    """``chat.completions.create(stream=True)``, the chunks added up by hand."""
    stream = _oa(base).chat.completions.create(
        model="gpt-test",
        messages=[{"role": "user", "content": prompt}],
        stream=True,
        stream_options={"include_usage": True},
    )
    return _chat_chunks(list(stream))


def _chat_chunks(chunks: list[Any]) -> Got:
    got = Got("")
    calls: dict[int, list[Any]] = {}
    for chunk in chunks:
        if chunk.usage:
            got.output_tokens = chunk.usage.completion_tokens
        for choice in chunk.choices:
            got.text += choice.delta.content or ""
            got.reasoning += (choice.delta.model_extra or {}).get("reasoning_content") or ""
            for call in choice.delta.tool_calls or []:
                entry = calls.setdefault(call.index, ["", ""])
                if call.function and call.function.name:
                    entry[0] = call.function.name
                entry[1] += (call.function.arguments or "") if call.function else ""
            got.stop = choice.finish_reason or got.stop
    got.calls = [(name, json.loads(args)) for name, args in calls.values()]
    return got


def chat_async(base: str, prompt: str) -> Got:
    async def run() -> list[Any]:
        client = openai.AsyncOpenAI(base_url=base + "/v1", api_key=KEY, max_retries=0)
        stream = await client.chat.completions.create(
            model="gpt-test",
            messages=[{"role": "user", "content": prompt}],
            stream=True,
            stream_options={"include_usage": True},
        )
        return [chunk async for chunk in stream]

    return _chat_chunks(asyncio.run(run()))


def chat_helper(base: str, prompt: str) -> Got:
    """The ``chat.completions.stream()`` helper and its accumulated final completion."""
    with _oa(base).chat.completions.stream(
        model="gpt-test", messages=[{"role": "user", "content": prompt}]
    ) as stream:
        for _ in stream:
            pass
        final = stream.get_final_completion()
    msg = final.choices[0].message
    calls = [(c.function.name, json.loads(c.function.arguments)) for c in msg.tool_calls or []]
    reasoning = (msg.model_extra or {}).get("reasoning_content") or ""
    tokens = final.usage.completion_tokens if final.usage else None
    return Got(msg.content or "", reasoning, calls, final.choices[0].finish_reason, tokens)


def _response(final: Any) -> Got:
    reasoning = "".join(
        s.text for item in final.output if item.type == "reasoning" for s in item.summary
    )
    calls = [(i.name, json.loads(i.arguments)) for i in final.output if i.type == "function_call"]
    tokens = final.usage.output_tokens if final.usage else None
    return Got(final.output_text, reasoning, calls, final.status, tokens)


def responses_stream(base: str, prompt: str) -> Got:
    """The ``responses.stream()`` helper and ``get_final_response()``."""
    with _oa(base).responses.stream(model="gpt-test", input=prompt) as stream:
        for _ in stream:
            pass
        return _response(stream.get_final_response())


def responses_async(base: str, prompt: str) -> Got:
    """``AsyncOpenAI().responses.create(stream=True)``: the completed event's response."""

    async def run() -> Any:
        client = openai.AsyncOpenAI(base_url=base + "/v1", api_key=KEY, max_retries=0)
        stream = await client.responses.create(model="gpt-test", input=prompt, stream=True)
        final = None
        async for event in stream:
            if event.type == "response.completed":
                final = event.response
        return final

    return _response(asyncio.run(run()))


def anthropic_stream(base: str, prompt: str) -> Got:
    """``messages.stream()`` and ``get_final_message()`` (text, stop_reason, usage)."""
    client = anthropic.Anthropic(base_url=base, api_key=KEY, max_retries=0)
    with client.messages.stream(
        model="claude-test", max_tokens=1024, messages=[{"role": "user", "content": prompt}]
    ) as stream:
        for _ in stream:
            pass
        final = stream.get_final_message()
    text = "".join(b.text for b in final.content if b.type == "text")
    reasoning = "".join(b.thinking for b in final.content if b.type == "thinking")
    calls = [(b.name, b.input) for b in final.content if b.type == "tool_use"]
    return Got(text, reasoning, calls, final.stop_reason, final.usage.output_tokens)


def gemini_stream(base: str, prompt: str, api_version: str | None = None) -> Got:
    """google-genai's ``generate_content_stream`` (its default API version: v1)."""
    options = gtypes.HttpOptions(base_url=base, api_version=api_version)
    client = genai.Client(api_key=KEY, http_options=options)
    got = Got("")
    for chunk in client.models.generate_content_stream(model="gemini-test", contents=prompt):
        cand = (chunk.candidates or [None])[0]
        for part in (cand.content.parts or []) if cand and cand.content else []:
            if part.text and part.thought:
                got.reasoning += part.text
            elif part.text:
                got.text += part.text
            if part.function_call:
                got.calls.append((part.function_call.name, part.function_call.args))
        if cand and cand.finish_reason:
            got.stop = cand.finish_reason.value
        if chunk.usage_metadata and chunk.usage_metadata.candidates_token_count is not None:
            got.output_tokens = chunk.usage_metadata.candidates_token_count
    return got


def gemini_v1beta(base: str, prompt: str) -> Got:
    return gemini_stream(base, prompt, "v1beta")


Client = Callable[[str, str], Got]
CLIENTS: dict[str, list[Client]] = {
    "openai-chat": [chat_create, chat_async, chat_helper],
    "openai-responses": [responses_stream, responses_async],
    "anthropic": [anthropic_stream],
    "gemini": [gemini_stream, gemini_v1beta],
}
SDK_VERSIONS = {
    "openai": openai.__version__,
    "anthropic": anthropic.__version__,
    "google-genai": genai.__version__,
}
