"""Anthropic Messages: named events (``message_start``, ``content_block_delta``, ...);
complete only at ``message_stop``."""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..events import (
    ChatEvent,
    Finish,
    Outcome,
    ProviderError,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    Usage,
)
from ..sse import SSEEvent
from .base import JSON, BodyOptions, Decoder, Message, Provider, as_dict, as_int, as_str, sse_event

__all__ = ["PROVIDER", "AnthropicDecoder"]

EVENTS = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "ping",
    }
)


class AnthropicDecoder(Decoder):
    terminal_signal = "message_stop"

    def __init__(self) -> None:
        self.input_tokens: int | None = None

    def handle(self, ev: SSEEvent, obj: JSON) -> list[ChatEvent]:
        kind = as_str(obj.get("type")) or ev.event
        index = as_int(obj.get("index")) or 0
        if kind == "content_block_delta":
            delta = as_dict(obj.get("delta"))
            dtype = delta.get("type")
            if dtype == "text_delta":
                return [TextDelta(as_str(delta.get("text")) or "", index)]
            if dtype == "thinking_delta":
                return [ReasoningDelta(as_str(delta.get("thinking")) or "", index)]
            if dtype == "input_json_delta":
                partial = as_str(delta.get("partial_json")) or ""
                return [ToolCallDelta(index=index, arguments=partial)]
            return []  # signature_delta, citations_delta, future types
        if kind == "content_block_start":
            block = as_dict(obj.get("content_block"))
            if block.get("type") == "tool_use":
                return [ToolCallDelta(index, as_str(block.get("id")), as_str(block.get("name")))]
            if block.get("type") == "text" and as_str(block.get("text")):
                return [TextDelta(block["text"], index)]
            return []
        if kind == "message_start":
            usage = as_dict(as_dict(obj.get("message")).get("usage"))
            self.input_tokens = as_int(usage.get("input_tokens"))
            if self.input_tokens is not None:
                return [Usage(self.input_tokens, as_int(usage.get("output_tokens")))]
            return []
        if kind == "message_delta":
            self.reason = as_str(as_dict(obj.get("delta")).get("stop_reason")) or self.reason
            usage = as_dict(obj.get("usage"))
            if usage:
                inp = as_int(usage.get("input_tokens"))
                return [
                    Usage(
                        inp if inp is not None else self.input_tokens,
                        as_int(usage.get("output_tokens")),
                    )
                ]
            return []
        if kind == "message_stop":
            return [Finish(Outcome.COMPLETED, self.reason)]
        if kind == "error":
            err = as_dict(obj.get("error"))
            return [
                ProviderError(
                    kind=str(err.get("type") or "error"),
                    message=str(err.get("message") or "the provider reported an error"),
                    raw=ev.data,
                )
            ]
        return []  # ping, content_block_stop, unknown types


def sniff(ev: SSEEvent, obj: JSON | None) -> bool:
    kind = ev.event if ev.event != "message" else (as_str(obj.get("type")) if obj else None)
    return kind in EVENTS


def build_body(messages: Sequence[Message], opts: BodyOptions) -> JSON:
    body: JSON = {
        "model": opts.model or PROVIDER.default_model,
        "max_tokens": opts.max_tokens,
        "stream": True,
        "messages": [{"role": r, "content": t} for r, t in messages],
    }
    if opts.system:
        body["system"] = opts.system
    return body


def auth_headers(key: str) -> dict[str, str]:
    return {"x-api-key": key, "anthropic-version": "2023-06-01"}


def _event(obj: JSON) -> bytes:
    return sse_event(obj, str(obj["type"]))


def encode_start() -> list[bytes]:
    message = {
        "id": "msg_demo",
        "type": "message",
        "role": "assistant",
        "model": "demo",
        "content": [],
        "usage": {"input_tokens": 12, "output_tokens": 1},
    }
    return [
        _event({"type": "message_start", "message": message}),
        _event(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            }
        ),
    ]


def encode_delta(text: str) -> bytes:
    return _event(
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}
    )


def encode_error(message: str) -> bytes:
    return _event({"type": "error", "error": {"type": "overloaded_error", "message": message}})


ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def encode_http_error(status: int, message: str) -> bytes:
    kind = ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    body = {"type": "error", "error": {"type": kind, "message": message}}
    return json.dumps(body, ensure_ascii=False).encode()


def encode_end(text: str, output_tokens: int) -> list[bytes]:
    return [
        _event({"type": "content_block_stop", "index": 0}),
        _event(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": output_tokens},
            }
        ),
        _event({"type": "message_stop"}),
    ]


PROVIDER = Provider(
    name="anthropic",
    label="Anthropic Messages",
    decoder=AnthropicDecoder,
    sniff=sniff,
    build_body=build_body,
    endpoint="/messages",
    auth_headers=auth_headers,
    encode_start=encode_start,
    encode_delta=encode_delta,
    encode_error=encode_error,
    encode_end=encode_end,
    encode_http_error=encode_http_error,
    demo_path="/v1/messages",
    default_model="claude-sonnet-4-5",
    prefill=True,
)
