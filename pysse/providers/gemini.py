"""Gemini ``streamGenerateContent?alt=sse``: unnamed events with ``candidates``, CRLF line
ends; complete when a chunk carries ``finishReason``. The model is part of the URL path."""

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

__all__ = ["PROVIDER", "GeminiDecoder"]

EOL = "\r\n"


class GeminiDecoder(Decoder):
    terminal_signal = "a chunk with finishReason"
    model_path = ("modelVersion",)

    def __init__(self) -> None:
        self.calls = 0  # function calls so far: each gets an index of its own

    def handle(self, ev: SSEEvent, obj: JSON) -> list[ChatEvent]:
        out: list[ChatEvent] = []
        finish: str | None = None
        for cand in as_list(obj.get("candidates")):
            cand = as_dict(cand)
            index = as_int(cand.get("index")) or 0
            for part in as_list(as_dict(cand.get("content")).get("parts")):
                part = as_dict(part)
                text = as_str(part.get("text"))
                if text:
                    out.append(
                        ReasoningDelta(text, index)
                        if part.get("thought")
                        else TextDelta(text, index)
                    )
                call = part.get("functionCall")
                if isinstance(call, dict):  # always whole; parallel calls are parts side by side
                    self.calls += 1
                    out.append(
                        ToolCallDelta(
                            index=self.calls - 1,
                            id=as_str(call.get("id")),
                            name=as_str(call.get("name")),
                            arguments=json.dumps(call.get("args", {}), ensure_ascii=False),
                        )
                    )
            out += _grounding(as_dict(cand.get("groundingMetadata")))
            finish = as_str(cand.get("finishReason")) or finish
        usage = as_dict(obj.get("usageMetadata"))
        if usage:
            out.append(
                Usage(
                    as_int(usage.get("promptTokenCount")), as_int(usage.get("candidatesTokenCount"))
                )
            )
        block = as_str(as_dict(obj.get("promptFeedback")).get("blockReason"))
        if block:
            out.append(ProviderError(kind="blocked", message=f"the prompt was blocked: {block}"))
        elif finish:
            out.append(Finish(Outcome.COMPLETED, finish))
        return out


def _grounding(meta: JSON) -> list[ChatEvent]:
    """Search grounding: ``groundingChunks`` are the sources (``web: {uri, title}``),
    ``groundingSupports`` the answer's spans (``segment: {startIndex, endIndex, text}``,
    byte offsets) with the chunks that support each. A citation per (span, source); a
    source no span names is a citation without one. Gemini may repeat the metadata in
    later chunks: ChatStream keeps each citation once."""
    chunks = [as_dict(as_dict(c).get("web")) for c in as_list(meta.get("groundingChunks"))]
    out: list[ChatEvent] = []
    cited: set[int] = set()
    for support in as_list(meta.get("groundingSupports")):
        support = as_dict(support)
        seg = as_dict(support.get("segment"))
        text = as_str(seg.get("text")) or ""
        start, end = as_int(seg.get("startIndex")), as_int(seg.get("endIndex"))
        for i in as_list(support.get("groundingChunkIndices")):
            if isinstance(i, int) and 0 <= i < len(chunks) and as_str(chunks[i].get("uri")):
                cited.add(i)
                title = as_str(chunks[i].get("title")) or ""
                out.append(Citation(chunks[i]["uri"], title, text, start, end))
    for i, web in enumerate(chunks):
        if i not in cited and as_str(web.get("uri")):
            out.append(Citation(web["uri"], as_str(web.get("title")) or ""))
    return out


def sniff(ev: SSEEvent, obj: JSON | None) -> bool:
    return obj is not None and (
        "candidates" in obj or "usageMetadata" in obj or "promptFeedback" in obj
    )


def build_body(messages: Sequence[Message | Turn], opts: BodyOptions) -> JSON:
    """Earlier thoughts are dropped; with ``thinking`` on, thoughts are asked for
    (``includeThoughts``) with that budget."""
    body: JSON = {
        "contents": [
            {"role": "model" if role_and_text(m)[0] == "assistant" else "user", "parts": _parts(m)}
            for m in messages
        ]
    }
    if opts.model:
        body["model"] = opts.model  # read by relays to build the URL; Gemini ignores it
    if opts.system:
        body["systemInstruction"] = {"parts": [{"text": opts.system}]}
    if opts.thinking > 0:
        thinking = {"includeThoughts": True, "thinkingBudget": opts.thinking}
        body["generationConfig"] = {"thinkingConfig": thinking}
    return body


def _parts(message: Message | Turn) -> list[JSON]:
    content = user_content(PROVIDER.name, message)
    return content if isinstance(content, list) else [{"text": content}]


def auth_headers(key: str) -> dict[str, str]:
    return {"x-goog-api-key": key}


ERROR_STATUSES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def encode_http_error(status: int, message: str) -> bytes:
    name = ERROR_STATUSES.get(status, "INTERNAL" if status >= 500 else "INVALID_ARGUMENT")
    body = {"error": {"code": status, "message": message, "status": name}}
    return json.dumps(body, ensure_ascii=False).encode()


PROVIDER = Provider(
    name="gemini",
    label="Gemini",
    decoder=GeminiDecoder,
    sniff=sniff,
    build_body=build_body,
    endpoint="/models/{model}:streamGenerateContent?alt=sse",
    auth_headers=auth_headers,
    encode_http_error=encode_http_error,
    demo_path="/v1beta/models/demo:streamGenerateContent?alt=sse",
    eol=EOL,
    default_model="gemini-2.5-flash",
    model_in_path=True,
)
