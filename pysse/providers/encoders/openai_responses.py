"""OpenAI Responses, written (the demo model and the testing kit; never the page)."""

from __future__ import annotations

from ..base import JSON, sse_event
from .base import CREATED, MODEL, Encoder, HiddenReasoning, Part, Reasoning, Text
from .openai_chat import url_citation

__all__ = ["ResponsesEncoder"]


class ResponsesEncoder(Encoder):
    """The Responses API's semantic events, as OpenAI streams them: ``response.created`` and
    ``response.in_progress``; per part an output item (``output_item.added``, its content or
    summary part, the deltas, their ``.done`` events, ``output_item.done``); then
    ``response.completed`` with every item and the usage. Every event has its
    ``sequence_number``; deltas name their ``item_id``, ``output_index`` and
    ``content_index``/``summary_index``: the SDK's accumulator indexes by them. A text's
    citations are ``url_citation`` annotations: each announced
    (``output_text.annotation.added``) after its deltas, then on the finished part."""

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
            self._event(
                {"type": "response.created", "response": _response("in_progress", model=self.model)}
            ),
            self._event(
                {
                    "type": "response.in_progress",
                    "response": _response("in_progress", model=self.model),
                }
            ),
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
            notes = [url_citation(c)["url_citation"] for c in self.part.citations if c.url]
            notes = [{"type": "url_citation", **n} for n in notes]
            added = {"type": "response.output_text.annotation.added", **at}
            out = [
                self._event({**added, "annotation_index": i, "annotation": n})
                for i, n in enumerate(notes)
            ]
            done = {"type": "response.output_text.done", **at, "text": text, "logprobs": []}
            whole = _output_text(text, notes)
            part_done = {"type": "response.content_part.done", **at, "part": whole}
            out += [self._event(done), self._event(part_done)]
            item |= {"status": "completed", "content": [whole]}
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
        done = _response("completed", self.output, usage, self.model)
        return [self._event({"type": "response.completed", "response": done})]

    def error(self, message: str) -> list[bytes]:
        body = {"type": "error", "code": "server_error", "message": message, "param": None}
        return [self._event(body)]


def _output_text(text: str, annotations: list[JSON] | None = None) -> JSON:
    return {"type": "output_text", "annotations": annotations or [], "logprobs": [], "text": text}


def _summary(text: str) -> JSON:
    return {"type": "summary_text", "text": text}


def _response(
    status: str, output: list[JSON] | None = None, usage: JSON | None = None, model: str = MODEL
) -> JSON:
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
        "model": model,
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
