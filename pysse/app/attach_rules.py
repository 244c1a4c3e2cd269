"""What the page does with a file someone attaches, decided in pure Python: which kind it is
(an image a model takes, a text file, or neither), an image's pixel size read from its header,
and whether and how a large image is scaled down before it is sent.

The scaling itself is the platform's (``pysse.browser.images``: ``createImageBitmap`` and
``OffscreenCanvas.convertToBlob``); this module says to what size and in which encodings to
try, so the rules are tested in CPython and are the same in a worker and on the main thread.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ..errors import AttachmentError
from ..providers.attachments import IMAGE_TYPES, MAX_IMAGE_BYTES, MAX_TEXT_CHARS

__all__ = [
    "MAX_SIDE",
    "ScalePlan",
    "fit",
    "image_size",
    "kind_of",
    "scale_plan",
    "scaled_note",
    "text_of",
]

# The longest side a model sees at full detail (Anthropic resizes anything larger itself; a
# larger image costs upload time and tokens for nothing).
MAX_SIDE = 1568
TEXT_SUFFIXES = (".md", ".py", ".csv", ".json", ".txt")
TEXT_TYPES = ("application/json",)
# A text file is refused by its size before it is read: UTF-8 takes at most 4 bytes a character.
MAX_TEXT_BYTES = MAX_TEXT_CHARS * 4


def kind_of(name: str, media_type: str) -> str:
    """ "image" or "text", or raise ``AttachmentError`` with the sentence the page shows."""
    if media_type in IMAGE_TYPES:
        return "image"
    if media_type.startswith("text/") or media_type in TEXT_TYPES:
        return "text"
    if not media_type and name.lower().endswith(TEXT_SUFFIXES):
        return "text"
    label = " ".join(name.split())[:200] or "attachment"
    raise AttachmentError(
        f"{label}: {media_type or 'this type of file'} cannot be attached; attach an image "
        f"(PNG, JPEG, GIF, WebP) or a text file"
    )


def text_of(name: str, data: bytes) -> str:
    """A text file's content: UTF-8 (a byte order mark dropped), else refused."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:  # (another encoding would reach the model as mojibake)
        raise AttachmentError(
            f"{name}: not UTF-8 text; save it as UTF-8 and attach it again"
        ) from None


def image_size(data: bytes) -> tuple[int, int] | None:
    """An image's width and height from its header (PNG, GIF, WebP, JPEG), None when the
    header is not one of those or is cut short. Reads only the header: bounded work."""
    try:
        if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR":
            w, h = struct.unpack(">II", data[16:24])
            return (w, h) if w and h else None
        if data[:6] in (b"GIF87a", b"GIF89a"):
            w, h = struct.unpack("<HH", data[6:10])
            return (w, h) if w and h else None
        if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
            return _webp_size(data)
        if data[:2] == b"\xff\xd8":
            return _jpeg_size(data)
    except struct.error:
        return None
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":
        w, h = struct.unpack("<HH", data[26:30])
        return (w & 0x3FFF, h & 0x3FFF) if w & 0x3FFF and h & 0x3FFF else None
    if chunk == b"VP8L" and data[20:21] == b"\x2f":
        bits = int.from_bytes(data[21:25], "little")
        return ((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    if chunk == b"VP8X" and len(data) >= 30:
        return (
            int.from_bytes(data[24:27], "little") + 1,
            int.from_bytes(data[27:30], "little") + 1,
        )
    return None


# JPEG's start-of-frame markers (not DHT C4, JPG C8, DAC CC), which hold the size.
_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """Walk the segments to the first start-of-frame (EXIF before it is skipped by length)."""
    i = 2
    while i + 4 <= len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # no length
            i += 2
            continue
        (length,) = struct.unpack(">H", data[i + 2 : i + 4])
        if marker in _SOF:
            h, w = struct.unpack(">HH", data[i + 5 : i + 9])
            return (w, h) if w and h else None
        if length < 2:
            return None
        i += 2 + length
    return None


def fit(width: int, height: int, max_side: int = MAX_SIDE) -> tuple[int, int]:
    """The size within ``max_side`` on its longest side, the aspect kept (never larger)."""
    longest = max(width, height)
    if longest <= max_side:
        return width, height
    scale = max_side / longest
    return max(1, round(width * scale)), max(1, round(height * scale))


@dataclass(frozen=True)
class ScalePlan:
    """Draw the image at ``width`` × ``height`` and encode it in each of ``encodings`` in turn
    (a media type and a quality, None: the format's own) until one is at most
    ``MAX_IMAGE_BYTES``."""

    width: int
    height: int
    encodings: tuple[tuple[str, float | None], ...]


def scale_plan(media_type: str, size: tuple[int, int], nbytes: int) -> ScalePlan | None:
    """None when the image goes as it is (within ``MAX_SIDE`` and ``MAX_IMAGE_BYTES``); else
    how to scale it. A JPEG stays JPEG; the others become WebP (it keeps transparency and is
    smaller than PNG for photos), then JPEG as a last resort: an encoder that cannot write
    WebP (Safari's) writes PNG instead, which may be too large."""
    width, height = size
    if max(width, height) <= MAX_SIDE and nbytes <= MAX_IMAGE_BYTES:
        return None
    w, h = fit(width, height)
    jpeg: tuple[tuple[str, float | None], ...] = (("image/jpeg", 0.85), ("image/jpeg", 0.6))
    if media_type == "image/jpeg":
        return ScalePlan(w, h, jpeg)
    return ScalePlan(w, h, (("image/webp", 0.9), ("image/webp", 0.7), *jpeg))


def scaled_note(name: str, before: tuple[int, int], plan: ScalePlan, media_type: str) -> str:
    """What the page tells the person about an image it changed before sending."""
    if (plan.width, plan.height) != before:
        return f"{name} scaled to {plan.width}×{plan.height} to fit (was {before[0]}×{before[1]})."
    kind = media_type.removeprefix("image/").upper()
    return f"{name} re-encoded as {kind} to fit in {MAX_IMAGE_BYTES >> 20} MB."
