"""What every provider format shares: the decoder base class, the ``Provider`` record that puts
one format's knowledge in one place, JSON helpers, and the generic parts of the encoder.

A provider format is one module in this package that builds one :class:`Provider`: how to
decode its stream (a :class:`Decoder` subclass), how to recognise it (``sniff``), how to ask
for a stream (``build_body``, ``endpoint``, ``auth_headers``, ``upstream_url``) and the
wire details a writer needs (``eol``, ``encode_http_error``). ``ChatStream`` decides how an
answer ends; a decoder only ever returns a ``Finish`` for its format's own terminal signal,
so no decoder can call a dead connection "done".

Writing a whole answer is one layer up, in ``pysse.providers.encoders`` (the demo model and
the testing kit use it; ``encoder_for(provider)`` is a format's writer). The record never
names it: the encoders stand on this module, and the page, which only reads streams, never
loads them (build.py ``BROWSER_EXCLUDE``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from http import HTTPStatus
from typing import Any, ClassVar
from urllib.parse import quote

from ..events import ChatEvent, ProviderError, ReasoningBlock
from ..jsonsafe import loads_bounded
from ..sse import SSEEvent
from .attachments import Attachment, content_parts

__all__ = [
    "CONTINUE_INSTRUCTION",
    "JSON",
    "BodyOptions",
    "Decoder",
    "Message",
    "Provider",
    "Turn",
    "as_dict",
    "as_int",
    "as_list",
    "as_str",
    "error_from_payload",
    "error_message",
    "http_error_message",
    "role_and_text",
    "sse_event",
    "user_content",
    "valid_model_name",
]

JSON = dict[str, Any]
MAX_MODEL_CHARS = 200  # a model's name as a provider reports it, shown under an answer
Message = tuple[str, str]  # (role: "user" | "assistant", text)


@dataclass(frozen=True)
class Turn:
    """A message in the richer form, beside ``(role, text)``: an assistant answer with its
    reasoning blocks (``ChatStream.reasoning_blocks``). Anthropic, when thinking is on
    (``BodyOptions.thinking``), needs them back before the text: each thinking block's text
    with its signature, each redacted block's data. The other formats drop reasoning. Tool
    calls are never sent back (pysse runs no tool, so there is no result to pair them
    with)."""

    role: str  # "user" | "assistant"
    text: str
    reasoning: tuple[ReasoningBlock, ...] = ()
    attachments: tuple[Attachment, ...] = ()  # a user's files (each format's parts: attachments.py)


def role_and_text(message: Message | Turn) -> tuple[str, str]:
    """Either form as ``(role, text)``."""
    return (message.role, message.text) if isinstance(message, Turn) else message


def user_content(fmt: str, message: Message | Turn) -> str | list[JSON]:
    """A message's ``content`` in ``fmt``: its text, or, where a user attached files, the
    format's list of parts (text first, then each file's own shape)."""
    role, text = role_and_text(message)
    if isinstance(message, Turn) and message.attachments and role == "user":
        return content_parts(fmt, text, message.attachments)
    return text


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


def error_message(body: str, limit: int = 300, content_type: str = "") -> str:
    """The message in an error response body, whatever sent it, never raw markup: the
    ``error.message`` of a JSON error (OpenAI, Anthropic, Gemini, pysse's relay), a bare
    ``error`` string or ``message``; an HTML page's title or first heading; else the body's
    text with its whitespace collapsed. Cut to ``limit`` characters."""
    try:
        obj = loads_bounded(body)
    except ValueError:  # not JSON, or nested too deep to parse safely
        obj = None
    if isinstance(obj, dict):
        err = obj.get("error")
        if isinstance(err, dict) and err.get("message"):
            return _clip(str(err["message"]), limit)
        if isinstance(err, str) and err:
            return _clip(err, limit)
        if obj.get("message"):
            return _clip(str(obj["message"]), limit)
    if "html" in content_type.lower() or _looks_like_html(body):
        return _clip(_html_summary(body), limit)
    return _clip(body, limit)


def http_error_message(status: int, body: str = "", content_type: str = "") -> str:
    """``HTTP 401 Unauthorized: Invalid API key`` (status, its reason phrase, and the body's
    message as ``error_message`` finds it): one line for people, never raw markup."""
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = ""
    head = f"HTTP {status} {phrase}".rstrip()
    detail = error_message(body, 300, content_type)
    if detail and detail.lower() != phrase.lower():
        return f"{head}: {detail}"
    return head


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def _looks_like_html(body: str) -> bool:
    head = body.lstrip()[:200].lower()
    return head.startswith(("<!doctype html", "<html", "<head", "<body", "<title", "<h1"))


class _Summary(HTMLParser):
    """Collects an HTML page's <title>, first <h1>/<h2> and visible text (scripts and
    styles skipped)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.title: list[str] = []
        self.heading: list[str] = []
        self.text: list[str] = []
        self.headings_seen = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("h1", "h2"):
            self.headings_seen += 1
        self.stack.append(tag)
        self.text.append(" ")  # block boundaries separate words

    def handle_endtag(self, tag: str) -> None:
        self.text.append(" ")
        if tag in self.stack:
            while self.stack and self.stack.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        inside = set(self.stack)
        if inside & {"script", "style", "noscript"}:
            return
        if "title" in inside:
            self.title.append(data)
        elif inside & {"h1", "h2"} and self.headings_seen == 1:
            self.heading.append(data)
        else:
            self.text.append(data)


