"""What an answer to write is made of (its parts), and the base of each format's encoder.

An answer is a sequence of parts: reasoning, hidden reasoning, text and tool calls, in the
order the model produced them. Each format's :class:`Encoder` writes them as that provider
streams them, block by block (open, deltas, close), with every event and field the
provider's own SDKs read: ids, indexes, sequence numbers, ``done`` events, the terminal event
with the whole answer. Encoders are strict (they write only what the real API writes, so the
official SDKs accept every stream); the decoders stay lenient.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...events import Citation

__all__ = [
    "CREATED",
    "MODEL",
    "Encoder",
    "HiddenReasoning",
    "Part",
    "Reasoning",
    "Text",
    "ToolUse",
    "demo_signature",
    "json_fragments",
]

MODEL = "demo"  # the model name every encoded answer reports
CREATED = 1767225600  # the creation time every encoded answer reports (2026-01-01, UTC)


def _strings(value: str | Sequence[str]) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)


@dataclass(frozen=True)
class Text:
    """Answer text, as these deltas (a string is one delta), and the sources it cites
    (``citations``: each format writes them where its provider does, with the fields it
    has: OpenAI a URL, title and span offsets; Anthropic a URL, title and cited text;
    Gemini grounding chunks and supports)."""

    deltas: tuple[str, ...]
    citations: tuple[Citation, ...] = ()

    def __init__(self, deltas: str | Sequence[str], citations: Sequence[Citation] = ()) -> None:
        object.__setattr__(self, "deltas", _strings(deltas))
        object.__setattr__(self, "citations", tuple(citations))


@dataclass(frozen=True)
class Reasoning:
    """Reasoning the provider shows (a thinking block, a reasoning summary), as these
    deltas. ``signature``: Anthropic's for the block (default: one made from the text)."""

    deltas: tuple[str, ...]
    signature: str = ""

    def __init__(self, deltas: str | Sequence[str], signature: str = "") -> None:
        object.__setattr__(self, "deltas", _strings(deltas))
        object.__setattr__(self, "signature", signature)


@dataclass(frozen=True)
class HiddenReasoning:
    """Reasoning the provider hides: Anthropic's ``redacted_thinking`` block, an OpenAI
    Responses reasoning item with only ``encrypted_content``. Chat Completions and Gemini
    have no such thing: their encoders write nothing for it."""

    data: str = "ZGVtbyByZWRhY3RlZCB0aGlua2luZw=="


def json_fragments(text: str) -> tuple[str, ...]:
    """JSON text cut as models stream it: runs of word characters and runs of the rest
    (``{"``, ``city``, ``": "``, ``Lisbon``, ``"}``); they join back to ``text`` exactly."""
    return tuple(re.findall(r"\w+|\W+", text))


@dataclass(frozen=True)
class ToolUse:
    """A tool call: its ``name``, its arguments (a mapping, dumped as JSON; a JSON string,
    cut by :func:`json_fragments`; or the fragments themselves) and an optional ``id``
    (default: one made from its position)."""

    name: str
    fragments: tuple[str, ...] = field(default=())
    id: str | None = None

    def __init__(
        self,
        name: str,
        arguments: Mapping[str, Any] | str | Sequence[str] = "{}",
        id: str | None = None,
    ) -> None:
        if isinstance(arguments, Mapping):
            arguments = json.dumps(arguments, ensure_ascii=False)
        frags = json_fragments(arguments) if isinstance(arguments, str) else tuple(arguments)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "fragments", frags)
        object.__setattr__(self, "id", id)

    @property
    def arguments(self) -> str:
        return "".join(self.fragments)


Part = Text | Reasoning | HiddenReasoning | ToolUse


def pieces(part: Part) -> tuple[str, ...]:
    """The deltas a part streams as (hidden reasoning has none)."""
    if isinstance(part, Text | Reasoning):
        return part.deltas
    if isinstance(part, ToolUse):
        return part.fragments
    return ()


def demo_signature(text: str) -> str:
    """A stand-in for Anthropic's thinking signature: base64 like the real one, made from
    the text so the same answer always has the same bytes. Only pysse's own demo and kit
    accept it; Anthropic itself would not."""
    return base64.b64encode(hashlib.sha256(text.encode()).digest() * 2).decode()


class Encoder:
    """Writes one answer in one format. :func:`~pysse.providers.encoders.encode_parts` calls
    ``start``; for each part ``open``, ``delta`` per piece, ``close``; then ``end`` (or
    ``error`` instead, at any point). Each returns the SSE events to send, as bytes.
    Subclasses keep what the format numbers and repeats (ids, indexes, the text so far)."""

    eol = "\n"
    model = MODEL  # the model the answer says wrote it (the demo: the one asked for)

    def start(self) -> list[bytes]:
        return []

    def open(self, part: Part) -> list[bytes]:
        raise NotImplementedError

    def delta(self, piece: str) -> list[bytes]:
        raise NotImplementedError

    def close(self) -> list[bytes]:
        return []

    def end(self, output_tokens: int) -> list[bytes]:
        raise NotImplementedError

    def error(self, message: str) -> list[bytes]:
        raise NotImplementedError
