"""SSE events -> chat events, one small adapter per provider wire format.

Each adapter reads one decoded JSON payload at a time and returns the chat events it means.
An adapter returns a :class:`Finish` only for the format's own terminal signal; everything
else about how an answer ends (truncation, malformed payloads, Stop) is decided by
``ChatStream``, so no adapter can ever call a dead connection "done".

Formats, from the providers' public streaming docs:

* ``openai-chat``: Chat Completions. Unnamed events, ``choices[].delta``; done only at
  ``data: [DONE]``.
* ``openai-responses``: Responses API. Named events ``response.*``; done at
  ``response.completed`` / ``response.incomplete``.
* ``anthropic``: Messages. Named events; done at ``message_stop``.
* ``gemini``: ``streamGenerateContent?alt=sse``. Unnamed events with ``candidates``; done when a
  chunk carries ``finishReason``.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from .events import (
    ChatEvent,
    Finish,
    Outcome,
    ProviderError,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    Usage,
)
from .sse import SSEEvent

__all__ = ["ADAPTERS", "FORMATS", "Adapter", "detect_format", "error_from_payload"]

JSON = dict[str, Any]


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _dict(value: object) -> JSON:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def error_from_payload(obj: JSON, raw: str) -> ProviderError | None:
    """A ``{"error": {...}}`` payload (any provider) as a ProviderError, else None."""
    err = obj.get("error")
    if isinstance(err, str):
        return ProviderError(kind="error", message=err, raw=raw)
    if not isinstance(err, dict):
        return None
    kind = err.get("type") or err.get("status") or err.get("code") or "error"
    message = err.get("message") or json.dumps(err, ensure_ascii=False)[:500]
    status = _int(err.get("code"))
    return ProviderError(kind=str(kind), message=str(message), status=status, raw=raw)


class Adapter:
    """Translate one provider's payloads. Subclasses keep whatever state their format needs."""

    name: ClassVar[str] = ""
    terminal_signal: ClassVar[str] = ""  # for "truncated: the stream ended before ..."
    reason: str | None = None  # the provider's finish reason, once it said one

    def handle(self, ev: SSEEvent, obj: JSON) -> list[ChatEvent]:
        raise NotImplementedError

    def handle_non_json(self, ev: SSEEvent) -> list[ChatEvent] | None:
        """A payload that is not JSON: return events if the format expects it, else None."""
        return None


