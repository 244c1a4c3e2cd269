"""Gemini, written (the demo model and the testing kit; never the page)."""

from __future__ import annotations

import json

from ...events import Citation
from ..base import JSON, sse_event
from ..gemini import EOL
from .base import Encoder, Part, Reasoning, Text, ToolUse

__all__ = ["GeminiEncoder"]


class GeminiEncoder(Encoder):
    """``streamGenerateContent?alt=sse`` chunks as Gemini sends them (CRLF line ends, no
    comments: google-genai reads any line that is not ``data:`` as JSON): one chunk per
    text or thought (``thought: true``) delta; function calls whole (and without an id, as
    Gemini sends them), never in fragments,
    calls made side by side (parallel) in one chunk; the last chunk (with the calls, when
    the answer ends with them) carries ``finishReason``, the usage and, when the text
    cites sources, ``groundingMetadata`` (a chunk per source, a support per cited span)."""

    eol = EOL

    def __init__(self) -> None:
        self.part: Part | None = None
        self.fragments: list[str] = []
        self.calls: list[JSON] = []  # finished calls not sent yet
        self.citations: list[Citation] = []

    def _chunk(self, parts: list[JSON], **extra: object) -> bytes:
        cand: JSON = {"content": {"parts": parts, "role": "model"}, "index": 0}
        for key in ("finishReason", "groundingMetadata"):  # the candidate's, not the chunk's
            if key in extra:
                cand[key] = extra.pop(key)
        body = {"candidates": [cand], **extra, "modelVersion": self.model, "responseId": "pysse"}
        return sse_event(body, eol=EOL)

    def _flush(self) -> list[bytes]:
        calls, self.calls = self.calls, []
        return [self._chunk(calls)] if calls else []

    def open(self, part: Part) -> list[bytes]:
        self.part, self.fragments = part, []
        if isinstance(part, Text):
            self.citations += [c for c in part.citations if c.url]
        return [] if isinstance(part, ToolUse) else self._flush()

    def delta(self, piece: str) -> list[bytes]:
        if isinstance(self.part, ToolUse):
            self.fragments.append(piece)
            return []
        if isinstance(self.part, Reasoning):
            return [self._chunk([{"text": piece, "thought": True}])]
        return [self._chunk([{"text": piece}])]

    def close(self) -> list[bytes]:
        if isinstance(self.part, ToolUse):
            text = "".join(self.fragments) or "{}"
            try:
                args = json.loads(text)
            except ValueError:
                args = None
            if not isinstance(args, dict):
                raise ValueError(
                    f"Gemini sends a function call's arguments as a JSON object; "
                    f"{self.part.name!r} has {text[:80]!r}"
                )
            self.calls.append({"functionCall": {"name": self.part.name, "args": args}})
        return []

    def end(self, output_tokens: int) -> list[bytes]:
        usage = {
            "promptTokenCount": 12,
            "candidatesTokenCount": output_tokens,
            "totalTokenCount": 12 + output_tokens,
        }
        parts, self.calls = self.calls or [{"text": ""}], []  # calls last: in the last chunk
        extra: JSON = {"groundingMetadata": _grounding(self.citations)} if self.citations else {}
        return [self._chunk(parts, finishReason="STOP", **extra, usageMetadata=usage)]

    def error(self, message: str) -> list[bytes]:
        err = {"code": 503, "message": message, "status": "UNAVAILABLE"}
        return [sse_event({"error": err}, eol=EOL)]


def _grounding(citations: list[Citation]) -> JSON:
    """Search grounding as Gemini sends it: each source once in ``groundingChunks``, each
    cited span in ``groundingSupports`` with the index of its source."""
    chunks: dict[tuple[str, str], int] = {}
    supports: list[JSON] = []
    for c in citations:
        at = chunks.setdefault((c.url, c.title), len(chunks))
        if c.text or c.start is not None or c.end is not None:
            seg: JSON = {"text": c.text} if c.text else {}
            if c.start is not None:
                seg["startIndex"] = c.start
            if c.end is not None:
                seg["endIndex"] = c.end
            supports.append({"segment": seg, "groundingChunkIndices": [at]})
    webs = [{"web": {"uri": url, "title": title}} for url, title in chunks]
    return {"groundingChunks": webs, "groundingSupports": supports}
