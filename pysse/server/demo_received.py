"""What the demo relay says it received with a question: each attached image's type, size and
pixel dimensions, each extra text part's length.

A page that attaches files can then be tested offline, end to end: the answer names what
arrived, in whichever of the four formats' shapes it was sent (``pysse.providers.attachments``
writes them). The pixel dimensions come from the image's own header (``imagesize``), so a
page that scales an image down before sending it can check by how much.
"""

from __future__ import annotations

import base64
import binascii
import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import imagesize

from . import demo

__all__ = ["Received", "describe", "received_files"]

DATA_URL_PREFIX = "data:"


@dataclass(frozen=True)
class Received:
    """One file the last user message carried: an image (``size`` in bytes, ``width`` and
    ``height`` in pixels, -1 where the header could not be read) or text (``size`` in
    characters)."""

    kind: str
    media_type: str
    size: int
    width: int = -1
    height: int = -1


def _image(media_type: str, data_b64: str) -> Received:
    try:
        raw = base64.b64decode(data_b64, validate=True)
    except (binascii.Error, ValueError):
        return Received("image", media_type, -1)
    try:
        width, height = imagesize.get(io.BytesIO(raw))
    except (ValueError, OSError):  # (a truncated or foreign header)
        width, height = -1, -1
    return Received("image", media_type, len(raw), int(width), int(height))


def _from_data_url(url: Any) -> Received | None:
    if not isinstance(url, str) or not url.startswith(DATA_URL_PREFIX) or "," not in url:
        return None
    head, data = url[len(DATA_URL_PREFIX) :].split(",", 1)
    media_type = head.split(";", 1)[0]
    return _image(media_type, data) if head.endswith(";base64") else None


def _image_url(part: dict[str, Any]) -> Received | None:  # OpenAI Chat
    inner = part.get("image_url")
    return _from_data_url(inner.get("url") if isinstance(inner, dict) else inner)


def _input_image(part: dict[str, Any]) -> Received | None:  # OpenAI Responses
    return _from_data_url(part.get("image_url"))


def _anthropic_image(part: dict[str, Any]) -> Received | None:
    source = part.get("source")
    if not isinstance(source, dict) or source.get("type") != "base64":
        return None
    return _image(str(source.get("media_type", "")), str(source.get("data", "")))


def _inline_data(inline: Any) -> Received | None:  # Gemini (either spelling)
    if not isinstance(inline, dict):
        return None
    media_type = inline.get("mime_type", inline.get("mimeType", ""))
    return _image(str(media_type), str(inline.get("data", "")))


# A part's shape, told by its ``type`` (three formats) or its one key (Gemini's).
BY_TYPE: dict[str, Callable[[dict[str, Any]], Received | None]] = {
    "image_url": _image_url,
    "input_image": _input_image,
    "image": _anthropic_image,
}
BY_KEY: dict[str, Callable[[Any], Received | None]] = {
    "inline_data": _inline_data,
    "inlineData": _inline_data,
}


def _parts_of_last_user_message(body: dict[str, Any]) -> list[dict[str, Any]]:
    for role, parts in reversed(demo.message_items(body)):
        if role in (None, "", "user"):  # (none said: a user's, as each format reads it)
            return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
    return []


# Where each format's writer puts the question among a message's text parts: OpenAI's two
# first, Anthropic and Gemini last (their files go first: attachments.py).
QUESTION_AT = {"openai-chat": 0, "openai-responses": 0, "anthropic": -1, "gemini": -1}


def received_files(body: dict[str, Any], fmt: str) -> list[Received]:
    """The files in the request's last user message in ``fmt``: its images, and its text
    parts but the question (each text file is one more)."""
    files: list[Received] = []
    texts: list[str] = []
    for part in _parts_of_last_user_message(body):
        kind = part.get("type")
        reader = BY_TYPE.get(kind) if isinstance(kind, str) else None
        got = reader(part) if reader else None
        for key, read in BY_KEY.items():
            if got is None and key in part:
                got = read(part[key])
        if got is not None:
            files.append(got)
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
    if texts:
        del texts[QUESTION_AT.get(fmt, 0)]
    return files + [Received("text", "text/plain", len(t)) for t in texts]


def describe(files: list[Received]) -> str:
    """A paragraph naming each received file, or "" when there is none."""
    if not files:
        return ""
    lines = [f"I received {len(files)} file{'s' if len(files) != 1 else ''}:", ""]
    for f in files:
        if f.kind == "image":
            pixels = f"{f.width}×{f.height} px" if f.width >= 0 else "pixels unreadable"
            lines.append(f"- an image, {f.media_type}, {f.size:,} bytes, {pixels}")
        else:
            lines.append(f"- a text file, {f.size:,} characters")
    return "\n".join(lines) + "\n\n"
