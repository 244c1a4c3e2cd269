"""Anthropic Messages, written (the demo model and the testing kit; never the page)."""

from __future__ import annotations

from ...events import Citation
from ..base import JSON, sse_event
from .base import Encoder, HiddenReasoning, Part, Reasoning, Text, ToolUse, demo_signature

__all__ = ["AnthropicEncoder"]


class AnthropicEncoder(Encoder):
    """Messages API events as Anthropic streams them: ``message_start``; per part a content
    block (``content_block_start``, its deltas, ``content_block_stop``), a ``ping`` after
    the first block's start; a thinking block ends with its ``signature_delta``, a tool call
    starts with ``input: {}`` and an empty ``input_json_delta``; then ``message_delta``
    (stop reason, usage) and ``message_stop``. A text with citations starts with
    ``citations: []`` and gets a ``citations_delta`` per citation before its text (a
    ``web_search_result_location``; one without a URL a document's ``char_location``)."""

    def __init__(self) -> None:
        self.blocks = 0
        self.calls = 0
        self.part: Part | None = None
        self.text: list[str] = []

    def start(self) -> list[bytes]:
        message: JSON = {
            "id": "msg_pysse",
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": 12,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": 1,
                "service_tier": "standard",
            },
        }
        return [_event({"type": "message_start", "message": message})]

    def open(self, part: Part) -> list[bytes]:
        self.part, self.text = part, []
        block: JSON
        if isinstance(part, Text):
            block = {"type": "text", "text": ""}
            if part.citations:
                block["citations"] = []
        elif isinstance(part, Reasoning):
            block = {"type": "thinking", "thinking": "", "signature": ""}
        elif isinstance(part, HiddenReasoning):
            block = {"type": "redacted_thinking", "data": part.data}
        else:
            self.calls += 1
            call_id = part.id or f"toolu_{self.calls:02d}"
            block = {"type": "tool_use", "id": call_id, "name": part.name, "input": {}}
        index, self.blocks = self.blocks, self.blocks + 1
        out = [_event({"type": "content_block_start", "index": index, "content_block": block})]
        if index == 0:
            out.append(_event({"type": "ping"}))
        if isinstance(part, ToolUse):
            out.append(self._delta({"type": "input_json_delta", "partial_json": ""}))
        if isinstance(part, Text):
            for c in part.citations:
                out.append(self._delta({"type": "citations_delta", "citation": _citation(c)}))
        return out

    def _delta(self, delta: JSON) -> bytes:
        return _event({"type": "content_block_delta", "index": self.blocks - 1, "delta": delta})

    def delta(self, piece: str) -> list[bytes]:
        self.text.append(piece)
        if isinstance(self.part, Reasoning):
            return [self._delta({"type": "thinking_delta", "thinking": piece})]
        if isinstance(self.part, ToolUse):
            return [self._delta({"type": "input_json_delta", "partial_json": piece})]
        return [self._delta({"type": "text_delta", "text": piece})]

    def close(self) -> list[bytes]:
        out = []
        if isinstance(self.part, Reasoning):
            signature = self.part.signature or demo_signature("".join(self.text))
            out.append(self._delta({"type": "signature_delta", "signature": signature}))
        out.append(_event({"type": "content_block_stop", "index": self.blocks - 1}))
        return out

    def end(self, output_tokens: int) -> list[bytes]:
        reason = "tool_use" if self.calls else "end_turn"
        return [
            _event(
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": reason, "stop_sequence": None},
                    "usage": {"output_tokens": output_tokens},
                }
            ),
            _event({"type": "message_stop"}),
        ]

    def error(self, message: str) -> list[bytes]:
        err = {"type": "overloaded_error", "message": message}
        return [_event({"type": "error", "error": err})]


def _citation(c: Citation) -> JSON:
    if c.url:
        return {
            "type": "web_search_result_location",
            "cited_text": c.text,
            "url": c.url,
            "title": c.title,
            "encrypted_index": "ZGVtbw==",
        }
    return {
        "type": "char_location",
        "cited_text": c.text,
        "document_index": 0,
        "document_title": c.title,
        "start_char_index": c.start or 0,
        "end_char_index": c.end or 0,
    }


def _event(obj: JSON) -> bytes:
    return sse_event(obj, str(obj["type"]))
