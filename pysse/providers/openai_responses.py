"""OpenAI Responses API: named ``response.*`` events; complete at ``response.completed`` or
``response.incomplete`` (which still ends the answer as the provider intended)."""

from __future__ import annotations

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
from .openai_chat import encode_http_error

__all__ = ["PROVIDER", "OpenAIResponsesDecoder"]


class OpenAIResponsesDecoder(Decoder):
    terminal_signal = "response.completed"

    def handle(self, ev: SSEEvent, obj: JSON) -> list[ChatEvent]:
        kind = as_str(obj.get("type")) or ev.event
        index = as_int(obj.get("output_index")) or 0
        if kind in ("response.output_text.delta", "response.refusal.delta"):
            return [TextDelta(as_str(obj.get("delta")) or "", index)]
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            return [ReasoningDelta(as_str(obj.get("delta")) or "", index)]
        if kind == "response.output_item.added":
            item = as_dict(obj.get("item"))
            if item.get("type") == "function_call":
                return [
                    ToolCallDelta(
                        index=index,
                        id=as_str(item.get("call_id")) or as_str(item.get("id")),
                        name=as_str(item.get("name")),
                        arguments=as_str(item.get("arguments")) or "",
                    )
                ]
            return []
        if kind == "response.function_call_arguments.delta":
            return [ToolCallDelta(index=index, arguments=as_str(obj.get("delta")) or "")]
        if kind in ("response.completed", "response.incomplete"):
            response = as_dict(obj.get("response"))
            out: list[ChatEvent] = []
            usage = as_dict(response.get("usage"))
            if usage:
                out.append(
                    Usage(as_int(usage.get("input_tokens")), as_int(usage.get("output_tokens")))
                )
            reason = as_str(response.get("status")) or kind.split(".", 1)[1]
            details = as_dict(response.get("incomplete_details"))
            if kind == "response.incomplete" and as_str(details.get("reason")):
                reason = f"incomplete: {details['reason']}"
            out.append(Finish(Outcome.COMPLETED, reason))
            return out
        if kind == "response.failed":
            err = as_dict(as_dict(obj.get("response")).get("error"))
            return [
                ProviderError(
                    kind=str(err.get("code") or "response.failed"),
                    message=str(err.get("message") or "the response failed"),
                    raw=ev.data,
                )
            ]
        if kind == "error":
            err = as_dict(obj.get("error")) or obj
            return [
                ProviderError(
                    kind=str(err.get("code") or err.get("type") or "error"),
                    message=str(err.get("message") or "the provider reported an error"),
                    raw=ev.data,
                )
            ]
        return []  # response.created, *.done, content_part.*, unknown types: nothing to show


def sniff(ev: SSEEvent, obj: JSON | None) -> bool:
    kind = ev.event if ev.event != "message" else (as_str(obj.get("type")) if obj else None)
    return (kind or "").startswith("response.")


def build_body(messages: Sequence[Message], opts: BodyOptions) -> JSON:
    body: JSON = {
        "model": opts.model or PROVIDER.default_model,
        "stream": True,
        "input": [{"role": r, "content": t} for r, t in messages],
    }
    if opts.system:
        body["instructions"] = opts.system
    return body


def auth_headers(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


def _event(obj: JSON) -> bytes:
    return sse_event(obj, str(obj["type"]))


def encode_start() -> list[bytes]:
    resp = {"id": "resp_demo", "object": "response", "status": "in_progress", "model": "demo"}
    item = {"id": "msg_demo", "type": "message", "role": "assistant", "content": []}
    return [
        _event({"type": "response.created", "response": resp}),
        _event({"type": "response.output_item.added", "output_index": 0, "item": item}),
    ]


def encode_delta(text: str) -> bytes:
    return _event(
        {
            "type": "response.output_text.delta",
            "item_id": "msg_demo",
            "output_index": 0,
            "content_index": 0,
            "delta": text,
        }
    )


def encode_error(message: str) -> bytes:
    return _event({"type": "error", "code": "server_error", "message": message})


def encode_end(text: str, output_tokens: int) -> list[bytes]:
    usage = {"input_tokens": 12, "output_tokens": output_tokens}
    return [
        _event(
            {
                "type": "response.output_text.done",
                "output_index": 0,
                "content_index": 0,
                "text": text,
            }
        ),
        _event(
            {
                "type": "response.completed",
                "response": {"id": "resp_demo", "status": "completed", "usage": usage},
            }
        ),
    ]


PROVIDER = Provider(
    name="openai-responses",
    label="OpenAI Responses",
    decoder=OpenAIResponsesDecoder,
    sniff=sniff,
    build_body=build_body,
    endpoint="/responses",
    auth_headers=auth_headers,
    encode_start=encode_start,
    encode_delta=encode_delta,
    encode_error=encode_error,
    encode_end=encode_end,
    encode_http_error=encode_http_error,  # the same error body as Chat Completions
    demo_path="/v1/responses",
    default_model="gpt-5",
)
