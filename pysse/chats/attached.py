"""A user message's attached files as stored (the chat store's JSON, an exported chat file)
and read back, checked.

Stored whole, with the conversation: an image as its base64 bytes, a text file as its text.
Read back through ``Attachment.image``/``Attachment.text``, the checks every attachment gets
where it is made (a type a model takes, real base64, at most 5 MB, 200,000 characters), so a
hand-edited file cannot put into a request what the page itself would have refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import AttachmentError
from ..providers.attachments import MAX_ATTACHMENTS, Attachment

__all__ = ["attachments_from_json", "attachments_to_json"]

KEYS = ("kind", "type", "name", "data")


def attachments_to_json(files: Sequence[Attachment]) -> list[dict[str, str]]:
    return [{"kind": f.kind, "type": f.media_type, "name": f.name, "data": f.data} for f in files]


def attachments_from_json(value: Any, at: str) -> tuple[Attachment, ...]:
    """A message's ``attachments`` field (absent: none), or ``AttachmentError`` naming the
    field and why, in one sentence."""
    if value is None:
        return ()
    where = f"{at}'s 'attachments'"
    if not isinstance(value, list):
        raise AttachmentError(f"{where} must be a list")
    if len(value) > MAX_ATTACHMENTS:
        raise AttachmentError(f"{where} holds {len(value)} files, over {MAX_ATTACHMENTS}")
    out = []
    for i, item in enumerate(value):
        field = f"{where}[{i}]"
        if not isinstance(item, dict):
            raise AttachmentError(f"{field} is not an object")
        for key in KEYS:
            if not isinstance(item.get(key), str):
                raise AttachmentError(f"{field}'s '{key}' must be text")
        try:
            if item["kind"] == "image":
                out.append(Attachment.image(item["name"], item["type"], item["data"]))
            elif item["kind"] == "text":
                out.append(Attachment.text(item["name"], item["data"], item["type"][:100]))
            else:
                raise AttachmentError(f"'kind' must be image or text, not {item['kind'][:20]!r}")
        except AttachmentError as exc:
            raise AttachmentError(f"{field}: {exc}") from None
    return tuple(out)
