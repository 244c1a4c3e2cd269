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
    sse_event,
)
from .encoder import CREATED, MODEL, Encoder, HiddenReasoning, Part, Reasoning, Text
from .openai_chat import encode_http_error

__all__ = ["PROVIDER", "OpenAIResponsesDecoder", "ResponsesEncoder"]


class OpenAIResponsesDecoder(Decoder):
    terminal_signal = "response.completed"

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
        """A finished output item: a reasoning item whose text the stream did not show
        (encrypted, or no summary asked for) is hidden reasoning; a function call whose
        arguments never streamed (some compatible servers) gets them from the item."""
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
        "input": [{"role": r, "content": t} for r, t in map(role_and_text, messages)],
    }
    if opts.system:
        body["instructions"] = opts.system
    if opts.thinking > 0:
        body["reasoning"] = {"summary": "auto"}
    return body


def auth_headers(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


class ResponsesEncoder(Encoder):
    """The Responses API's semantic events, as OpenAI streams them: ``response.created`` and
    ``response.in_progress``; per part an output item (``output_item.added``, its content or
    summary part, the deltas, their ``.done`` events, ``output_item.done``); then
    ``response.completed`` with every item and the usage. Every event has its
    ``sequence_number``; deltas name their ``item_id``, ``output_index`` and
    ``content_index``/``summary_index``: the SDK's accumulator indexes by them."""

    def __init__(self) -> None:
        self.seq = 0
        self.output: list[JSON] = []  # the finished items, for response.completed
        self.part: Part | None = None
        self.item: JSON = {}
        self.text: list[str] = []

    def _event(self, obj: JSON) -> bytes:
        obj["sequence_number"] = self.seq
        self.seq += 1
        return sse_event(obj, str(obj["type"]))

    def _where(self) -> JSON:
        return {"item_id": self.item["id"], "output_index": len(self.output)}

    def start(self) -> list[bytes]:
        return [
            self._event({"type": "response.created", "response": _response("in_progress")}),
            self._event({"type": "response.in_progress", "response": _response("in_progress")}),
        ]

    def open(self, part: Part) -> list[bytes]:
        self.part, self.text, n = part, [], len(self.output)
        if isinstance(part, Text):
            self.item = {"id": f"msg_{n}", "type": "message", "status": "in_progress"}
            self.item |= {"content": [], "role": "assistant"}
            head = {"type": "response.content_part.added", **self._where(), "content_index": 0}
            follow = [self._event({**head, "part": _output_text("")})]
        elif isinstance(part, Reasoning):
            self.item = {"id": f"rs_{n}", "type": "reasoning", "summary": []}
            head = {"type": "response.reasoning_summary_part.added", **self._where()}
            follow = [self._event({**head, "summary_index": 0, "part": _summary("")})]
        elif isinstance(part, HiddenReasoning):
            self.item = {"id": f"rs_{n}", "type": "reasoning", "summary": []}
            follow = []
        else:
            call_id = part.id or f"call_{n}"
            self.item = {"id": f"fc_{n}", "type": "function_call", "status": "in_progress"}
            self.item |= {"arguments": "", "call_id": call_id, "name": part.name}
            follow = []
        added = {"type": "response.output_item.added", "output_index": n, "item": self.item}
        return [self._event(added), *follow]

    def delta(self, piece: str) -> list[bytes]:
        self.text.append(piece)
        if isinstance(self.part, Text):
            kind, at = "response.output_text.delta", {"content_index": 0, "logprobs": []}
        elif isinstance(self.part, Reasoning):
            kind, at = "response.reasoning_summary_text.delta", {"summary_index": 0}
        else:
            kind, at = "response.function_call_arguments.delta", {}
        return [self._event({"type": kind, **self._where(), **at, "delta": piece})]

    def close(self) -> list[bytes]:
        text, where, out = "".join(self.text), self._where(), []
        item = dict(self.item)
        if isinstance(self.part, Text):
            at = {**where, "content_index": 0}
            done = {"type": "response.output_text.done", **at, "text": text, "logprobs": []}
            part_done = {"type": "response.content_part.done", **at, "part": _output_text(text)}
            out = [self._event(done), self._event(part_done)]
            item |= {"status": "completed", "content": [_output_text(text)]}
        elif isinstance(self.part, Reasoning):
            at = {**where, "summary_index": 0}
            done = {"type": "response.reasoning_summary_text.done", **at, "text": text}
            part_done = {"type": "response.reasoning_summary_part.done", **at}
            out = [self._event(done), self._event({**part_done, "part": _summary(text)})]
            item["summary"] = [_summary(text)]
        elif isinstance(self.part, HiddenReasoning):
            item["encrypted_content"] = self.part.data
        else:
            done = {"type": "response.function_call_arguments.done", **where, "arguments": text}
            out = [self._event(done)]
            item |= {"status": "completed", "arguments": text}
        finished = {"type": "response.output_item.done", "output_index": len(self.output)}
        out.append(self._event({**finished, "item": item}))
        self.output.append(item)
        return out

    def end(self, output_tokens: int) -> list[bytes]:
        summaries = [s for i in self.output if i["type"] == "reasoning" for s in i["summary"]]
        reasoning = sum(len(s["text"]) for s in summaries) // 4
        usage = {
            "input_tokens": 12,
            "input_tokens_details": {"cache_write_tokens": 0, "cached_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": min(reasoning, output_tokens)},
            "total_tokens": 12 + output_tokens,
        }
        done = _response("completed", self.output, usage)
        return [self._event({"type": "response.completed", "response": done})]

    def error(self, message: str) -> list[bytes]:
        body = {"type": "error", "code": "server_error", "message": message, "param": None}
        return [self._event(body)]


def _output_text(text: str) -> JSON:
    return {"type": "output_text", "annotations": [], "logprobs": [], "text": text}


def _summary(text: str) -> JSON:
    return {"type": "summary_text", "text": text}


def _response(status: str, output: list[JSON] | None = None, usage: JSON | None = None) -> JSON:
    """The response object as the API sends it in lifecycle events."""
    return {
        "id": "resp_pysse",
        "object": "response",
        "created_at": CREATED,
        "status": status,
        "background": False,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": None,
        "model": MODEL,
        "output": output or [],
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None},
        "store": False,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage,
        "user": None,
        "metadata": {},
    }


PROVIDER = Provider(
    name="openai-responses",
    label="OpenAI Responses",
    decoder=OpenAIResponsesDecoder,
    sniff=sniff,
    build_body=build_body,
    endpoint="/responses",
    auth_headers=auth_headers,
    encoder=ResponsesEncoder,
    encode_http_error=encode_http_error,  # the same error body as Chat Completions
    demo_path="/v1/responses",
    default_model="gpt-5",
)
