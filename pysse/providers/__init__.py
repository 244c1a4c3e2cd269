"""SSE events -> chat events: one module per provider wire format, and the registry of them.

Each format module builds one :class:`~pysse.providers.base.Provider` holding everything pysse
knows about that format: its decoder, how to recognise it, its request body, endpoint and auth
headers. Writing a stream (the demo model, the testing kit) is server-side: each format's
encoder lives in ``encoders/``, which the page never loads. Adding a format is one new module
here (and its encoder there) plus its name in :data:`Format` and its module in
:data:`PROVIDERS`; the page's Format menu, the relay and the demo relay all read this
table.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Literal, get_args

from ..sse import SSEEvent
from . import anthropic, gemini, openai_chat, openai_responses
from .attachments import Attachment
from .base import (
    CONTINUE_INSTRUCTION,
    JSON,
    BodyOptions,
    Decoder,
    Message,
    Provider,
    Turn,
    error_from_payload,
    error_message,
    http_error_message,
    valid_model_name,
)

if TYPE_CHECKING:
    from .encoders import (
        Encoder,
        HiddenReasoning,
        Part,
        Reasoning,
        Text,
        ToolUse,
        encode_answer,
        encode_parts,
        encoder_for,
    )

__all__ = [
    "CONTINUE_INSTRUCTION",
    "FORMATS",
    "PROVIDERS",
    "Attachment",
    "BodyOptions",
    "Decoder",
    "Encoder",
    "Format",
    "HiddenReasoning",
    "Message",
    "Part",
    "Provider",
    "ProviderName",
    "Reasoning",
    "Text",
    "ToolUse",
    "Turn",
    "detect_format",
    "encode_answer",
    "encode_parts",
    "encoder_for",
    "error_from_payload",
    "error_message",
    "get_provider",
    "http_error_message",
    "valid_model_name",
]

ProviderName = Literal["openai-chat", "openai-responses", "anthropic", "gemini"]
Format = Literal["auto", ProviderName]

# The registry: the page's Format menu shows them in this order, and ``auto`` asks each in
# turn whether an event is its own (their signatures do not overlap).
PROVIDERS: dict[str, Provider] = {
    p.name: p
    for p in (
        openai_chat.PROVIDER,
        openai_responses.PROVIDER,
        anthropic.PROVIDER,
        gemini.PROVIDER,
    )
}
FORMATS: tuple[str, ...] = get_args(Format)[:1] + get_args(ProviderName)
assert set(FORMATS[1:]) == set(PROVIDERS), "Format and PROVIDERS must name the same formats"


def get_provider(name: str) -> Provider:
    """The provider for ``name``; a ``ValueError`` naming the valid ones otherwise."""
    try:
        return PROVIDERS[name]
    except KeyError:
        raise ValueError(
            f"unknown format {name!r}; expected one of {', '.join(PROVIDERS)}"
        ) from None


def detect_format(ev: SSEEvent, obj: JSON | None) -> str | None:
    """The format this event identifies (for ``auto``), or None if it does not tell."""
    for provider in PROVIDERS.values():
        if provider.sniff(ev, obj):
            return provider.name
    return None


# Writing streams is server-side (the demo, the testing kit): those names are imported from
# .encoders on first use, so the page, which only reads, never loads them.
_ENCODING = {"Encoder", "HiddenReasoning", "Part", "Reasoning", "Text", "ToolUse"}
_ENCODING |= {"encode_answer", "encode_parts", "encoder_for"}


def __getattr__(name: str) -> Any:
    if name not in _ENCODING:
        raise AttributeError(f"module 'pysse.providers' has no attribute {name!r}")
    value = getattr(importlib.import_module(".encoders", __name__), name)
    globals()[name] = value
    return value
