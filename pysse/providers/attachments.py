"""Files a user attaches to a question (an image for a vision model, a text file), and the
content parts each format sends them as.

Every format has its own shape for an image: OpenAI Chat an ``image_url`` part holding a data
URL, Responses an ``input_image``, Anthropic an ``image`` block with a base64 ``source``,
Gemini an ``inline_data`` part. A text file is sent as text in every format: its name on a
line of its own, then its content, so the model knows where it starts and ends.

Only what a provider accepts is built here: an ``Attachment`` is checked where it is made
(``Attachment.image``/``Attachment.text``), so a request never carries a part a provider
would refuse for its shape (an unknown image type, base64 that is not).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import AttachmentError

__all__ = [
    "IMAGE_TYPES",
    "MAX_ATTACHMENTS",
    "MAX_IMAGE_BYTES",
    "MAX_TEXT_CHARS",
    "Attachment",
    "AttachmentError",
    "content_parts",
]

JSON = dict[str, Any]

# The image types all four formats take (Anthropic's list is the shortest).
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
MAX_IMAGE_BYTES = 5 * 1024 * 1024  # Anthropic's limit for one image, the strictest
MAX_TEXT_CHARS = 200_000  # a text file's content; a longer one is refused, not cut
MAX_ATTACHMENTS = 10  # per message
MAX_NAME_CHARS = 200


@dataclass(frozen=True)
class Attachment:
    """One attached file: ``kind`` "image" (``data``: its bytes in base64) or "text"
    (``data``: its content). Make one with ``Attachment.image`` or ``Attachment.text``,
    which check it."""

    kind: Literal["image", "text"]
    media_type: str
    name: str
    data: str

    @classmethod
    def image(cls, name: str, media_type: str, data_b64: str) -> Attachment:
        """An image, checked: a type every format takes, real base64, at most
        ``MAX_IMAGE_BYTES``."""
        label = _name(name)
        if media_type not in IMAGE_TYPES:
            raise AttachmentError(
                f"{label}: {media_type or 'an unknown type'} is not an image type a model "
                f"takes; attach a PNG, JPEG, GIF or WebP"
            )
        try:
            raw = base64.b64decode(data_b64, validate=True)
        except (binascii.Error, ValueError):
            raise AttachmentError(f"{label}: the image's data is not base64") from None
        if len(raw) > MAX_IMAGE_BYTES:
            raise AttachmentError(
                f"{label}: {len(raw):,} bytes, over the {MAX_IMAGE_BYTES:,} a model takes; "
                f"scale it down or attach a smaller one"
            )
        return cls("image", media_type, label, data_b64)

    @classmethod
    def text(cls, name: str, content: str, media_type: str = "text/plain") -> Attachment:
        """A text file, checked: at most ``MAX_TEXT_CHARS`` characters."""
        label = _name(name)
        if len(content) > MAX_TEXT_CHARS:
            raise AttachmentError(
                f"{label}: {len(content):,} characters, over the {MAX_TEXT_CHARS:,} sent "
                f"with a question; attach a part of it"
            )
        return cls("text", media_type or "text/plain", label, content)

    def data_url(self) -> str:
        return f"data:{self.media_type};base64,{self.data}"

    def as_text(self) -> str:
        """A text file as the model reads it: its name, then its content."""
        return f"{self.name}:\n\n{self.data}"


def _name(name: str) -> str:
    """A file's name as shown and sent: one line, bounded (a name comes from the user's disk
    or a hand-edited chat file)."""
    one_line = " ".join(name.split()) or "attachment"
    return one_line[:MAX_NAME_CHARS]


def _openai_chat(text: str, files: Sequence[Attachment]) -> list[JSON]:
    parts: list[JSON] = [{"type": "text", "text": text}] if text else []
    for f in files:
        if f.kind == "image":
            parts.append({"type": "image_url", "image_url": {"url": f.data_url()}})
        else:
            parts.append({"type": "text", "text": f.as_text()})
    return parts


def _openai_responses(text: str, files: Sequence[Attachment]) -> list[JSON]:
    parts: list[JSON] = [{"type": "input_text", "text": text}] if text else []
    for f in files:
        if f.kind == "image":
            # (``detail`` is required by the SDK's type; "auto" is what the API assumes)
            parts.append({"type": "input_image", "image_url": f.data_url(), "detail": "auto"})
        else:
            parts.append({"type": "input_text", "text": f.as_text()})
    return parts


def _anthropic(text: str, files: Sequence[Attachment]) -> list[JSON]:
    """Images before the question: Anthropic's advice for the best answers."""
    parts: list[JSON] = []
    for f in files:
        if f.kind == "image":
            source = {"type": "base64", "media_type": f.media_type, "data": f.data}
            parts.append({"type": "image", "source": source})
        else:
            parts.append({"type": "text", "text": f.as_text()})
    return [*parts, *([{"type": "text", "text": text}] if text else [])]


def _gemini(text: str, files: Sequence[Attachment]) -> list[JSON]:
    parts: list[JSON] = []
    for f in files:
        if f.kind == "image":
            parts.append({"inline_data": {"mime_type": f.media_type, "data": f.data}})
        else:
            parts.append({"text": f.as_text()})
    return [*parts, *([{"text": text}] if text else [])]


SHAPES: dict[str, Callable[[str, Sequence[Attachment]], list[JSON]]] = {
    "openai-chat": _openai_chat,
    "openai-responses": _openai_responses,
    "anthropic": _anthropic,
    "gemini": _gemini,
}


def content_parts(fmt: str, text: str, files: Sequence[Attachment]) -> list[JSON]:
    """A user message's text and files as ``fmt``'s content parts."""
    return SHAPES[fmt](text, files)