class OpenAIChat(Adapter):
    name = "openai-chat"
    terminal_signal = "data: [DONE]"

    def handle_non_json(self, ev: SSEEvent) -> list[ChatEvent] | None:
        if ev.data.strip() == "[DONE]":
            return [Finish(Outcome.COMPLETED, self.reason)]
        return None

    def handle(self, ev: SSEEvent, obj: JSON) -> list[ChatEvent]:
        out: list[ChatEvent] = []
        for choice in _list(obj.get("choices")):
            choice = _dict(choice)
            index = _int(choice.get("index")) or 0
            delta = _dict(choice.get("delta"))
            # Several OpenAI-compatible servers stream reasoning beside the content.
            for key in ("reasoning_content", "reasoning"):
                reasoning = _str(delta.get(key))
                if reasoning:
                    out.append(ReasoningDelta(reasoning, index))
            content = _str(delta.get("content"))
            if content:
                out.append(TextDelta(content, index))
            refusal = _str(delta.get("refusal"))
            if refusal:
                out.append(TextDelta(refusal, index))
            for call in _list(delta.get("tool_calls")):
                call = _dict(call)
                fn = _dict(call.get("function"))
                out.append(
                    ToolCallDelta(
                        index=_int(call.get("index")) or 0,
                        id=_str(call.get("id")),
                        name=_str(fn.get("name")),
                        arguments=_str(fn.get("arguments")) or "",
                    )
                )
            reason = _str(choice.get("finish_reason"))
            if reason:
                self.reason = reason
        usage = _dict(obj.get("usage"))
        if usage:
            out.append(
                Usage(_int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens")))
            )
        return out


class OpenAIResponses(Adapter):
    name = "openai-responses"
    terminal_signal = "response.completed"

    def handle(self, ev: SSEEvent, obj: JSON) -> list[ChatEvent]:
        kind = _str(obj.get("type")) or ev.event
        index = _int(obj.get("output_index")) or 0
        if kind in ("response.output_text.delta", "response.refusal.delta"):
            return [TextDelta(_str(obj.get("delta")) or "", index)]
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            return [ReasoningDelta(_str(obj.get("delta")) or "", index)]
        if kind == "response.output_item.added":
            item = _dict(obj.get("item"))
            if item.get("type") == "function_call":
                return [
                    ToolCallDelta(
                        index=index,
                        id=_str(item.get("call_id")) or _str(item.get("id")),
                        name=_str(item.get("name")),
                        arguments=_str(item.get("arguments")) or "",
                    )
                ]
            return []
        if kind == "response.function_call_arguments.delta":
            return [ToolCallDelta(index=index, arguments=_str(obj.get("delta")) or "")]
        if kind in ("response.completed", "response.incomplete"):
            response = _dict(obj.get("response"))
            out: list[ChatEvent] = []
            usage = _dict(response.get("usage"))
            if usage:
                out.append(Usage(_int(usage.get("input_tokens")), _int(usage.get("output_tokens"))))
            reason = _str(response.get("status")) or kind.split(".", 1)[1]
            details = _dict(response.get("incomplete_details"))
            if kind == "response.incomplete" and _str(details.get("reason")):
                reason = f"incomplete: {details['reason']}"
            out.append(Finish(Outcome.COMPLETED, reason))
            return out
        if kind == "response.failed":
            response = _dict(obj.get("response"))
            err = _dict(response.get("error"))
            return [
                ProviderError(
                    kind=str(err.get("code") or "response.failed"),
                    message=str(err.get("message") or "the response failed"),
                    raw=ev.data,
                )
            ]
        if kind == "error":
            err = _dict(obj.get("error")) or obj
            return [
                ProviderError(
                    kind=str(err.get("code") or err.get("type") or "error"),
                    message=str(err.get("message") or "the provider reported an error"),
                    raw=ev.data,
                )
            ]
        return []  # response.created, *.done, content_part.*, unknown types: nothing to show


class Anthropic(Adapter):
    name = "anthropic"
    terminal_signal = "message_stop"

    def __init__(self) -> None:
        self.input_tokens: int | None = None

    def handle(self, ev: SSEEvent, obj: JSON) -> list[ChatEvent]:
        kind = _str(obj.get("type")) or ev.event
        index = _int(obj.get("index")) or 0
        if kind == "content_block_delta":
            delta = _dict(obj.get("delta"))
            dtype = delta.get("type")
            if dtype == "text_delta":
                return [TextDelta(_str(delta.get("text")) or "", index)]
            if dtype == "thinking_delta":
                return [ReasoningDelta(_str(delta.get("thinking")) or "", index)]
            if dtype == "input_json_delta":
                return [ToolCallDelta(index=index, arguments=_str(delta.get("partial_json")) or "")]
            return []  # signature_delta, citations_delta, future types
        if kind == "content_block_start":
            block = _dict(obj.get("content_block"))
            if block.get("type") == "tool_use":
                return [ToolCallDelta(index, _str(block.get("id")), _str(block.get("name")))]
            if block.get("type") == "text" and _str(block.get("text")):
                return [TextDelta(block["text"], index)]
            return []
        if kind == "message_start":
            usage = _dict(_dict(obj.get("message")).get("usage"))
            self.input_tokens = _int(usage.get("input_tokens"))
            if self.input_tokens is not None:
                return [Usage(self.input_tokens, _int(usage.get("output_tokens")))]
            return []
        if kind == "message_delta":
            self.reason = _str(_dict(obj.get("delta")).get("stop_reason")) or self.reason
            usage = _dict(obj.get("usage"))
            if usage:
                inp = _int(usage.get("input_tokens"))
                return [
                    Usage(
                        inp if inp is not None else self.input_tokens,
                        _int(usage.get("output_tokens")),
                    )
                ]
            return []
        if kind == "message_stop":
            return [Finish(Outcome.COMPLETED, self.reason)]
        if kind == "error":
            err = _dict(obj.get("error"))
            return [
                ProviderError(
                    kind=str(err.get("type") or "error"),
                    message=str(err.get("message") or "the provider reported an error"),
                    raw=ev.data,
                )
            ]
        return []  # ping, content_block_stop, unknown types


class Gemini(Adapter):
    name = "gemini"
    terminal_signal = "a chunk with finishReason"

    def handle(self, ev: SSEEvent, obj: JSON) -> list[ChatEvent]:
        out: list[ChatEvent] = []
        finish: str | None = None
        for cand in _list(obj.get("candidates")):
            cand = _dict(cand)
            index = _int(cand.get("index")) or 0
            for part in _list(_dict(cand.get("content")).get("parts")):
                part = _dict(part)
                text = _str(part.get("text"))
                if text:
                    out.append(
                        ReasoningDelta(text, index)
                        if part.get("thought")
                        else TextDelta(text, index)
                    )
                call = part.get("functionCall")
                if isinstance(call, dict):
                    out.append(
                        ToolCallDelta(
                            index=index,
                            id=_str(call.get("id")),
                            name=_str(call.get("name")),
                            arguments=json.dumps(call.get("args", {}), ensure_ascii=False),
                        )
                    )
            finish = _str(cand.get("finishReason")) or finish
        usage = _dict(obj.get("usageMetadata"))
        if usage:
            out.append(
                Usage(_int(usage.get("promptTokenCount")), _int(usage.get("candidatesTokenCount")))
            )
        block = _str(_dict(obj.get("promptFeedback")).get("blockReason"))
        if block:
            out.append(ProviderError(kind="blocked", message=f"the prompt was blocked: {block}"))
        elif finish:
            out.append(Finish(Outcome.COMPLETED, finish))
        return out


ADAPTERS: dict[str, type[Adapter]] = {
    a.name: a for a in (OpenAIChat, OpenAIResponses, Anthropic, Gemini)
}
FORMATS = ("auto", *ADAPTERS)

_ANTHROPIC_EVENTS = frozenset(
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


def detect_format(ev: SSEEvent, obj: JSON | None) -> str | None:
    """Guess the wire format from one event; None if this event does not tell."""
    kind = ev.event if ev.event != "message" else (_str(obj.get("type")) if obj else None) or ""
    if kind.startswith("response."):
        return "openai-responses"
    if kind in _ANTHROPIC_EVENTS:
        return "anthropic"
    if obj is None:
        return "openai-chat" if ev.data.strip() == "[DONE]" else None
    if "choices" in obj or obj.get("object") == "chat.completion.chunk":
        return "openai-chat"
    if "candidates" in obj or "usageMetadata" in obj or "promptFeedback" in obj:
        return "gemini"
    return None
