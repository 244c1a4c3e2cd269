"""OpenAI Chat Completions, written (the demo model and the testing kit; never the page)."""

from __future__ import annotations

from ...events import Citation
from ..base import JSON, sse_event
from .base import CREATED, MODEL, Encoder, Part, Reasoning, Text, ToolUse

__all__ = ["ChatEncoder", "url_citation"]


class ChatEncoder(Encoder):
    """``chat.completion.chunk`` events as OpenAI streams them: the role first, then one
    ``delta`` per piece (``content``; ``reasoning_content`` as DeepSeek streams reasoning;
    ``tool_calls`` by index, the first fragment naming the call), the finish reason in a
    chunk of its own, a usage chunk with no choices, and ``[DONE]``. A text's citations
    follow it in one delta of ``annotations`` (``url_citation``), as web-search models send
    them; one without a URL has no form here."""

    def __init__(self) -> None:
        self.part: Part | None = None
        self.calls = 0

    def _chunk(self, delta: JSON, finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return sse_event({**CHUNK_HEAD, "model": self.model, "choices": [choice]})

    def start(self) -> list[bytes]:
        return [self._chunk({"role": "assistant", "content": "", "refusal": None})]

    def open(self, part: Part) -> list[bytes]:
        self.part = part
        if not isinstance(part, ToolUse):
            return []  # text and reasoning need no opening; hidden reasoning has no form here
        self.calls += 1
        call = {
            "index": self.calls - 1,
            "id": part.id or f"call_{self.calls - 1}",
            "type": "function",
            "function": {"name": part.name, "arguments": ""},
        }
        return [self._chunk({"tool_calls": [call]})]

    def delta(self, piece: str) -> list[bytes]:
        if isinstance(self.part, ToolUse):
            call = {"index": self.calls - 1, "function": {"arguments": piece}}
            return [self._chunk({"tool_calls": [call]})]
        key = "reasoning_content" if isinstance(self.part, Reasoning) else "content"
        return [self._chunk({key: piece})]

    def close(self) -> list[bytes]:
        if not isinstance(self.part, Text):
            return []
        found = [url_citation(c) for c in self.part.citations if c.url]
        return [self._chunk({"annotations": found})] if found else []

    def end(self, output_tokens: int) -> list[bytes]:
        usage = {
            "prompt_tokens": 12,
            "completion_tokens": output_tokens,
            "total_tokens": 12 + output_tokens,
        }
        return [
            self._chunk({}, "tool_calls" if self.calls else "stop"),
            sse_event({**CHUNK_HEAD, "model": self.model, "choices": [], "usage": usage}),
            b"data: [DONE]\n\n",
        ]

    def error(self, message: str) -> list[bytes]:
        body = {"message": message, "type": "server_error", "param": None, "code": None}
        return [sse_event({"error": body})]


def url_citation(c: Citation) -> JSON:
    """A citation as Chat Completions nests it (the Responses API flattens the inner
    object into the annotation)."""
    cite = {"url": c.url, "title": c.title, "start_index": c.start or 0, "end_index": c.end or 0}
    return {"type": "url_citation", "url_citation": cite}


CHUNK_HEAD: JSON = {
    "id": "chatcmpl-pysse",
    "object": "chat.completion.chunk",
    "created": CREATED,
    "model": MODEL,
    "system_fingerprint": "fp_pysse",
}
