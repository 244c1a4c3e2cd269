"""Reading a client's JSON request body without trusting it: bounded in size, in time and in
nesting depth, one value per key, and one error shape for every refusal.

Why each bound exists:

* **size** (``limit``): the read stops at the limit, so a huge body costs at most that much.
* **time** (``idle_s``/``total_s``): a client that sends its body one byte a minute would
  otherwise hold a connection (and a file descriptor) for as long as it likes.
* **depth** (``max_depth``): ``json.loads`` recurses per ``[``/``{``; ``[`` x 100,000 raises
  ``RecursionError`` (a 500 with a traceback) instead of a clean 400. A linear scan that
  skips strings is far cheaper than the parse it protects.
* **duplicate keys**: ``{"model": "expensive", "model": "allowed"}`` is read by Python as
  ``allowed`` and by some upstreams as ``expensive``; a model allow-list checked on one
  reading and enforced by the other is no allow-list. Such bodies are refused.

The depth check is the project's one (``pysse.jsonsafe``): mostly C, linear, never recursive.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response

from ..jsonsafe import JSONTooDeepError, loads_bounded

__all__ = [
    "BodyError",
    "json_error",
    "loads_strict",
    "read_json_body",
]

MAX_DEPTH = 64


def json_error(
    status: int, kind: str, message: str, headers: dict[str, str] | None = None
) -> Response:
    """The one error shape the relay and the demo answer with (OpenAI's, which every SDK
    reads): ``{"error": {"type": kind, "message": message}}``, never sniffed as HTML."""
    hdrs = {"x-content-type-options": "nosniff", "cache-control": "no-store", **(headers or {})}
    return JSONResponse({"error": {"type": kind, "message": message}}, status, headers=hdrs)


class BodyError(ValueError):
    """A request body the server refuses; ``status`` and ``kind`` say how to answer."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise BodyError(
                400, "duplicate_key", f"the JSON key {key!r} appears twice in one object"
            )
        obj[key] = value
    return obj


def _no_constants(name: str) -> Any:
    raise BodyError(400, "invalid_json", f"{name} is not valid JSON")


def loads_strict(raw: bytes | str, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` that refuses what parsers disagree on or choke on: nesting deeper than
    ``max_depth``, duplicate keys, NaN/Infinity. Raises ``BodyError`` (a ValueError)."""
    try:
        return loads_bounded(
            raw, max_depth, object_pairs_hook=_no_duplicates, parse_constant=_no_constants
        )
    except JSONTooDeepError as exc:
        raise BodyError(400, "too_deep", f"the JSON nests deeper than {max_depth} levels") from exc
    except BodyError:
        raise
    except ValueError as exc:
        raise BodyError(400, "invalid_json", "the request body is not valid JSON") from exc


def too_large(limit: int) -> str:
    """The 413's message: most often a question carried too many or too large files."""
    return (
        f"the request body is over {limit:,} bytes, the relay's limit: attach fewer or "
        f"smaller files, or start the relay with a larger --max-body"
    )


async def read_json_body(
    request: Request,
    limit: int,
    headers: dict[str, str] | None = None,
    allow_empty: bool = False,
    *,
    idle_s: float = 10.0,
    total_s: float = 30.0,
    max_depth: int = MAX_DEPTH,
) -> tuple[bytes, dict[str, Any]] | Response:
    """The request body (at most ``limit`` bytes, read within ``total_s`` with no gap over
    ``idle_s``) and its JSON object, or the error response to send: 413 past the limit
    (stopping the read there), 408 when too slow, 400 when it is not one JSON object."""
    parts: list[bytes] = []
    size = 0
    deadline = time.monotonic() + total_s
    it = request.stream().__aiter__()
    try:
        while True:
            wait = min(idle_s, deadline - time.monotonic())
            if wait <= 0:
                raise TimeoutError
            try:
                part = await asyncio.wait_for(it.__anext__(), wait)
            except StopAsyncIteration:
                break
            parts.append(part)
            size += len(part)
            if size > limit:
                return json_error(413, "request_too_large", too_large(limit), headers)
    except TimeoutError:
        return json_error(
            408, "request_timeout", "the request body did not arrive in time", headers
        )
    except ClientDisconnect:
        return json_error(400, "client_disconnected", "the client went away", headers)
    raw = b"".join(parts)
    try:
        obj = loads_strict(raw or (b"{}" if allow_empty else b""), max_depth)
    except BodyError as exc:
        return json_error(exc.status, exc.kind, str(exc), headers)
    if not isinstance(obj, dict):
        return json_error(400, "invalid_json", "the request body must be a JSON object", headers)
    return raw, obj
