"""What every provider format shares: the decoder base class, the ``Provider`` record that puts
one format's knowledge in one place, JSON helpers, and the generic parts of the encoder.

A provider format is one module in this package that builds one :class:`Provider`: how to
decode its stream (a :class:`Decoder` subclass), how to recognise it (``sniff``), how to ask
for a stream (``build_body``, ``endpoint``, ``auth_headers``, ``upstream_url``) and how to write
one (the ``encode_*`` functions the demo model and the testing kit use). ``ChatStream`` decides
how an answer ends; a decoder only ever returns a ``Finish`` for its format's own terminal
signal, so no decoder can call a dead connection "done".
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ..events import ChatEvent, ProviderError
from ..jsonsafe import loads_bounded
from ..sse import SSEEvent

__all__ = [
    "JSON",
    "BodyOptions",
    "Decoder",
    "Message",
    "Provider",
    "as_dict",
    "as_int",
    "as_list",
    "as_str",
    "error_from_payload",
    "error_message",
    "sse_event",
]

JSON = dict[str, Any]
Message = tuple[str, str]  # (role: "user" | "assistant", text)


def as_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def as_dict(value: object) -> JSON:
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def as_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def error_from_payload(obj: JSON, raw: str) -> ProviderError | None:
    """A ``{"error": {...}}`` payload (any provider) as a ProviderError, else None."""
    err = obj.get("error")
    if isinstance(err, str):
        return ProviderError(kind="error", message=err, raw=raw)
    if not isinstance(err, dict):
        return None
    kind = err.get("type") or err.get("status") or err.get("code") or "error"
    message = err.get("message") or json.dumps(err, ensure_ascii=False)[:500]
    status = as_int(err.get("code"))
    return ProviderError(kind=str(kind), message=str(message), status=status, raw=raw)


def error_message(body: str, limit: int = 300) -> str:
    """The message in an error response body, whatever the provider or relay: the
    ``error.message`` of a JSON error (OpenAI, Anthropic, Gemini, pysse's relay), a bare
    ``error`` string or ``message``, else the body's text, cut to ``limit`` characters."""
    try:
        obj = loads_bounded(body)
    except ValueError:  # not JSON, or nested too deep to parse safely
        obj = None
    if isinstance(obj, dict):
        err = obj.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:limit]
        if isinstance(err, str) and err:
            return err[:limit]
        if obj.get("message"):
            return str(obj["message"])[:limit]
    return body.strip()[:limit]


class Decoder:
    """Translate one provider's payloads into chat events; subclasses keep the state their
    format needs (one instance per answer)."""

    terminal_signal: ClassVar[str] = ""  # for "truncated: the connection closed before ..."
    reason: str | None = None  # the provider's finish reason, once it said one

    def handle(self, ev: SSEEvent, obj: JSON) -> list[ChatEvent]:
        raise NotImplementedError

    def handle_non_json(self, ev: SSEEvent) -> list[ChatEvent] | None:
        """A payload that is not JSON: return events if the format expects it, else None."""
        return None


@dataclass(frozen=True)
class BodyOptions:
    """What the page lets a user choose about a request, whatever the format."""

    model: str = ""
    system: str = ""
    max_tokens: int = 2048


def sse_event(data: Any, event: str | None = None, eol: str = "\n") -> bytes:
    """One SSE event on the wire: an optional ``event:`` line, one ``data:`` line (JSON unless
    ``data`` is already a string) and the blank line that dispatches it."""
    body = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    head = f"event: {event}{eol}" if event else ""
    return f"{head}data: {body}{eol}{eol}".encode()


@dataclass(frozen=True)
class Provider:
    """Everything pysse knows about one wire format, in one record.

    Decoding: ``decoder`` (a class, instantiated per answer) and ``sniff`` (does this event
    identify the format? used by ``auto``). Asking: ``build_body`` (the streaming request
    body), ``endpoint`` (the path under an upstream's base URL), ``auth_headers`` (how the key
    travels). Writing (demo model, testing kit): ``encode_start``, ``encode_delta``,
    ``encode_error``, ``encode_end`` give the events of an answer; ``eol`` its line ends;
    ``encode_http_error`` the JSON body the provider sends with an HTTP error status.
    """

    name: str
    label: str  # for people: the page's Format menu
    decoder: type[Decoder]
    sniff: Callable[[SSEEvent, JSON | None], bool]
    build_body: Callable[[Sequence[Message], BodyOptions], JSON]
    endpoint: str
    auth_headers: Callable[[str], dict[str, str]]
    encode_start: Callable[[], list[bytes]]
    encode_delta: Callable[[str], bytes]
    encode_error: Callable[[str], bytes]  # a provider error event with this message
    encode_end: Callable[[str, int], list[bytes]]  # (full text, output tokens)
    encode_http_error: Callable[[int, str], bytes]  # an error response's body: (status, message)
    demo_path: str  # where the built-in demo relay serves this format
    eol: str = "\n"
    default_model: str = ""
    model_in_path: bool = False  # the model is part of the endpoint path (Gemini)

    def upstream_url(self, base: str, model: str) -> str:
        """The URL to POST to under an upstream's base URL (used as is if it already names
        the endpoint). ``model`` must already be validated when ``model_in_path``."""
        base = base.rstrip("/")
        if self.model_in_path:
            marker = self.endpoint.split("{model}", 1)[1].split("?", 1)[0]
            if marker in base:
                return base
            return base + self.endpoint.format(model=model or self.default_model)
        return base if base.endswith(self.endpoint) else base + self.endpoint
