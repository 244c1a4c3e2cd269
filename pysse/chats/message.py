"""One message of a conversation (``chats.conversation``), as stored and exported."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

from ..events import Citation, ReasoningBlock, ToolCall
from ..providers.attachments import Attachment
from .attached import attachments_to_json
from .message_extras import (
    citations_to_json,
    reasoning_text,
    reasoning_to_json,
    tool_calls_to_json,
)
from .runs import RunOutput, runs_to_json

__all__ = ["STATES", "Message", "Role"]

Role = Literal["user", "assistant"]
STATES = ("streaming", "completed", "truncated", "error", "aborted")


@dataclass
class Message:
    """One message. An assistant message also carries how its answer ended (``state``: one
    of ``streaming``, ``completed``, ``truncated``, ``error``, ``aborted``) and, while it may
    still be resumed or continued, what the page needs for that."""

    id: str
    role: Role
    text: str
    parent: str | None
    state: str = "completed"
    detail: str = ""  # how it ended, for people ("truncated: the connection closed ...")
    format: str | None = None  # the wire format its stream was in
    model: str = ""  # the model its stream said wrote it (ChatStream.model), "" if unsaid
    usage: tuple[int | None, int | None] | None = None
    created: float = field(default_factory=time.time)
    pieces: int = 1  # > 1 once continued: the text is the join of several answers
    speed: dict[str, Any] | None = None  # time to first token, tokens/s (call.speed)
    answer_id: str = ""  # the relay's id for the answer (X-Pysse-Answer-Id), for a reattach
    url: str = ""  # the relay it was asked of (a reattach goes back there)
    # Beside the text, never part of it (issue #23): the reasoning blocks (shown folded, sent
    # back to Anthropic with their signatures), how long the model thought, the tool calls.
    reasoning: tuple[ReasoningBlock, ...] = ()
    thought_ms: float | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    citations: tuple[Citation, ...] = ()  # its http(s) sources (issue #43: kept_citations)
    attachments: tuple[Attachment, ...] = ()  # a user's files, sent with the question
    runs: tuple[RunOutput, ...] = ()  # what its Python blocks printed when run (runs.py)
    # Not stored: restored from an answer still streaming when the page closed, with an id
    # the relay may still know (the page tries to reattach; see ``reattachable``).
    in_flight: bool = False
    # Not stored: it was stored as streaming (an answer cut off when its page closed, or one
    # streaming in another tab: the page asks the answer's lock which).
    was_streaming: bool = False
    elsewhere: bool = False  # not stored: streaming in another tab of this page right now

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "role": self.role,
            "text": self.text,
            "parent": self.parent,
            "created": self.created,
        }
        if self.attachments:
            out["attachments"] = attachments_to_json(self.attachments)
        if self.role == "assistant":
            out.update(state=self.state, detail=self.detail, format=self.format)
            if self.model:
                out["model"] = self.model
            out["usage"] = list(self.usage) if self.usage else None
            out["pieces"] = self.pieces
            out["speed"] = self.speed
            if self.answer_id:
                out["answer_id"] = self.answer_id
                out["url"] = self.url
            if self.reasoning:
                out["reasoning"] = reasoning_to_json(self.reasoning)
                out["thought_ms"] = self.thought_ms
            if self.tool_calls:
                out["tool_calls"] = tool_calls_to_json(self.tool_calls)
            if self.citations:
                out["citations"] = citations_to_json(self.citations)
            if self.runs:
                out["runs"] = runs_to_json(self.runs)
        return out

    @property
    def reasoning_text(self) -> str:
        """The reasoning as shown (never part of ``text``)."""
        return reasoning_text(self.reasoning)
