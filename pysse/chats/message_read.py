"""A message read back from a file or the chat store (``Conversation.from_json``), every field
checked where it enters (``chats.records``)."""

from __future__ import annotations

import re
from typing import Any

from ..errors import AttachmentError
from ..providers.base import MAX_MODEL_CHARS
from .attached import attachments_from_json
from .message import STATES, Message
from .message_extras import (
    ExtrasError,
    citations_from_json,
    reasoning_from_json,
    tool_calls_from_json,
)
from .records import MAX_TEXT, ImportError_, Reader
from .runs import runs_from_json

__all__ = ["message_number", "read_message"]

MAX_TIME = 1e11  # seconds since 1970: a time (created, updated) later than year 5138 is not one
MAX_TOKENS = 10**12
MAX_PIECES = 10_000


def read_message(m: Any, at: str, known: dict[str, Message], r: Reader) -> Message:
    """One message of ``from_json``, checked. What makes it no message (its role, id,
    parent, text) raises in both modes; a bad optional field goes through ``r``."""
    must = Reader(strict=True)
    if not isinstance(m, dict):
        raise ImportError_(f"{at} is not an object")
    role = m.get("role")
    if role not in ("user", "assistant"):
        raise ImportError_(f"{at} has role {str(role)[:20]!r}")
    mid = must.ident(m.get("id"), f"{at}'s 'id'")
    if mid in known:
        raise ImportError_(f"{at} has a missing or repeated id")
    parent = m.get("parent")
    if parent is not None and (not isinstance(parent, str) or parent not in known):
        raise ImportError_(f"{at} replies to {str(parent)[:40]!r}, which comes later or not")
    text = must.text(m.get("text"), f"{at}'s 'text'", MAX_TEXT)
    mine = role == "assistant"
    try:
        reasoning = reasoning_from_json(m.get("reasoning"), at) if mine else ()
        tool_calls = tool_calls_from_json(m.get("tool_calls"), at) if mine else ()
    except ExtrasError as exc:
        reasoning, tool_calls = r.bad(str(exc), "(dropped)", ((), ()))
    try:
        citations = citations_from_json(m.get("citations"), at) if mine else ()
    except ExtrasError as exc:
        citations = r.bad(str(exc), "(the sources dropped)", ())
    try:
        runs = runs_from_json(m.get("runs"), at) if mine else ()
    except ExtrasError as exc:
        runs = r.bad(str(exc), "(the outputs of its runs dropped)", ())
    try:
        files = attachments_from_json(m.get("attachments"), at) if not mine else ()
    except AttachmentError as exc:  # (a file refuses the import; the store drops them)
        if r.strict:
            raise ImportError_(str(exc)) from None
        files = r.bad(str(exc), "(dropped)", ())
    state = r.text(m.get("state"), f"{at}'s 'state'") or "completed"
    if state not in STATES:
        state = r.bad(f"{at}'s 'state'", f"must be one of {', '.join(STATES)}", "completed")
    fmt = r.text(m.get("format"), f"{at}'s 'format'") or None
    msg = Message(
        mid,
        role,
        text,
        parent,
        state=state,
        detail=r.text(m.get("detail"), f"{at}'s 'detail'"),
        format=fmt,
        model=" ".join(r.text(m.get("model"), f"{at}'s 'model'", MAX_MODEL_CHARS).split()),
        usage=_usage(m.get("usage"), at, r),
        created=r.number(m.get("created"), f"{at}'s 'created'", 0, MAX_TIME) or 0.0,
        pieces=r.count(m.get("pieces"), f"{at}'s 'pieces'", 1, MAX_PIECES) or 1,
        speed=_speed(m.get("speed"), at, r),
        answer_id=r.text(m.get("answer_id"), f"{at}'s 'answer_id'"),
        url=r.text(m.get("url"), f"{at}'s 'url'"),
        reasoning=reasoning,
        thought_ms=r.number(m.get("thought_ms"), f"{at}'s 'thought_ms'", 0, 1e10)
        if reasoning
        else None,
        tool_calls=tool_calls,
        citations=citations,
        attachments=files,
        runs=runs,
    )
    if msg.state == "streaming":  # it was cut off when the page closed (or streams elsewhere)
        msg.in_flight = bool(msg.answer_id)
        msg.state, msg.detail = "truncated", msg.detail or "the page closed mid-answer"
        msg.was_streaming = True
    return msg


def _usage(value: Any, at: str, r: Reader) -> tuple[int | None, int | None] | None:
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != 2:
        return r.bad(f"{at}'s 'usage'", "must be a list of two token counts", None)
    a, b = (r.count(v, f"{at}'s 'usage'", 0, MAX_TOKENS) for v in value)
    return (a, b)


def _speed(value: Any, at: str, r: Reader) -> dict[str, Any] | None:
    """A stored speed summary (``SpeedMeter.summary``): its known keys, checked."""
    if value is None:
        return None
    if not isinstance(value, dict):
        return r.bad(f"{at}'s 'speed'", "must be an object", None)
    out: dict[str, Any] = {}
    for key in ("ttft_ms", "tokens_per_s"):
        if key in value:
            out[key] = r.number(value[key], f"{at}'s speed.{key}", 0, 1e9)
    if "estimated" in value:
        out["estimated"] = r.flag(value["estimated"], f"{at}'s speed.estimated") is not False
    return out


def message_number(mid: str) -> int:
    """The counter in a message id ("m12" or "m12-3fa9c1"), 0 for another shape."""
    found = re.fullmatch(r"m(\d{1,11})(?:-.*)?", mid)
    return int(found.group(1)) if found else 0
