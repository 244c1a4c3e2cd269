"""Chat events: the one vocabulary every provider's stream is translated into.

One type per concept, the same for every provider, so a UI (or a script) handles text,
reasoning, tool calls, usage and the end of an answer once. All are frozen and small.

The contract for a UI (``ChatStream`` keeps the same things accumulated for it):

* **Text** is the answer. Concatenating every ``TextDelta.text`` gives ``ChatStream.text``.
* **Reasoning** is never answer text. Concatenating every ``ReasoningDelta.text`` gives
  ``ChatStream.reasoning``, exactly (OpenAI Responses summary parts arrive separated by a
  ``"\n\n"`` delta, as OpenAI's own UI shows them). ``index`` says which reasoning block a
  delta belongs to (Anthropic's content block, a Responses output item); the blocks, with what
  a later turn must send back, are ``ChatStream.reasoning_blocks`` (:class:`ReasoningBlock`).
  Two kinds of reasoning delta carry no text: a ``signature`` (Anthropic signs each thinking
  block; sent back with it) and ``redacted=True``: the provider hid this block's reasoning
  (Anthropic ``redacted_thinking``, an OpenAI reasoning item that is encrypted or has no
  summary). ``data`` then holds its opaque form (possibly empty): show "reasoning hidden by
  the provider", never ``data``.
* **Tool calls** arrive as ``ToolCallDelta`` fragments: the first of a call usually names
  it (``id``, ``name``); ``arguments`` are fragments of one JSON text to concatenate per
  ``index`` (a JSON value only once complete). Several calls in one answer (parallel calls)
  have different indexes; ``ChatStream.tool_calls`` gives each whole (:class:`ToolCall`), in
  the order they began. pysse runs no tool.
* **Citations** (:class:`Citation`): a source the provider says the answer draws on (a web
  search result, a document): its URL, title and the cited span. ``ChatStream.citations``
  keeps them once each, in the order they came. The URL is the provider's, unchecked: a UI
  links only ``http(s)`` ones (:attr:`Citation.linkable`).
* **Usage**, then exactly one **Finish** (after a **ProviderError** when there was one).

Reasoning and tool calls never change ``text``, and a dead connection is never "done".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import urlsplit

from .jsonsafe import loads_bounded

__all__ = [
    "ChatEvent",
    "Citation",
    "Finish",
    "Outcome",
    "ProviderError",
    "ReasoningBlock",
    "ReasoningDelta",
    "TextDelta",
    "ToolCall",
    "ToolCallDelta",
    "Usage",
    "event_to_dict",
    "sources",
]


class Outcome(StrEnum):
    """How an answer ended. A str enum so it compares equal to its plain value."""

    COMPLETED = "completed"  # the provider's own terminal signal arrived
    TRUNCATED = "truncated"  # the bytes stopped before that signal: a dead connection
    ERROR = "error"  # the provider said so, or sent something unreadable
    ABORTED = "aborted"  # the user pressed Stop

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the answer's text, to append as it is."""

    text: str
    index: int = 0  # content block / choice / output item it belongs to


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of the model's reasoning (thinking, reasoning summary): not answer text.

    ``index``: the reasoning block it belongs to. ``signature``: the block's signature
    (Anthropic sends it whole, in one delta with no text, before the block ends; a later turn
    sends it back with the block's text). ``redacted``: the provider hid this block's
    reasoning; ``data`` is its opaque form (Anthropic ``redacted_thinking.data``, OpenAI
    ``encrypted_content``; may be empty), to send back, never to show."""

    text: str
    index: int = 0
    signature: str = ""
    redacted: bool = False
    data: str = ""

    @property
    def empty(self) -> bool:
        """True if it carries nothing at all (no text, signature or redaction)."""
        return not (self.text or self.signature or self.redacted)


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A fragment of a tool (function) call. ``arguments`` is a fragment of a JSON string;
    concatenate all fragments with the same ``index`` to get the call's arguments."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclass(frozen=True, slots=True)
class ReasoningBlock:
    """One block of reasoning, accumulated (``ChatStream.reasoning_blocks``): what a UI shows
    and what a later turn sends back (Anthropic, with thinking on, needs each block's
    ``text`` with its ``signature``, and a redacted block's ``data``, before the answer)."""

    index: int
    text: str = ""
    signature: str = ""
    redacted: bool = False
    data: str = ""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call, accumulated (``ChatStream.tool_calls``): ``arguments`` is the
    concatenated JSON text as it arrived (``parsed_arguments`` reads it once complete)."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""

    def parsed_arguments(self) -> object:
        """The arguments as a JSON value; a ``ValueError`` while they are incomplete or not
        JSON, or nested too deep to parse safely (the model's output is untrusted: a UI shows
        the raw text then). No arguments at all read as ``{}``."""
        if not self.arguments.strip():
            return {}
        return loads_bounded(self.arguments)


@dataclass(frozen=True, slots=True)
class Citation:
    """A source the answer cites: ``url`` and ``title`` as the provider gave them, ``text``
    the cited span (the answer's words, or the source's quoted words: Anthropic's
    ``cited_text``), and where the answer's words are when the provider says (``start`` and
    ``end``, character offsets into the text; Gemini counts bytes, kept as given)."""

    url: str
    title: str = ""
    text: str = ""
    start: int | None = None
    end: int | None = None

    @property
    def linkable(self) -> bool:
        """True if ``url`` is an http(s) link (the only kind a page may link: model output
        is untrusted, and a ``javascript:`` URL would run)."""
        head = self.url.strip()[:8].lower()
        return head.startswith(("http://", "https://"))

    @property
    def host(self) -> str:
        """The link's host name ("" if it has none): what a page shows beside the title, so
        a reader sees where a link goes whatever its title claims."""
        try:
            return urlsplit(self.url.strip()).hostname or ""
        except ValueError:  # a malformed [IPv6] part
            return ""


def sources(citations: Iterable[Citation], limit: int = 100) -> tuple[Citation, ...]:
    """The list of sources a page shows under an answer: the ``linkable`` citations with a
    host, each URL once (its first citation; a later one's title when the first had none),
    at most ``limit``. Every other URL (``javascript:``, ``data:``, a document's none) is
    left out, whatever the provider sent."""
    found: dict[str, Citation] = {}
    for c in citations:
        url = c.url.strip()
        if not (c.linkable and c.host):
            continue
        first = found.get(url)
        if first is None and len(found) < limit:
            found[url] = Citation(url, c.title, c.text, c.start, c.end)
        elif first is not None and not first.title and c.title:
            found[url] = Citation(url, c.title, first.text, first.start, first.end)
    return tuple(found.values())


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts as the provider reported them (either may be unknown)."""

    input_tokens: int | None = None
    output_tokens: int | None = None

    @property
    def total_tokens(self) -> int | None:
        if self.input_tokens is None and self.output_tokens is None:
            return None
        return (self.input_tokens or 0) + (self.output_tokens or 0)


@dataclass(frozen=True, slots=True)
class Finish:
    """The answer ended. ``outcome`` is completed, truncated, error or aborted; ``reason`` is
    the provider's own word ("stop", "end_turn", "length", "STOP", ...) when it sent one, and
    ``detail`` a plain sentence for people (why it was judged truncated, for example)."""

    outcome: Outcome
    reason: str | None = None
    detail: str = ""


@dataclass(frozen=True, slots=True)
class ProviderError:
    """The provider (or the bytes) reported an error. ``kind`` is the provider's error type
    (``overloaded_error``, ``rate_limit_exceeded``...) or one of pysse's own: ``malformed``
    (a payload that is not JSON), ``protocol`` (bytes that are not an event stream)."""

    kind: str
    message: str
    status: int | None = None
    raw: str = ""


ChatEvent = TextDelta | ReasoningDelta | ToolCallDelta | Citation | Usage | Finish | ProviderError


_TYPE_NAMES: dict[type, str] = {
    TextDelta: "text",
    ReasoningDelta: "reasoning",
    ToolCallDelta: "tool_call",
    Citation: "citation",
    Usage: "usage",
    Finish: "finish",
    ProviderError: "error",
}


def event_to_dict(ev: ChatEvent) -> dict[str, object]:
    """A JSON-ready dict with a ``type`` key, for logs, the CLI and the inspector."""
    out: dict[str, object] = {"type": _TYPE_NAMES[type(ev)]}
    for name in ev.__slots__:
        value = getattr(ev, name)
        out[name] = str(value) if isinstance(value, Outcome) else value
    return out
