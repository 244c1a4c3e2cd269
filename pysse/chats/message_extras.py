"""What an answer keeps beside its text (issue #23): its reasoning blocks (text, Anthropic's
signature, a hidden block's opaque data), its tool calls (id, name, arguments) and the
sources it cites (issue #43: http(s) URL, title, cited span), as stored in IndexedDB and in an
exported file, and read back from either.

Everything read back is checked as untrusted: an imported file may hold anything, so a value
of the wrong type is an ``ImportError_`` naming the field, and the number of blocks and calls
is capped. A citation is kept only with an http(s) URL, its title and span cut to a few
thousand characters when stored; one read back with another URL, or longer, is refused.
Reasoning and tool-call text is kept exactly; the page shows it only as sanitised markdown
or as text (model output), never as HTML. An old file without them reads as an answer with none.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..events import Citation, ReasoningBlock, ToolCall, sources

__all__ = [
    "MAX_BLOCKS",
    "MAX_CITATIONS",
    "ExtrasError",
    "citations_from_json",
    "citations_to_json",
    "join_tool_calls",
    "kept_citations",
    "reasoning_from_json",
    "reasoning_text",
    "reasoning_to_json",
    "tool_calls_from_json",
    "tool_calls_to_json",
]

MAX_BLOCKS = 1000  # reasoning blocks, and tool calls, per answer: more is not a real answer
MAX_CITATIONS = 100  # sources kept per answer (a page shows each URL once)
MAX_URL, MAX_TITLE, MAX_SPAN = 2048, 500, 2000  # characters of a citation's fields


class ExtrasError(ValueError):
    """A stored or imported reasoning block or tool call that is not one (says which field)."""


def reasoning_text(blocks: tuple[ReasoningBlock, ...]) -> str:
    """The reasoning as shown: every block's text, concatenated exactly (as
    ``ChatStream.reasoning`` is)."""
    return "".join(b.text for b in blocks)


def join_tool_calls(
    earlier: tuple[ToolCall, ...], mine: tuple[ToolCall, ...]
) -> tuple[ToolCall, ...]:
    """A continued answer's tool calls: the earlier pieces', then this piece's, numbered
    after them. Each piece's stream numbers its calls from 0 (OpenAI) or by content block
    (Anthropic), and an index must be unique in a message (a view keys its blocks by it)."""
    if not earlier:
        return mine
    after = max(c.index for c in earlier) + 1
    return earlier + tuple(replace(c, index=after + c.index) for c in mine)


def reasoning_to_json(blocks: tuple[ReasoningBlock, ...]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for b in blocks:
        item: dict[str, Any] = {"index": b.index, "text": b.text}
        if b.signature:
            item["signature"] = b.signature
        if b.redacted:
            item["redacted"] = True
            item["data"] = b.data
        out.append(item)
    return out


def tool_calls_to_json(calls: tuple[ToolCall, ...]) -> list[dict[str, Any]]:
    return [{"index": c.index, "id": c.id, "name": c.name, "arguments": c.arguments} for c in calls]


def reasoning_from_json(value: Any, where: str) -> tuple[ReasoningBlock, ...]:
    """``reasoning_to_json``'s output back; None or missing (an old file) is no reasoning."""
    out: list[ReasoningBlock] = []
    for i, item in enumerate(_items(value, f"{where} 'reasoning'")):
        at = f"{where} reasoning block {i}"
        out.append(
            ReasoningBlock(
                index=_index(item.get("index"), i),
                text=_str(item.get("text"), f"{at} 'text'"),
                signature=_str(item.get("signature"), f"{at} 'signature'"),
                redacted=item.get("redacted") is True,
                data=_str(item.get("data"), f"{at} 'data'"),
            )
        )
    return tuple(out)


def tool_calls_from_json(value: Any, where: str) -> tuple[ToolCall, ...]:
    """``tool_calls_to_json``'s output back; None or missing (an old file) is no call."""
    out: list[ToolCall] = []
    seen: set[int] = set()
    for i, item in enumerate(_items(value, f"{where} 'tool_calls'")):
        at = f"{where} tool call {i}"
        index = _index(item.get("index"), i)
        # A view keys its blocks by index: a repeat would hide a call. It is numbered after
        # the others instead (a continued answer saved before join_tool_calls has them).
        if index in seen:
            index = max(seen) + 1
        seen.add(index)
        out.append(
            ToolCall(
                index=index,
                id=_str(item.get("id"), f"{at} 'id'") or None,
                name=_str(item.get("name"), f"{at} 'name'") or None,
                arguments=_str(item.get("arguments"), f"{at} 'arguments'"),
            )
        )
    return tuple(out)


def kept_citations(citations: tuple[Citation, ...]) -> tuple[Citation, ...]:
    """What an answer stores of its citations: each http(s) source once (``sources``), at
    most ``MAX_CITATIONS``, a title or span cut to its cap (a URL longer than ``MAX_URL`` is
    dropped: cut, it would lead elsewhere)."""
    short = (c for c in citations if len(c.url.strip()) <= MAX_URL)
    return tuple(
        Citation(c.url, c.title[:MAX_TITLE], c.text[:MAX_SPAN], c.start, c.end)
        for c in sources(short, MAX_CITATIONS)
    )


def citations_to_json(citations: tuple[Citation, ...]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for c in citations:
        item: dict[str, Any] = {"url": c.url, "title": c.title}
        if c.text:
            item["text"] = c.text
        if c.start is not None and c.end is not None:
            item |= {"start": c.start, "end": c.end}
        out.append(item)
    return out


def citations_from_json(value: Any, where: str) -> tuple[Citation, ...]:
    """``citations_to_json``'s output back; None or missing (an old file) is no source. A
    URL that is not http(s) (a ``javascript:`` link a file may hold) or a field over its cap
    is an ``ExtrasError``: the page never shows it."""
    out: list[Citation] = []
    items = _items(value, f"{where} 'citations'")
    if len(items) > MAX_CITATIONS:
        raise ExtrasError(f"{where} 'citations' must be a list of at most {MAX_CITATIONS}")
    for i, item in enumerate(items):
        at = f"{where} citation {i}"
        url = _str(item.get("url"), f"{at} 'url'", MAX_URL)
        cite = Citation(
            url,
            _str(item.get("title"), f"{at} 'title'", MAX_TITLE),
            _str(item.get("text"), f"{at} 'text'", MAX_SPAN),
        )
        if not (cite.linkable and cite.host):
            raise ExtrasError(f"{at} 'url' must be an http(s) link, not {url[:40]!r}")
        start, end = _index(item.get("start"), -1), _index(item.get("end"), -1)
        if 0 <= start <= end:
            cite = Citation(cite.url, cite.title, cite.text, start, end)
        out.append(cite)
    return tuple(out)


def _items(value: Any, what: str) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > MAX_BLOCKS:
        raise ExtrasError(f"{what} must be a list of at most {MAX_BLOCKS}")
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise ExtrasError(f"{what} item {i} is not an object")
    return value


def _str(value: Any, what: str, cap: int | None = None) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ExtrasError(f"{what} must be text, not {type(value).__name__}")
    if cap is not None and len(value) > cap:
        raise ExtrasError(f"{what} is longer than {cap:,} characters")
    return value


def _index(value: Any, default: int) -> int:
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 31
    return value if ok else default
