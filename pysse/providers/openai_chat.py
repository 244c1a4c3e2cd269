"""OpenAI Chat Completions (and every OpenAI-compatible server): unnamed events carrying
``choices[].delta``; the answer is complete only at ``data: [DONE]``."""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..events import (
    ChatEvent,
    Citation,
    Finish,
    Outcome,
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

__all__ = ["PROVIDER", "OpenAIChatDecoder", "encode_http_error", "url_citations"]


class OpenAIChatDecoder(Decoder):
    terminal_signal = "data: [DONE]"
    model_path = ("model",)

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
            out += url_citations(delta.get("annotations"))
            reason = as_str(choice.get("finish_reason"))
            if reason:
                self.reason = reason
        out += _search_results(obj)
        usage = as_dict(obj.get("usage"))
        if usage:
            out.append(
                Usage(as_int(usage.get("prompt_tokens")), as_int(usage.get("completion_tokens")))
            )
        return out


def url_citations(annotations: object) -> list[ChatEvent]:
    """The ``url_citation`` annotations of a list (web-search models send them in a delta,
    ``{"type": "url_citation", "url_citation": {"url", "title", "start_index",
    "end_index"}}``; the Responses API puts the same fields on the annotation itself).
    Other kinds (file citations) name no URL: skipped."""
    out: list[ChatEvent] = []
    for item in as_list(annotations):
        item = as_dict(item)
        if item.get("type") != "url_citation":
            continue
        cite = as_dict(item.get("url_citation")) or item
        url = as_str(cite.get("url"))
        if url:
            title = as_str(cite.get("title")) or ""
            start, end = as_int(cite.get("start_index")), as_int(cite.get("end_index"))
            out.append(Citation(url, title, start=start, end=end))
    return out


def _search_results(obj: JSON) -> list[ChatEvent]:
    """Sources some compatible servers put beside the choices (Perplexity: ``search_results``
    with title and URL, ``citations`` a list of URLs), repeated in every chunk: ChatStream
    keeps each once."""
    out: list[ChatEvent] = []
    for r in as_list(obj.get("search_results")):
        url = as_str(as_dict(r).get("url"))
        if url:
            out.append(Citation(url, as_str(as_dict(r).get("title")) or ""))
    out += [Citation(url) for url in as_list(obj.get("citations")) if isinstance(url, str) and url]
    return out


def sniff(ev: SSEEvent, obj: JSON | None) -> bool:
    if obj is None:
        return ev.data.strip() == "[DONE]"
    return "choices" in obj or obj.get("object") == "chat.completion.chunk"


def build_body(messages: Sequence[Message | Turn], opts: BodyOptions) -> JSON:
    """Reasoning is never sent back (DeepSeek refuses ``reasoning_content`` in input)."""
    msgs = ([{"role": "system", "content": opts.system}] if opts.system else []) + [
        {"role": role_and_text(m)[0], "content": user_content(PROVIDER.name, m)} for m in messages
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


PROVIDER = Provider(
    name="openai-chat",
    label="OpenAI Chat Completions",
    decoder=OpenAIChatDecoder,
    sniff=sniff,
    build_body=build_body,
    endpoint="/chat/completions",
    auth_headers=auth_headers,
    encode_http_error=encode_http_error,
    demo_path="/v1/chat/completions",
    default_model="gpt-4.1",
)
