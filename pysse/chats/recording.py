"""An answer's recording (the exact bytes, as they arrived, with their arrival times) kept beside
its conversation, so the inspector works on a restored chat: stored, exported, imported,
capped.

Recordings are kept out of the conversation JSON: a conversation is small text saved often; a
recording is up to ``RECORDING_MAX`` bytes saved once, when its answer ends (and now and then
while it streams, for a reattach after a reload). ``Settings → Keep recordings: no`` keeps
none; all recordings together are capped at ``TOTAL_MAX`` bytes, the oldest dropped first.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "RECORDING_MAX",
    "TOTAL_MAX",
    "Recording",
    "RecordingError",
    "evict",
    "recordings_from_json",
    "recordings_to_json",
]

RECORDING_MAX = 4 << 20  # bytes of one answer's stream kept (a longer one is not kept)
TOTAL_MAX = 64 << 20  # bytes of all recordings together
EXPORT_MAX = 16 << 20  # bytes of recordings in one exported chat


class RecordingError(ValueError):
    """A recording in an imported file that cannot be used; the message says why."""


@dataclass
class Recording:
    """What the inspector needs of a finished answer: its chunks with arrival times (ms after
    the request), the Format setting it was read with, how it ended, and the page's own
    timing of it (renders, total time: ``Turn.timing()``)."""

    chunks: list[tuple[float, bytes]]
    format: str = "auto"
    state: str = "completed"
    timing: dict[str, Any] = field(default_factory=dict)
    answer_id: str = ""  # the relay's X-Pysse-Answer-Id, for a reattach after a reload
    replay: bool = False  # never: a recording is of a real answer (the inspector asks)

    @property
    def size(self) -> int:
        return sum(len(c) for _, c in self.chunks)

    def raw(self) -> bytes:
        return b"".join(c for _, c in self.chunks)

    # -- storage: JSON-able metadata and one bytes blob -----------------------------------------

    def pack(self) -> tuple[dict[str, Any], bytes]:
        meta = {
            "format": self.format,
            "state": self.state,
            "timing": _plain(self.timing),
            "times": [round(t, 1) for t, _ in self.chunks],
            "sizes": [len(c) for _, c in self.chunks],
            "answer_id": self.answer_id,
        }
        return meta, self.raw()

    @classmethod
    def unpack(cls, meta: Any, data: bytes) -> Recording:
        """A recording from ``pack``'s output; a ``RecordingError`` if they do not agree."""
        if not isinstance(meta, dict):
            raise RecordingError("a recording's metadata must be an object")
        times, sizes = meta.get("times"), meta.get("sizes")
        if not (isinstance(times, list) and isinstance(sizes, list) and len(times) == len(sizes)):
            raise RecordingError("a recording needs as many times as sizes")
        if not all(isinstance(n, int) and n >= 0 for n in sizes) or sum(sizes) != len(data):
            raise RecordingError("a recording's sizes do not add up to its bytes")
        if not all(isinstance(t, int | float) and not isinstance(t, bool) for t in times):
            raise RecordingError("a recording's times must be numbers")
        chunks, at = [], 0
        for t, n in zip(times, sizes, strict=True):
            chunks.append((float(t), data[at : at + n]))
            at += n
        timing = meta.get("timing")
        return cls(
            chunks,
            format=_str(meta.get("format")) or "auto",
            state=_str(meta.get("state")) or "completed",
            timing=timing if isinstance(timing, dict) else {},
            answer_id=_str(meta.get("answer_id")),
        )


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _plain(obj: Any) -> Any:
    """JSON-safe copy of the timing dict (finite numbers, strings, lists, dicts)."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_plain(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj if isinstance(obj, str | int | float | bool) or obj is None else str(obj)


def evict(index: Sequence[tuple[str, int, float]], total_max: int = TOTAL_MAX) -> list[str]:
    """The keys of the recordings to delete so the rest fit in ``total_max`` bytes: the
    oldest first. ``index`` holds (key, size, saved time)."""
    total = sum(size for _, size, _ in index)
    out = []
    for key, size, _ in sorted(index, key=lambda row: row[2]):
        if total <= total_max:
            break
        out.append(key)
        total -= size
    return out


# -- export / import (the JSON file: the conversation plus a "recordings" part) -----------------


def recordings_to_json(recs: dict[str, Recording], limit: int = EXPORT_MAX) -> dict[str, Any]:
    """``{message id: recording}`` for an export file, newest answers' recordings first while
    they fit in ``limit`` bytes (the others are left out, the conversation is complete)."""
    out: dict[str, Any] = {}
    used = 0
    for mid, rec in reversed(list(recs.items())):
        if used + rec.size > limit:
            continue
        used += rec.size
        meta, data = rec.pack()
        out[mid] = {**meta, "base64": base64.b64encode(data).decode("ascii")}
    return dict(reversed(list(out.items())))


def recordings_from_json(obj: Any, message_ids: set[str]) -> dict[str, Recording]:
    """The recordings part of an imported file, checked; recordings of unknown messages or
    over the caps are a ``RecordingError``."""
    if obj is None:
        return {}
    if not isinstance(obj, dict):
        raise RecordingError("'recordings' must be an object")
    out: dict[str, Recording] = {}
    total = 0
    for mid, item in obj.items():
        if mid not in message_ids:
            raise RecordingError(f"a recording for {mid!r}, which is not in the conversation")
        if not isinstance(item, dict) or not isinstance(item.get("base64"), str):
            raise RecordingError(f"the recording of {mid!r} has no base64 bytes")
        try:
            data = base64.b64decode(item["base64"], validate=True)
        except (binascii.Error, ValueError):
            raise RecordingError(f"the recording of {mid!r} is not valid base64") from None
        total += len(data)
        if len(data) > RECORDING_MAX or total > EXPORT_MAX:
            raise RecordingError(f"recordings larger than {EXPORT_MAX >> 20} MiB")
        out[mid] = Recording.unpack(item, data)
    return out
