"""What the demo model reads in a request body, whatever its format: the messages as (role,
text), each message's parts as sent (``demo_received`` reads the files), the last question,
and a request to continue a cut-off answer. Apart from ``demo.py``, which plans the answers."""

from __future__ import annotations

from typing import Any

from ..providers import CONTINUE_INSTRUCTION

__all__ = ["continuation", "last_user_text", "message_items", "messages_of"]


def continuation(body: dict[str, Any]) -> tuple[str, str] | None:
    """(the prompt, the partial answer) when the request asks to continue a cut-off answer:
    a final assistant message (a prefill) or ``CONTINUE_INSTRUCTION`` after one; else None."""
    msgs = messages_of(body)
    if msgs and msgs[-1] == ("user", CONTINUE_INSTRUCTION):
        msgs = msgs[:-1]
    if len(msgs) >= 2 and msgs[-1][0] == "assistant" and msgs[-2][0] == "user":
        return msgs[-2][1], msgs[-1][1]
    return None


def messages_of(body: dict[str, Any]) -> list[tuple[str, str]]:
    """The (role, text) messages of a request in any of the four formats. A ``ValueError``
    for content parts whose text is not a string (as a real provider would answer 400)."""

    def text_of(content: Any) -> str:
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            texts = [p.get("text", "") if isinstance(p, dict) else p for p in content]
            if not all(isinstance(t, str) for t in texts):
                raise ValueError("a content part's text must be a string")
            return "\n\n".join(t for t in texts if t)  # (parts: blocks apart, as a model reads)
        return ""

    def role(r: Any) -> str:
        return "assistant" if r in ("assistant", "model") else "user" if r in (None, "user") else ""

    return [(role(r), text_of(c)) for r, c in message_items(body) if role(r)]


def message_items(body: dict[str, Any]) -> list[tuple[Any, Any]]:
    """Each message of a request in any of the four formats as (its role as sent, its
    content or parts as sent), unchecked: ``messages_of`` reads the texts, the demo relay's
    ``demo_received`` the files."""
    if isinstance(body.get("contents"), list):  # gemini
        return [(c.get("role"), c.get("parts")) for c in body["contents"] if isinstance(c, dict)]
    if isinstance(body.get("messages"), list):  # openai-chat, anthropic
        return [
            (m.get("role") or "", m.get("content")) for m in body["messages"] if isinstance(m, dict)
        ]
    if isinstance(body.get("input"), str):  # openai-responses
        return [("user", body["input"])]
    if isinstance(body.get("input"), list):
        return [(m.get("role"), m.get("content")) for m in body["input"] if isinstance(m, dict)]
    return []


def last_user_text(body: dict[str, Any]) -> str:
    """The last user message of a request in any of the four formats. A ``ValueError`` for
    content parts whose text is not a string (as a real provider would answer 400)."""
    for r, text in reversed(messages_of(body)):
        if r == "user":
            return text
    return ""
