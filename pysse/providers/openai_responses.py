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
from .openai_chat import encode_http_error, url_citations

__all__ = ["PROVIDER", "OpenAIResponsesDecoder"]


class OpenAIResponsesDecoder(Decoder):
    terminal_signal = "response.completed"
    model_path = ("response", "model")

    def __init__(self) -> None:
        self.shown: set[int] = set()  # output items whose reasoning text was streamed
        self.argued: set[int] = set()  # function calls whose arguments were streamed

    def handle(self, ev: SSEEvent, obj: JSON) -> list[ChatEvent]:
        kind = as_str(obj.get("type")) or ev.event
        index = as_int(obj.get("output_index")) or 0
        if kind in ("response.output_text.delta", "response.refusal.delta"):
            return [TextDelta(as_str(obj.get("delta")) or "", index)]
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            text = as_str(obj.get("delta")) or ""
            if text:
                self.shown.add(index)
            return [ReasoningDelta(text, index)]
        if kind == "response.reasoning_summary_part.added" and (
            as_int(obj.get("summary_index")) or 0
        ):
            return [ReasoningDelta(SUMMARY_PARTS_JOINED_BY, index)]  # a part after the first
        if kind == "response.output_text.annotation.added":
            return url_citations([obj.get("annotation")])
        if kind == "response.content_part.done":  # the finished part repeats its annotations
            return url_citations(as_dict(obj.get("part")).get("annotations"))
        if kind == "response.output_item.added":
            item = as_dict(obj.get("item"))
            if item.get("type") == "function_call":
                arguments = as_str(item.get("arguments")) or ""
                if arguments:
                    self.argued.add(index)
                return [
                    ToolCallDelta(
                        index=index,
                        id=as_str(item.get("call_id")) or as_str(item.get("id")),
                        name=as_str(item.get("name")),
                        arguments=arguments,
                    )
                ]
            return []
        if kind == "response.function_call_arguments.delta":
            self.argued.add(index)
            return [ToolCallDelta(index=index, arguments=as_str(obj.get("delta")) or "")]
        if kind == "response.output_item.done":
            return self._item_done(as_dict(obj.get("item")), index)
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
        return []  # response.created, other *.done, content_part.*, unknown types: nothing

    def _item_done(self, item: JSON, index: int) -> list[ChatEvent]:
        """A finished output item: a message's annotations (ChatStream keeps each citation
        once, so those already streamed are not repeated); a reasoning item whose text the
        stream did not show (encrypted, or no summary asked for) is hidden reasoning; a
        function call whose arguments never streamed (some compatible servers) gets them
        from the item."""
        if item.get("type") == "reasoning":
            out: list[ChatEvent] = []
            if index not in self.shown:  # a server that sent the summary only here
                texts = [as_str(as_dict(p).get("text")) for p in as_list(item.get("summary"))]
                summary = SUMMARY_PARTS_JOINED_BY.join(t for t in texts if t)
                if summary:
                    self.shown.add(index)
                    out.append(ReasoningDelta(summary, index))
            encrypted = as_str(item.get("encrypted_content")) or ""
            if encrypted or index not in self.shown:
                out.append(ReasoningDelta("", index, redacted=True, data=encrypted))
            return out
        if item.get("type") == "message":  # annotations a server sent only here
            parts = [as_dict(p).get("annotations") for p in as_list(item.get("content"))]
            return [c for a in parts for c in url_citations(a)]
        if item.get("type") == "function_call" and index not in self.argued:
            arguments = as_str(item.get("arguments")) or ""
            if arguments:
                self.argued.add(index)
                return [ToolCallDelta(index=index, arguments=arguments)]
        return []


# Reasoning summaries come in parts (each usually a "**Title**" and a paragraph); OpenAI's
# own UI shows them as paragraphs, so the decoder puts a blank line between two parts.
SUMMARY_PARTS_JOINED_BY = "\n\n"


def sniff(ev: SSEEvent, obj: JSON | None) -> bool:
    kind = ev.event if ev.event != "message" else (as_str(obj.get("type")) if obj else None)
    return (kind or "").startswith("response.")


def build_body(messages: Sequence[Message | Turn], opts: BodyOptions) -> JSON:
    """Earlier reasoning is dropped (the API keeps it itself, with ``store``); with
    ``thinking`` on, a reasoning summary is asked for, so there is reasoning to show."""
    body: JSON = {
        "model": opts.model or PROVIDER.default_model,
        "stream": True,
        "input": [
            {"role": role_and_text(m)[0], "content": user_content(PROVIDER.name, m)}
            for m in messages
        ],
    }
    if opts.system:
        body["instructions"] = opts.system
    if opts.thinking > 0:
        body["reasoning"] = {"summary": "auto"}
    return body


def auth_headers(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


PROVIDER = Provider(
    name="openai-responses",
    label="OpenAI Responses",
    decoder=OpenAIResponsesDecoder,
    sniff=sniff,
    build_body=build_body,
    endpoint="/responses",
    auth_headers=auth_headers,
    encode_http_error=encode_http_error,  # the same error body as Chat Completions
    demo_path="/v1/responses",
    default_model="gpt-5",
)
