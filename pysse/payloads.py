"""What the page sends: the request body for each provider format, and where to send it.

Pure functions, so the browser bridge stays a thin layer and all of this is tested in CPython.
The relay forwards the body unchanged, so it is written in the upstream's own format.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["build_body", "parse_header_lines", "relay_url"]

Message = tuple[str, str]  # (role: "user" | "assistant", text)


def build_body(
    fmt: str,
    messages: Sequence[Message],
    *,
    model: str = "",
    system: str = "",
    max_tokens: int = 2048,
) -> dict[str, Any]:
    """The streaming request body for ``fmt`` ("auto" sends OpenAI Chat Completions)."""
    if fmt == "anthropic":
        body: dict[str, Any] = {
            "model": model or "claude-sonnet-4-5",
            "max_tokens": max_tokens,
            "stream": True,
            "messages": [{"role": r, "content": t} for r, t in messages],
        }
        if system:
            body["system"] = system
        return body
    if fmt == "openai-responses":
        body = {
            "model": model or "gpt-5",
            "stream": True,
            "input": [{"role": r, "content": t} for r, t in messages],
        }
        if system:
            body["instructions"] = system
        return body
    if fmt == "gemini":
        body = {
            "contents": [
                {"role": "model" if r == "assistant" else "user", "parts": [{"text": t}]}
                for r, t in messages
            ]
        }
        if model:
            body["model"] = model  # read by relays to build the URL; Gemini ignores it
        if system:
            body["systemInstruction"] = {"parts": [{"text": system}]}
        return body
    msgs = ([{"role": "system", "content": system}] if system else []) + [
        {"role": r, "content": t} for r, t in messages
    ]
    return {
        "model": model or "gpt-4.1",
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": msgs,
    }


def relay_url(setting: str, fmt: str, site: Mapping[str, Any], base: str) -> str:
    """The URL to POST to: the user's setting; else the server's relay; else the built-in
    demo relay's path for the format."""
    if setting.strip():
        return setting.strip()
    if site.get("relay"):
        return str(site["relay"])
    demo = site.get("demo") or {}
    path = demo.get(fmt if fmt != "auto" else "openai-chat", "/v1/chat/completions")
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
