"""Chat events: the one vocabulary every provider's stream is translated into.

One type per concept, the same for every provider, so a UI (or a script) handles text,
reasoning, tool calls, usage and the end of an answer once. All are frozen and small.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "ChatEvent",
    "Finish",
    "Outcome",
    "ProviderError",
    "ReasoningDelta",
    "TextDelta",
    "ToolCallDelta",
    "Usage",
    "event_to_dict",
]


class Outcome(StrEnum):
    """How an answer ended. A str enum so it compares equal to its plain value."""

    COMPLETED = "completed"  # the provider's own terminal signal arrived
    TRUNCATED = "truncated"  # the bytes stopped before that signal: a dead connection
    ERROR = "error"  # the provider said so, or sent something unreadable
    ABORTED = "aborted"  # the user pressed Stop

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the answer's text, to append as it is."""

    text: str
    index: int = 0  # content block / choice / output item it belongs to


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of the model's reasoning (thinking, reasoning summary): not answer text."""

    text: str
    index: int = 0


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A fragment of a tool (function) call. ``arguments`` is a fragment of a JSON string;
    concatenate all fragments with the same ``index`` to get the call's arguments."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts as the provider reported them (either may be unknown)."""

    input_tokens: int | None = None
    output_tokens: int | None = None

    @property
    def total_tokens(self) -> int | None:
        if self.input_tokens is None and self.output_tokens is None:
            return None
        return (self.input_tokens or 0) + (self.output_tokens or 0)


@dataclass(frozen=True, slots=True)
class Finish:
    """The answer ended. ``outcome`` is completed, truncated, error or aborted; ``reason`` is
    the provider's own word ("stop", "end_turn", "length", "STOP", ...) when it sent one, and
    ``detail`` a plain sentence for people (why it was judged truncated, for example)."""

    outcome: Outcome
    reason: str | None = None
    detail: str = ""


@dataclass(frozen=True, slots=True)
class ProviderError:
    """The provider (or the bytes) reported an error. ``kind`` is the provider's error type
    (``overloaded_error``, ``rate_limit_exceeded``...) or one of pysse's own: ``malformed``
    (a payload that is not JSON), ``protocol`` (bytes that are not an event stream)."""

    kind: str
    message: str
    status: int | None = None
    raw: str = ""


ChatEvent = TextDelta | ReasoningDelta | ToolCallDelta | Usage | Finish | ProviderError


_TYPE_NAMES: dict[type, str] = {
    TextDelta: "text",
    ReasoningDelta: "reasoning",
    ToolCallDelta: "tool_call",
    Usage: "usage",
    Finish: "finish",
    ProviderError: "error",
}


def event_to_dict(ev: ChatEvent) -> dict[str, object]:
    """A JSON-ready dict with a ``type`` key, for logs, the CLI and the inspector."""
    out: dict[str, object] = {"type": _TYPE_NAMES[type(ev)]}
    for name in ev.__slots__:
        value = getattr(ev, name)
        out[name] = str(value) if isinstance(value, Outcome) else value
    return out
