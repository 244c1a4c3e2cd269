"""OpenAI Chat Completions (and every OpenAI-compatible server): unnamed events carrying
``choices[].delta``; the answer is complete only at ``data: [DONE]``."""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..events import ChatEvent, Finish, Outcome, ReasoningDelta, TextDelta, ToolCallDelta, Usage
from ..sse import SSEEvent
from .base import (
    JSON,
    BodyOptions,
    Decoder,
    Message,
    Provider,
    Turn,
    as_dict,
    as_int,
    as_list,
    as_str,
    role_and_text,
    sse_event,
)
from .encoder import CREATED, MODEL, Encoder, Part, Reasoning, ToolUse

__all__ = ["PROVIDER", "ChatEncoder", "OpenAIChatDecoder", "encode_http_error"]


class OpenAIChatDecoder(Decoder):
    terminal_signal = "data: [DONE]"

    def handle_non_json(self, ev: SSEEvent) -> list[ChatEvent] | None:
        if ev.data.strip() == "[DONE]":
            return [Finish(Outcome.COMPLETED, self.reason)]
        return None

    def handle(self, ev: SSEEvent, obj: JSON) -> list[ChatEvent]:
        out: list[ChatEvent] = []
        for choice in as_list(obj.get("choices")):
            choice = as_dict(choice)
            index = as_int(choice.get("index")) or 0
            delta = as_dict(choice.get("delta"))
            # OpenAI-compatible servers stream reasoning beside the content: DeepSeek as
            # reasoning_content, OpenRouter as reasoning; vLLM renamed the one to the other
            # and, for compatibility, some versions send both with the same text: read one.
            reasoning = as_str(delta.get("reasoning_content")) or as_str(delta.get("reasoning"))
            if reasoning:
                out.append(ReasoningDelta(reasoning, index))
            content = as_str(delta.get("content"))
            if content:
                out.append(TextDelta(content, index))
            refusal = as_str(delta.get("refusal"))
            if refusal:
                out.append(TextDelta(refusal, index))
            for call in as_list(delta.get("tool_calls")):
                call = as_dict(call)
                fn = as_dict(call.get("function"))
                out.append(
                    ToolCallDelta(
                        index=as_int(call.get("index")) or 0,
                        id=as_str(call.get("id")),
                        name=as_str(fn.get("name")),
                        arguments=as_str(fn.get("arguments")) or "",
                    )
                )
            reason = as_str(choice.get("finish_reason"))
            if reason:
                self.reason = reason
        usage = as_dict(obj.get("usage"))
        if usage:
            out.append(
                Usage(as_int(usage.get("prompt_tokens")), as_int(usage.get("completion_tokens")))
            )
        return out


def sniff(ev: SSEEvent, obj: JSON | None) -> bool:
    if obj is None:
        return ev.data.strip() == "[DONE]"
    return "choices" in obj or obj.get("object") == "chat.completion.chunk"


def build_body(messages: Sequence[Message | Turn], opts: BodyOptions) -> JSON:
    """Reasoning is never sent back (DeepSeek refuses ``reasoning_content`` in input)."""
    msgs = ([{"role": "system", "content": opts.system}] if opts.system else []) + [
        {"role": r, "content": t} for r, t in map(role_and_text, messages)
    ]
    return {
        "model": opts.model or PROVIDER.default_model,
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": msgs,
    }


def auth_headers(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


def encode_http_error(status: int, message: str) -> bytes:
    """OpenAI's error body (Chat Completions and Responses alike)."""
    kind, code = {
        401: ("invalid_request_error", "invalid_api_key"),
        404: ("invalid_request_error", "model_not_found"),
        429: ("requests", "rate_limit_exceeded"),
    }.get(status, ("server_error" if status >= 500 else "invalid_request_error", None))
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return json.dumps(body, ensure_ascii=False).encode()


class ChatEncoder(Encoder):
    """``chat.completion.chunk`` events as OpenAI streams them: the role first, then one
    ``delta`` per piece (``content``; ``reasoning_content`` as DeepSeek streams reasoning;
    ``tool_calls`` by index, the first fragment naming the call), the finish reason in a
    chunk of its own, a usage chunk with no choices, and ``[DONE]``."""

    def __init__(self) -> None:
        self.part: Part | None = None
        self.calls = 0

    def _chunk(self, delta: JSON, finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return sse_event({**CHUNK_HEAD, "choices": [choice]})

    def start(self) -> list[bytes]:
        return [self._chunk({"role": "assistant", "content": "", "refusal": None})]

    def open(self, part: Part) -> list[bytes]:
        self.part = part
        if not isinstance(part, ToolUse):
            return []  # text and reasoning need no opening; hidden reasoning has no form here
        self.calls += 1
        call = {
            "index": self.calls - 1,
            "id": part.id or f"call_{self.calls - 1}",
            "type": "function",
            "function": {"name": part.name, "arguments": ""},
        }
        return [self._chunk({"tool_calls": [call]})]

    def delta(self, piece: str) -> list[bytes]:
        if isinstance(self.part, ToolUse):
            call = {"index": self.calls - 1, "function": {"arguments": piece}}
            return [self._chunk({"tool_calls": [call]})]
        key = "reasoning_content" if isinstance(self.part, Reasoning) else "content"
        return [self._chunk({key: piece})]

    def end(self, output_tokens: int) -> list[bytes]:
        usage = {
            "prompt_tokens": 12,
            "completion_tokens": output_tokens,
            "total_tokens": 12 + output_tokens,
        }
        return [
            self._chunk({}, "tool_calls" if self.calls else "stop"),
            sse_event({**CHUNK_HEAD, "choices": [], "usage": usage}),
            b"data: [DONE]\n\n",
        ]

    def error(self, message: str) -> list[bytes]:
        body = {"message": message, "type": "server_error", "param": None, "code": None}
        return [sse_event({"error": body})]


CHUNK_HEAD: JSON = {
    "id": "chatcmpl-pysse",
    "object": "chat.completion.chunk",
    "created": CREATED,
    "model": MODEL,
    "system_fingerprint": "fp_pysse",
}


PROVIDER = Provider(
    name="openai-chat",
    label="OpenAI Chat Completions",
    decoder=OpenAIChatDecoder,
    sniff=sniff,
    build_body=build_body,
    endpoint="/chat/completions",
    auth_headers=auth_headers,
    encoder=ChatEncoder,
    encode_http_error=encode_http_error,
    demo_path="/v1/chat/completions",
    default_model="gpt-4.1",
)
