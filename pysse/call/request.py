"""What the page sends: the request body in the chosen format, where to send it, and the
user's extra headers. Pure functions; the body is written in the upstream's own format because
the relay forwards it unchanged."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from ..providers import PROVIDERS, BodyOptions, Message, Turn, get_provider

__all__ = [
    "advertised_format",
    "body_format",
    "build_body",
    "check_relay_url",
    "has_demo",
    "needs_format_probe",
    "parse_header_lines",
    "relay_url",
    "thinking_budget",
]

AUTO_BODY_FORMAT = "openai-chat"  # what "auto" sends: the most widely spoken request format


def build_body(
    fmt: str,
    messages: Sequence[Message | Turn],
    *,
    model: str = "",
    system: str = "",
    max_tokens: int = 2048,
    thinking: int = 0,
) -> dict[str, Any]:
    """The streaming request body for ``fmt`` ("auto" sends OpenAI Chat Completions). An
    unknown format is a ``ValueError`` naming the valid ones. ``thinking``: a reasoning budget
    in tokens (0: none asked for); with it, Anthropic gets the earlier answers' thinking
    blocks back with their signatures (``Turn``s carry them), the other formats drop them.
    The budget must stay below ``max_tokens`` (Anthropic's rule): the body's ``max_tokens``
    grows to leave room for the answer."""
    provider = get_provider(AUTO_BODY_FORMAT if fmt == "auto" else fmt)
    if thinking > 0:
        max_tokens += thinking
    return provider.build_body(messages, BodyOptions(model, system, max_tokens, thinking))


def thinking_budget(fmt: str, budget: int, continuing: bool) -> int:
    """The reasoning budget a request asks for: the setting's, except when Continue sends an
    Anthropic prefill (the partial answer as the last assistant message), which Anthropic
    refuses while thinking is on: that request asks for none."""
    return 0 if continuing and fmt == "anthropic" else max(0, budget)


def body_format(fmt: str, site: Mapping[str, Any], learned: str = "") -> str:
    """The format the request body is written in: the chosen one; for ``auto`` the one the
    relay advertised (``X-Pysse-Format``, ``learned``), else the site's, else OpenAI Chat."""
    if fmt != "auto":
        return fmt
    for candidate in (learned, str(site.get("format") or "")):
        if candidate in PROVIDERS:
            return candidate
    return AUTO_BODY_FORMAT


def has_demo(site: Mapping[str, Any]) -> bool:
    """True where the built-in demo relay answers (``build.py serve``), not on a static host."""
    return bool(site.get("demo"))


def relay_url(setting: str, fmt: str, site: Mapping[str, Any], base: str) -> str | None:
    """The URL to POST to: the user's setting; else the site's relay; else, where there is
    one, the built-in demo relay's path for the format; else None (nothing configured: the
    page shows how to set a relay up instead of posting to a static host)."""
    if setting.strip():
        return setting.strip()
    if site.get("relay"):
        return str(site["relay"])
    demo = site.get("demo")
    if not demo:
        return None
    path = demo.get(body_format(fmt, site), "/v1/chat/completions")
    return base.rstrip("/") + str(path)


def needs_format_probe(fmt: str, setting: str, site: Mapping[str, Any]) -> bool:
    """True when the page should ask its relay which format it speaks before the first
    message: Format is auto, the site names no format, and the relay is a real one (the
    built-in demo speaks every format at its own path)."""
    if fmt != "auto" or site.get("format") in PROVIDERS:
        return False
    return bool(setting.strip() or site.get("relay"))


def advertised_format(probe_text: str) -> str | None:
    """The format a pysse relay's GET answer names, if any."""
    try:
        info = json.loads(probe_text)
    except (ValueError, RecursionError):
        return None
    if isinstance(info, dict) and info.get("relay") == "pysse":
        fmt = info.get("format")
        if isinstance(fmt, str) and fmt in PROVIDERS:
            return fmt
    return None


def check_relay_url(text: str) -> str | None:
    """What is wrong with a typed relay URL, in words; None if it can work. Empty is fine
    (the site's relay, or the demo)."""
    t = text.strip()
    if not t:
        return None
    if any(c.isspace() for c in t):
        return "the relay URL contains spaces"
    if t.startswith("/") and not t.startswith("//"):
        return None  # a path on this site's own server
    parts = urlsplit(t)
    if parts.scheme not in ("http", "https"):
        return (
            "the relay URL must start with https:// or http:// (e.g. "
            "https://relay.example/relay), or be a path on this site such as /relay"
        )
    if not parts.hostname:
        return "the relay URL has no host name"
    try:
        parts.port  # noqa: B018 - a bad port raises
    except ValueError:
        return "the relay URL's port is not a number"
    if parts.query or parts.fragment:
        return "the relay URL should not have ?query or #fragment parts"
    return None


def parse_header_lines(text: str) -> dict[str, str]:
    """``Name: value`` lines (the settings' extra headers) as a dict; bad lines ignored."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        name, sep, value = line.partition(":")
        name = name.strip()
        if sep and name and all(c.isalnum() or c in "-_" for c in name):
            out[name] = value.strip()
    return out
