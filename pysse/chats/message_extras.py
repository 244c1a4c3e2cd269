"""What an answer keeps beside its text (issue #23): its reasoning blocks (text, Anthropic's
signature, a hidden block's opaque data) and its tool calls (id, name, arguments), as stored
in IndexedDB and in an exported file, and read back from either.

Everything read back is checked as untrusted: an imported file may hold anything, so a value
of the wrong type is an ``ImportError_`` naming the field, and the number of blocks and calls
is capped. Their text is kept exactly; the page shows it only as sanitised markdown or as
text (model output), never as HTML. An old file without them reads as an answer with none.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..events import ReasoningBlock, ToolCall

__all__ = [
    "MAX_BLOCKS",
    "ExtrasError",
    "join_tool_calls",
    "reasoning_from_json",
    "reasoning_text",
    "reasoning_to_json",
    "tool_calls_from_json",
    "tool_calls_to_json",
]

MAX_BLOCKS = 1000  # reasoning blocks, and tool calls, per answer: more is not a real answer


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


def _items(value: Any, what: str) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > MAX_BLOCKS:
        raise ExtrasError(f"{what} must be a list of at most {MAX_BLOCKS}")
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise ExtrasError(f"{what} item {i} is not an object")
    return value


def _str(value: Any, what: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ExtrasError(f"{what} must be text, not {type(value).__name__}")
    return value


def _index(value: Any, default: int) -> int:
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 31
    return value if ok else default
