"""What the page sends: the request body in the chosen format, where to send it, and the
user's extra headers. Pure functions; the body is written in the upstream's own format because
the relay forwards it unchanged."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..providers import BodyOptions, Message, get_provider

__all__ = ["build_body", "parse_header_lines", "relay_url"]

AUTO_BODY_FORMAT = "openai-chat"  # what "auto" sends: the most widely spoken request format


def build_body(
    fmt: str,
    messages: Sequence[Message],
    *,
    model: str = "",
    system: str = "",
    max_tokens: int = 2048,
) -> dict[str, Any]:
    """The streaming request body for ``fmt`` ("auto" sends OpenAI Chat Completions). An
    unknown format is a ``ValueError`` naming the valid ones."""
    provider = get_provider(AUTO_BODY_FORMAT if fmt == "auto" else fmt)
    return provider.build_body(messages, BodyOptions(model, system, max_tokens))


def relay_url(setting: str, fmt: str, site: Mapping[str, Any], base: str) -> str:
    """The URL to POST to: the user's setting; else the server's relay; else the built-in
    demo relay's path for the format."""
    if setting.strip():
        return setting.strip()
    if site.get("relay"):
        return str(site["relay"])
    demo = site.get("demo") or {}
    path = demo.get(fmt if fmt != "auto" else AUTO_BODY_FORMAT, "/v1/chat/completions")
    return base.rstrip("/") + str(path)


def parse_header_lines(text: str) -> dict[str, str]:
    """``Name: value`` lines (the settings' extra headers) as a dict; bad lines ignored."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        name, sep, value = line.partition(":")
        name = name.strip()
        if sep and name and all(c.isalnum() or c in "-_" for c in name):
            out[name] = value.strip()
    return out
