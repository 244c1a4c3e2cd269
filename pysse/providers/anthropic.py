"""Anthropic Messages: named events (``message_start``, ``content_block_delta``, ...);
complete only at ``message_stop``."""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..events import (
    ChatEvent,
    Citation,
    Finish,
    Outcome,
    ProviderError,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    Usage,
)
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
    user_content,
)

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
    model_path = ("message", "model")

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
            if dtype == "signature_delta" and as_str(delta.get("signature")):
                return [ReasoningDelta("", index, signature=delta["signature"])]
            if dtype == "citations_delta":
                return _citations([delta.get("citation")])
            return []  # future types
        if kind == "content_block_start":
            return _block_start(as_dict(obj.get("content_block")), index)
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


def _block_start(block: JSON, index: int) -> list[ChatEvent]:
    """A content block begins: a tool call's id and name, hidden reasoning (a
    ``redacted_thinking`` block is whole at its start), web search results (whole at their
    start), or text (and citations) a proxy put in the start."""
    kind = block.get("type")
    if kind == "tool_use":
        given = as_dict(block.get("input"))  # {} from Anthropic; whole from some proxies
        arguments = json.dumps(given, ensure_ascii=False) if given else ""
        return [ToolCallDelta(index, as_str(block.get("id")), as_str(block.get("name")), arguments)]
    if kind == "redacted_thinking":
        return [ReasoningDelta("", index, redacted=True, data=as_str(block.get("data")) or "")]
    if kind == "thinking":
        text, signature = as_str(block.get("thinking")) or "", as_str(block.get("signature"))
        return [ReasoningDelta(text, index, signature=signature or "")] if text else []
    if kind == "web_search_tool_result":  # the results the search found: the sources
        results = [as_dict(r) for r in as_list(block.get("content"))]
        return [
            Citation(r["url"], as_str(r.get("title")) or "")
            for r in results
            if r.get("type") == "web_search_result" and as_str(r.get("url"))
        ]
    if kind == "text":
        out: list[ChatEvent] = _citations(block.get("citations"))  # whole, from some proxies
        if as_str(block.get("text")):
            out.insert(0, TextDelta(block["text"], index))
        return out
    return []


def _citations(items: object) -> list[ChatEvent]:
    """Anthropic's citations: a web search result's (``web_search_result_location``: url,
    title, ``cited_text``), a search result's (``search_result_location``: ``source``), a
    document's (``char_location``, ``page_location``, ``content_block_location``: no URL,
    its ``document_title``; kept, though a page links only http(s) URLs)."""
    out: list[ChatEvent] = []
    for item in as_list(items):
        item = as_dict(item)
        url = as_str(item.get("url")) or as_str(item.get("source")) or ""
        title = as_str(item.get("title")) or as_str(item.get("document_title")) or ""
        text = as_str(item.get("cited_text")) or ""
        if url or title or text:
            start = as_int(item.get("start_char_index"))
            end = as_int(item.get("end_char_index"))
            out.append(Citation(url, title, text, start, end))
    return out


def sniff(ev: SSEEvent, obj: JSON | None) -> bool:
    kind = ev.event if ev.event != "message" else (as_str(obj.get("type")) if obj else None)
    return kind in EVENTS


def build_body(messages: Sequence[Message | Turn], opts: BodyOptions) -> JSON:
    """With ``thinking`` on: the ``thinking`` parameter, and each assistant turn's
    thinking blocks sent back before its text, as Anthropic requires (a block's text with
    its signature, a redacted block's data; a block without either cannot be verified and
    is left out). Without it, reasoning is dropped."""
    body: JSON = {
        "model": opts.model or PROVIDER.default_model,
        "max_tokens": opts.max_tokens,
        "stream": True,
        "messages": [_message(m, opts.thinking > 0) for m in messages],
    }
    if opts.system:
        body["system"] = opts.system
    if opts.thinking > 0:
        body["thinking"] = {"type": "enabled", "budget_tokens": opts.thinking}
    return body


def _message(message: Message | Turn, thinking: bool) -> JSON:
    role, text = role_and_text(message)
    blocks: list[JSON] = []
    if thinking and isinstance(message, Turn) and role == "assistant":
        for b in message.reasoning:
            if b.redacted and b.data:
                blocks.append({"type": "redacted_thinking", "data": b.data})
            elif b.signature and not b.redacted:
                blocks.append({"type": "thinking", "thinking": b.text, "signature": b.signature})
    if not blocks:
        return {"role": role, "content": user_content(PROVIDER.name, message)}
    return {"role": role, "content": [*blocks, *([{"type": "text", "text": text}] if text else [])]}


def auth_headers(key: str) -> dict[str, str]:
    return {"x-api-key": key, "anthropic-version": "2023-06-01"}


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


PROVIDER = Provider(
    name="anthropic",
    label="Anthropic Messages",
    decoder=AnthropicDecoder,
    sniff=sniff,
    build_body=build_body,
    endpoint="/messages",
    auth_headers=auth_headers,
    encode_http_error=encode_http_error,
    demo_path="/v1/messages",
    default_model="claude-sonnet-4-5",
    prefill=True,
)