def _html_summary(body: str) -> str:
    parser = _Summary()
    try:
        parser.feed(body)
        parser.close()
    except Exception:  # html.parser is lenient; never let a page break an error message
        return "an HTML page"
    title = " ".join("".join(parser.title).split())
    heading = " ".join("".join(parser.heading).split())
    text = " ".join("".join(parser.text).split())
    parts = [title] if title else []
    if heading and heading.lower() not in title.lower():
        parts.append(heading)
    if text and len(" ".join(parts)) < 40:  # a generic title: add the first words of text
        parts.append(_clip(text, 100))
    return " — ".join(parts) if parts else "an HTML page"


# A model name that may become part of a URL path: letters, digits, dot, dash, underscore,
# starting with a letter or digit (so never "." or ".."), at most 128 characters.
_MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def valid_model_name(model: str) -> bool:
    """True if ``model`` may be put in a URL path (Gemini's ``models/{model}:method``)."""
    return _MODEL_NAME.fullmatch(model) is not None


class Decoder:
    """Translate one provider's payloads into chat events; subclasses keep the state their
    format needs (one instance per answer)."""

    terminal_signal: ClassVar[str] = ""  # for "truncated: the connection closed before ..."
    # Where the format's payloads name the model that writes the answer (its first mention
    # counts): a relay may route a request to another model than the one asked for.
    model_path: ClassVar[tuple[str, ...]] = ()
    reason: str | None = None  # the provider's finish reason, once it said one
    model: str | None = None  # the model the provider says writes the answer, once it said

    def note_model(self, obj: JSON) -> None:
        """Keep the model ``obj`` names at ``model_path``, if none was named before (a
        string, bounded: it is shown to people)."""
        if self.model is not None or not self.model_path:
            return
        value: object = obj
        for key in self.model_path:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, str) and value.strip():
            self.model = " ".join(value.split())[:MAX_MODEL_CHARS]

    def handle(self, ev: SSEEvent, obj: JSON) -> list[ChatEvent]:
        raise NotImplementedError

    def handle_non_json(self, ev: SSEEvent) -> list[ChatEvent] | None:
        """A payload that is not JSON: return events if the format expects it, else None."""
        return None


# What Continue asks a format without prefill (the demo model recognises it, too).
CONTINUE_INSTRUCTION = (
    "Your previous answer was cut off. Continue it exactly where it stopped: do not repeat "
    "anything, do not add a preamble or a summary, start with the very next characters."
)


@dataclass(frozen=True)
class BodyOptions:
    """What the page lets a user choose about a request, whatever the format.

    ``thinking``: a reasoning budget in tokens; 0 asks for nothing (the model's default).
    Above 0, Anthropic gets ``thinking`` with that budget (it must stay below
    ``max_tokens``) and its earlier thinking blocks back, Gemini
    ``thinkingConfig.includeThoughts`` with it, OpenAI Responses a reasoning summary
    (``reasoning.summary: auto``); Chat Completions has no standard field for it."""

    model: str = ""
    system: str = ""
    max_tokens: int = 2048
    thinking: int = 0


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
    body, from ``(role, text)`` messages or :class:`Turn`), ``endpoint`` (the path under an
    upstream's base URL), ``auth_headers`` (how the key travels). Writing (demo model,
    testing kit): ``eol`` the line ends of its events, ``encode_http_error`` the JSON body the
    provider sends with an HTTP error status; the events of a whole answer come from its
    encoder, ``pysse.providers.encoders.encoder_for(provider)``.
    """

    name: str
    label: str  # for people: the page's Format menu
    decoder: type[Decoder]
    sniff: Callable[[SSEEvent, JSON | None], bool]
    build_body: Callable[[Sequence[Message | Turn], BodyOptions], JSON]
    endpoint: str
    auth_headers: Callable[[str], dict[str, str]]
    encode_http_error: Callable[[int, str], bytes]  # an error response's body: (status, message)
    demo_path: str  # where the built-in demo relay serves this format
    eol: str = "\n"
    default_model: str = ""
    model_in_path: bool = False  # the model is part of the endpoint path (Gemini)
    # The format continues a final assistant message (a "prefill"): Continue sends the partial
    # answer as the last message. Other formats get CONTINUE_INSTRUCTION after it instead.
    prefill: bool = False

    def continue_messages(self, history: Sequence[Message], partial: str) -> list[Message]:
        """The messages that ask for the rest of ``partial``, an answer to ``history`` that
        was cut off: this format's prefill, or the partial answer and an instruction. The
        partial text is sent without trailing whitespace (Anthropic refuses a final
        assistant message that ends with whitespace; the page joins the pieces again)."""
        text = partial.rstrip()
        if self.prefill:
            return [*history, ("assistant", text)]
        return [*history, ("assistant", text), ("user", CONTINUE_INSTRUCTION)]

    def upstream_url(self, base: str, model: str) -> str:
        """The URL to POST to under an upstream's base URL (used as is if it already names
        the endpoint). When the model is part of the path it must be a plain model name
        (``valid_model_name``; a leading ``models/`` is accepted): anything else is a
        ``ValueError``, so a client can never shape the path or the query."""
        base = base.rstrip("/")
        if self.model_in_path:
            marker = self.endpoint.split("{model}", 1)[1].split("?", 1)[0]
            if marker in base:
                return base
            name = (model or self.default_model).removeprefix("models/")
            if not valid_model_name(name):
                raise ValueError(
                    f"invalid model name {name[:80]!r}: use letters, digits, '.', '-' and '_'"
                )
            return base + self.endpoint.format(model=quote(name, safe=""))
        return base if base.endswith(self.endpoint) else base + self.endpoint
