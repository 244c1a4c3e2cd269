"""Writing an answer in any provider's format: the demo model, the tests and the testing kit
use this to produce streams that the decoders must read back exactly, and that each
provider's official SDK accepts (tests/test_sdk_*.py).

One module per format holds its :class:`Encoder`; ``base`` the parts of an answer. Server
side only: never in the page's files (build.py ``BROWSER_EXCLUDE``), since the page only
reads streams.

This package is the layer above the provider records (``pysse.providers.base``): it reads a
:class:`~pysse.providers.base.Provider` (its name, its line ends) and keeps the table from a
format's name to its encoder (:data:`ENCODERS`, :func:`encoder_for`). The record never points
back up here, so the records load in the page without a single encoder."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...events import Citation
from .anthropic import AnthropicEncoder
from .base import (
    CREATED,
    MODEL,
    Encoder,
    HiddenReasoning,
    Part,
    Reasoning,
    Text,
    ToolUse,
    demo_signature,
    json_fragments,
    pieces,
)
from .gemini import GeminiEncoder
from .openai_chat import ChatEncoder
from .openai_responses import ResponsesEncoder

if TYPE_CHECKING:
    from ..base import Provider

__all__ = [
    "CREATED",
    "ENCODERS",
    "MODEL",
    "AnthropicEncoder",
    "ChatEncoder",
    "Encoder",
    "GeminiEncoder",
    "HiddenReasoning",
    "Part",
    "Reasoning",
    "ResponsesEncoder",
    "Text",
    "ToolUse",
    "demo_signature",
    "encode_answer",
    "encode_parts",
    "encoder_for",
    "json_fragments",
]

# Each format's encoder, by the format's name (``encoder_for`` reads it).
ENCODERS: dict[str, type[Encoder]] = {
    "openai-chat": ChatEncoder,
    "openai-responses": ResponsesEncoder,
    "anthropic": AnthropicEncoder,
    "gemini": GeminiEncoder,
}


def encoder_for(provider: Provider) -> type[Encoder]:
    """``provider``'s encoder class: one instance writes one answer (``encode_parts`` drives
    it). A format without one is a ``LookupError`` saying where it goes."""
    try:
        return ENCODERS[provider.name]
    except KeyError:
        raise LookupError(
            f"no encoder for the format {provider.name!r}: add one to ENCODERS in "
            "pysse/providers/encoders/__init__.py"
        ) from None


def encode_parts(
    provider: Provider,
    parts: Sequence[Part],
    *,
    error_at: int | None = None,
    error_message: str = "The server had an error.",
    malformed_at: int | None = None,
    terminal: bool = True,
    model: str = MODEL,
) -> list[bytes]:
    """The events of an answer made of ``parts`` (reasoning, hidden reasoning, text, tool
    calls, in the order given) in ``provider``'s format, one bytes object per event.

    ``error_at``/``malformed_at``: after that many deltas (every part's pieces counted), a
    provider error event / a payload that is not JSON, and nothing more. ``terminal=False``
    stops after the last delta: no closing events, no terminal signal (a dropped
    connection). A part the format cannot carry is a ``ValueError`` (Gemini's function
    calls take a JSON object). ``model``: the model the answer names (the demo relay
    names the one the request asked for)."""
    eol = provider.eol
    enc = encoder_for(provider)()
    enc.model = model
    events = enc.start()
    sent = 0
    chars = 0
    for i, part in enumerate(parts):
        if i:
            events += enc.close()
        events += enc.open(part)
        for piece in pieces(part):
            if error_at is not None and sent == error_at:
                return events + enc.error(error_message)
            if malformed_at is not None and sent == malformed_at:
                broken = f'data: {{"choices": [{{"delta": {{"content": "oops{eol}{eol}'
                return [*events, broken.encode()]
            events += enc.delta(piece)
            sent += 1
            chars += len(piece)
    if terminal:
        events += (enc.close() if parts else []) + enc.end(max(1, chars // 4))
    return events


def encode_answer(
    provider: Provider,
    deltas: Sequence[str],
    *,
    reasoning: Sequence[str] = (),
    tool_calls: Sequence[ToolUse] = (),
    citations: Sequence[Citation] = (),
    error_at: int | None = None,
    error_message: str = "The server had an error.",
    malformed_at: int | None = None,
    terminal: bool = True,
) -> list[bytes]:
    """An answer as models usually give it: ``reasoning`` deltas (if any), the text
    ``deltas`` with the sources it cites (``citations``), then ``tool_calls`` (if any); see
    :func:`encode_parts` for the rest."""
    parts: list[Part] = [Reasoning(reasoning)] if reasoning else []
    if deltas or citations or not tool_calls:
        parts.append(Text(deltas, citations))
    parts += tool_calls
    return encode_parts(
        provider,
        parts,
        error_at=error_at,
        error_message=error_message,
        malformed_at=malformed_at,
        terminal=terminal,
    )
